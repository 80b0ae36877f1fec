package explain

import (
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/managed"
)

// Write writes the explanation of r for people to w, measuring ages from
// now. Each section is written only when it applies: the verdict, the
// failing conditions, the deletion, the reconcile policy, the children
// that are not ready, the external resource, the events, the debug page's
// passes and the notes.
func (r *Report) Write(w io.Writer, now time.Time) error {
	p := &printer{now: now}
	r.writeVerdict(p)
	r.writeFailing(p)
	r.writeDeletion(p)
	r.writePolicy(p)
	r.writeChildren(p)
	r.writeExternal(p)
	r.writeEvents(p)
	r.writeDebug(p)
	for _, n := range r.Notes {
		p.line(0, "Note: %s", n)
	}
	_, err := io.WriteString(w, p.b.String())
	return err
}

// printer collects the lines of an explanation.
type printer struct {
	b   strings.Builder
	now time.Time
}

// line writes one line, indented by two spaces per level.
func (p *printer) line(level int, format string, args ...any) {
	p.b.WriteString(strings.Repeat("  ", level))
	fmt.Fprintf(&p.b, format, args...)
	p.b.WriteByte('\n')
}

// ago says how long before now t was: "5s", "3m10s".
func (p *printer) ago(t time.Time) string {
	return duration.HumanDuration(p.now.Sub(t))
}

// condition writes c in one indented line: "Ready: False (ZeroDivisor)
// for 5s: message", with the generation it describes when that is older
// than generation.
func (p *printer) condition(c *metav1.Condition, generation int64) {
	head := fmt.Sprintf("%s: %s", c.Type, c.Status)
	if c.Reason != "" {
		head += " (" + c.Reason + ")"
	}
	if !c.LastTransitionTime.IsZero() {
		head += " for " + p.ago(c.LastTransitionTime.Time)
	}
	if c.ObservedGeneration != 0 && c.ObservedGeneration < generation {
		head += fmt.Sprintf(", of generation %d", c.ObservedGeneration)
	}
	if m := oneLine(c.Message); m != "" {
		head += ": " + m
	}
	p.line(1, "%s", head)
}

// object names the object: "Simple demo/div".
func (r *Report) object() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

func (r *Report) writeVerdict(p *printer) {
	verdict := "not Ready"
	if r.IsReady() {
		verdict = "Ready"
	}
	if r.Deletion != nil {
		verdict += ", being deleted"
	}
	p.line(0, "%s: %s", r.object(), verdict)
	if r.Ready == nil {
		p.line(1, "No Ready condition: the operator has not reconciled the object yet, or does not run.")
	} else {
		p.condition(r.Ready, 0)
	}
	switch {
	case r.ObservedGeneration == 0:
		p.line(1, "Generation %d: the status does not say which generation it describes.", r.Generation)
	case r.Current():
		p.line(1, "Generation %d: the status describes it.", r.Generation)
	default:
		p.line(1, "Generation %d: the status describes generation %d; the operator has not caught up with the latest change.",
			r.Generation, r.ObservedGeneration)
	}
	for _, c := range []*metav1.Condition{r.Reconciling, r.Stalled} {
		if c != nil {
			p.condition(c, r.Generation)
		}
	}
	if r.ReconciledBy != "" {
		p.line(1, "Last reconciled by (controller=build): %s (%s).", r.ReconciledBy, bosun.AnnotationReconciledBy)
	}
}

func (r *Report) writeFailing(p *printer) {
	if len(r.Failing) == 0 {
		return
	}
	p.line(0, "Failing conditions, worst first:")
	for i := range r.Failing {
		p.condition(&r.Failing[i], r.Generation)
	}
}

func (r *Report) writeDeletion(p *printer) {
	d := r.Deletion
	if d == nil {
		return
	}
	finalizers := "none"
	if len(d.Finalizers) > 0 {
		finalizers = strings.Join(d.Finalizers, ", ")
	}
	p.line(0, "Deletion asked %s ago (%s); finalizers: %s", p.ago(d.Requested), d.Requested.UTC().Format(time.RFC3339), finalizers)
	if d.Blocked != nil {
		p.condition(d.Blocked, r.Generation)
	}
	switch {
	case d.Release != "":
		p.line(1, "%s=%s is set: the engine acts on it at its next pass.", bosun.AnnotationReleaseFinalizer, d.Release)
	case d.Blocked != nil && d.Blocked.Status == metav1.ConditionTrue && d.Blocked.Reason == string(conditions.ReasonDeletionHeld):
		p.line(1, "The mass-deletion breaker holds the cleanup: nothing is deleted until it is let go on. If the deletion is meant:")
		target := r.target()
		p.line(2, "kubectl annotate %s %s=true   # let the cleanup go on (or run the operator with --allow-mass-deletion)", target, bosun.AnnotationAllowMassDeletion)
		p.line(2, "kubectl annotate %s %s=orphan   # release without cleanup, keeping what it would delete", target, bosun.AnnotationReleaseFinalizer)
	case d.Blocked != nil && d.Blocked.Status == metav1.ConditionTrue:
		p.line(1, "The engine keeps retrying and never releases its finalizer on its own. Once what blocks is understood, release it on purpose:")
		target := r.target()
		p.line(2, "kubectl annotate %s %s=true     # clean up once more, then release whatever the outcome", target, bosun.AnnotationReleaseFinalizer)
		p.line(2, "kubectl annotate %s %s=orphan   # release without cleanup, leaving what it would delete", target, bosun.AnnotationReleaseFinalizer)
	}
}

// target is the object as kubectl names it: its resource, its name and
// its namespace.
func (r *Report) target() string {
	target := r.Resource + " " + r.Name
	if r.Namespace != "" {
		target += " -n " + r.Namespace
	}
	return target
}

func (r *Report) writePolicy(p *printer) {
	pol := r.Policy
	if pol.Value == "" {
		return
	}
	switch {
	case pol.Source == PolicyFromObject:
		p.line(0, "Reconcile policy: %s, set on the object (%s).", pol.Value, bosun.AnnotationReconcilePolicy)
	case pol.Source == PolicyFromNamespace:
		p.line(0, "Reconcile policy: %s, from namespace %s (%s).", pol.Value, pol.Namespace, bosun.AnnotationReconcilePolicy)
	case pol.Namespace != "":
		p.line(0, "Reconcile policy: %s, the default (no %s on the object or on namespace %s).", pol.Value, bosun.AnnotationReconcilePolicy, pol.Namespace)
	default:
		p.line(0, "Reconcile policy: %s, the default (no %s on the object).", pol.Value, bosun.AnnotationReconcilePolicy)
	}
	if !pol.Known() {
		p.line(1, "%q is not a reconcile policy (%s, %s or %s): the engine reports it in Ready and does nothing else until it is fixed.",
			pol.Value, bosun.PolicyManage, bosun.PolicySkip, bosun.PolicyDetachOnDelete)
		return
	}
	switch bosun.Policy(strings.ToLower(strings.TrimSpace(pol.Value))) {
	case bosun.PolicySkip:
		p.line(1, "The object is paused: the operator only observes it and writes nothing but its status.")
	case bosun.PolicyDetachOnDelete:
		p.line(1, "When the object is deleted, it is let go without cleanup: what the steps made stays.")
	}
}

func (r *Report) writeChildren(p *printer) {
	c := r.Children
	switch {
	case c.Found == 0:
		return
	case len(c.NotReady) == 0:
		p.line(0, "Children: %d, all ready.", c.Found)
		return
	}
	p.line(0, "Children not ready (%d of %d):", len(c.NotReady), c.Found)
	for _, ch := range c.NotReady {
		name := ch.Name
		if ch.Namespace != "" && ch.Namespace != r.Namespace {
			name = ch.Namespace + "/" + ch.Name
		}
		p.line(1, "%s %s: %s", ch.Kind, name, ch.Status)
		if ch.Pods != "" {
			p.line(2, "%s", ch.Pods)
		}
	}
}

func (r *Report) writeExternal(p *printer) {
	e := r.External
	if e == nil {
		return
	}
	if e.Name == "" {
		p.line(0, "External resource: no name recorded yet (%s).", managed.AnnotationExternalName)
	} else {
		p.line(0, "External resource: %s (%s).", e.Name, managed.AnnotationExternalName)
	}
	for _, c := range []*metav1.Condition{e.Synced, e.Available} {
		if c != nil {
			p.condition(c, r.Generation)
		}
	}
	if !e.CreatePending.IsZero() {
		p.line(1, "A create started %s ago and its outcome is not recorded yet (%s).", p.ago(e.CreatePending), managed.AnnotationCreatePending)
	}
}

func (r *Report) writeEvents(p *printer) {
	if len(r.Events) == 0 {
		return
	}
	p.line(0, "Events, warnings first, newest first:")
	for _, e := range r.Events {
		head := e.Type + " " + e.Reason
		if !e.Time.IsZero() {
			head += " " + p.ago(e.Time) + " ago"
		}
		if e.Count > 1 {
			head += fmt.Sprintf(" (%d times)", e.Count)
		}
		if n := oneLine(e.Note); n != "" {
			head += ": " + n
		}
		p.line(1, "%s", head)
	}
}

func (r *Report) writeDebug(p *printer) {
	d := r.Debug
	switch {
	case d == nil:
		return
	case d.Err != "":
		p.line(0, "Debug page: cannot read %s: %s", d.URL, d.Err)
		return
	case len(d.Reconcilers) == 0:
		listed := "none"
		if len(d.Listed) > 0 {
			listed = strings.Join(d.Listed, ", ")
		}
		p.line(0, "Debug page: no reconciler of %s on %s (it lists: %s).", r.Kind, d.URL, listed)
		return
	}
	for _, rp := range d.Reconcilers {
		if len(rp.Passes) == 0 {
			p.line(0, "Debug page, reconciler %s: no pass over the object recorded.", rp.Name)
			continue
		}
		p.line(0, "Debug page, reconciler %s, last passes, newest first:", rp.Name)
		for _, ps := range rp.Passes {
			p.line(1, "%s ago, %s: %s", p.ago(ps.Start), ps.Trigger, passOutcome(ps))
		}
	}
}

// passOutcome says how a pass ended, naming the step that failed and its
// error, or the step that stopped the pass early without a failure
// (bosun.ErrStop, which a step may wrap to say why).
// A step's error that a composite around it got past (see absorbed) says
// nothing of how the pass ended.
func passOutcome(ps bosun.PassReport) string {
	var failed, stopped []bosun.StepReport
	for i, s := range ps.Steps {
		switch {
		case s.Error == "", absorbed(ps.Steps, i):
		case strings.HasSuffix(s.Error, bosun.ErrStop.Error()):
			stopped = append(stopped, s)
		default:
			failed = append(failed, s)
		}
	}
	if s, ok := innermost(failed); ok {
		return fmt.Sprintf("error in step %s (%s): %s", s.Name, s.Phase, oneLine(s.Error))
	}
	var out string
	switch {
	case ps.Error != "":
		out = "error: " + oneLine(ps.Error)
	case ps.Result.RequeueAfter >= time.Millisecond:
		out = "requeue after " + ps.Result.RequeueAfter.Round(time.Millisecond).String()
	case ps.Result.RequeueAfter > 0:
		out = "requeue at once"
	case ps.Result.Requeue: //nolint:staticcheck // Requeue is deprecated but still honoured by controller-runtime.
		out = "requeue"
	default:
		out = "done"
	}
	if s, ok := innermost(stopped); ok {
		out += fmt.Sprintf("; step %s (%s) stopped the pass", s.Name, s.Phase)
		if why := strings.TrimSuffix(strings.TrimSuffix(s.Error, bosun.ErrStop.Error()), ": "); why != "" {
			out += ": " + oneLine(why)
		}
	}
	return out
}

// absorbed reports whether the error of steps[i] went no further than a
// composite around it: one that ran around it (began no later, ended no
// sooner, and is listed before it) returned no error, or one whose text
// does not hold it, as a Retry whose next try succeeded.
func absorbed(steps []bosun.StepReport, i int) bool {
	s := steps[i]
	end := s.Start.Add(s.Duration)
	for _, o := range steps[:i] {
		if o.Start.After(s.Start) || o.Start.Add(o.Duration).Before(end) {
			continue
		}
		if !strings.Contains(o.Error, s.Error) {
			return true
		}
	}
	return false
}

// innermost returns the first of steps that ran around none of the
// others: of a composite and the step inside it that failed, the one
// inside, which says most.
func innermost(steps []bosun.StepReport) (bosun.StepReport, bool) {
	for i, s := range steps {
		end := s.Start.Add(s.Duration)
		around := false
		for j, o := range steps {
			if i != j && !o.Start.Before(s.Start) && !o.Start.Add(o.Duration).After(end) && (o.Start.After(s.Start) || o.Duration < s.Duration || j > i) {
				around = true
				break
			}
		}
		if !around {
			return s, true
		}
	}
	return bosun.StepReport{}, false
}
