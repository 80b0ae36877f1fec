package explain

import (
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/managed"
)

// MaxEvents is how many events a Report keeps.
const MaxEvents = 5

// The condition types of the managed step (its defaults), and the
// annotations that record the outcome of its last Create.
const (
	typeSynced    = "Synced"
	typeAvailable = "Available"

	annotationCreateSucceeded = "bosun.dev/external-create-succeeded"
	annotationCreateFailed    = "bosun.dev/external-create-failed"
)

// Report is what Gather found out about one object: everything the
// explanation says, read once, so that Write depends on nothing else.
type Report struct {
	// Kind is the object's kind; Resource is its resource and group as
	// kubectl names them ("simples.simple.bosun.dev", "deployments.apps").
	Kind, Resource string
	// Namespace and Name name the object; Namespace is empty for a kind
	// that is not namespaced.
	Namespace, Name string
	// Generation is the object's metadata.generation.
	Generation int64
	// ObservedGeneration is the generation its status describes: the
	// Ready condition's observedGeneration, else status.observedGeneration;
	// zero when neither says.
	ObservedGeneration int64
	// Ready, Reconciling and Stalled are those conditions; nil when the
	// object has none.
	Ready, Reconciling, Stalled *metav1.Condition
	// ReconciledBy is the build of the operator that last reconciled the
	// object (bosun.dev/reconciled-by); empty when none is recorded.
	ReconciledBy string
	// Failing are the object's other conditions that are False or
	// Unknown, worst first: False before Unknown, then in the status's
	// order. DeletionBlocked is under Deletion, and Synced and Available
	// under External when the object has an external resource.
	Failing []metav1.Condition
	// Deletion is set when the object is being deleted.
	Deletion *Deletion
	// Policy is the reconcile policy in force, and where it comes from.
	Policy Policy
	// Children are the object's children that Gather found.
	Children Children
	// External is the external resource of a managed step, when the
	// object has one.
	External *External
	// Events are the latest events about the object, warnings first, then
	// newest first, at most MaxEvents.
	Events []Event
	// Debug is what the debug page says of the object, when it was asked.
	Debug *Debug
	// Notes say, one line each, what could not be read.
	Notes []string
}

// Deletion is a deletion under way.
type Deletion struct {
	// Requested is when it was asked for (metadata.deletionTimestamp).
	Requested time.Time
	// Finalizers are those that hold the object.
	Finalizers []string
	// Blocked is the DeletionBlocked condition; nil when the object has
	// none.
	Blocked *metav1.Condition
	// Release is the value of bosun.dev/release-finalizer on the object;
	// empty when it is not set.
	Release string
}

// PolicySource says where the reconcile policy in force comes from.
type PolicySource string

// The sources of a reconcile policy, in the order the engine looks.
const (
	// PolicyFromObject: the object's own annotation.
	PolicyFromObject PolicySource = "object"
	// PolicyFromNamespace: the annotation of the object's Namespace.
	PolicyFromNamespace PolicySource = "namespace"
	// PolicyFromDefault: neither says; the operator's default.
	PolicyFromDefault PolicySource = "default"
)

// Policy is the reconcile policy in force.
type Policy struct {
	// Value is the annotation's value as written, or "manage" for the
	// default.
	Value string
	// Source is where it comes from.
	Source PolicySource
	// Namespace is the object's Namespace, which was asked; empty for an
	// object that is not namespaced.
	Namespace string
}

// Known reports whether the engine knows the value: it reads it without
// regard to case or surrounding blanks.
func (p Policy) Known() bool {
	switch bosun.Policy(strings.ToLower(strings.TrimSpace(p.Value))) {
	case bosun.PolicyManage, bosun.PolicySkip, bosun.PolicyDetachOnDelete:
		return true
	}
	return false
}

// Children are the children Gather found.
type Children struct {
	// Found is how many it found, ready or not.
	Found int
	// NotReady are those that are not ready, by kind, namespace and name.
	NotReady []Child
}

// Child is a child that is not ready.
type Child struct {
	// Kind, Namespace and Name name it.
	Kind, Namespace, Name string
	// Status says what it waits for: "0/2 replicas ready", "Pending: not
	// scheduled yet".
	Status string
	// Pods sums up the pods of a workload; empty for other kinds.
	Pods string
}

// External is the external resource of a managed step.
type External struct {
	// Name is its name (bosun.dev/external-name); empty when none is
	// recorded yet.
	Name string
	// Synced and Available are the managed step's conditions; nil when
	// the object has none.
	Synced, Available *metav1.Condition
	// CreatePending is when a Create started whose outcome was never
	// recorded; zero when there is none.
	CreatePending time.Time
}

// Event is an event about the object.
type Event struct {
	// Type is Normal or Warning; Reason and Note are as recorded.
	Type, Reason, Note string
	// Time is when it was last seen.
	Time time.Time
	// Count is how many times it was seen.
	Count int32
}

// Debug is what the debug page says of the object.
type Debug struct {
	// URL is the page's address.
	URL string
	// Err says why the page could not be read; empty when it was.
	Err string
	// Reconcilers are the page's reconcilers of the object's kind, each
	// with the object's last passes, newest first.
	Reconcilers []ReconcilerPasses
	// Listed names every reconciler the page lists, when none is of the
	// object's kind.
	Listed []string
}

// ReconcilerPasses are the last passes of one reconciler over the object.
type ReconcilerPasses struct {
	// Name is the reconciler's name.
	Name string
	// Passes are its passes, newest first.
	Passes []bosun.PassReport
}

// IsReady reports whether the object is Ready: its Ready condition is True
// and describes its current generation (or does not say which it
// describes).
func (r *Report) IsReady() bool {
	return r.Ready != nil && r.Ready.Status == metav1.ConditionTrue && r.Current()
}

// Current reports whether the status describes the object's current
// generation, or does not say.
func (r *Report) Current() bool {
	return r.ObservedGeneration == 0 || r.ObservedGeneration >= r.Generation
}

// fromObject fills in what the object itself tells: its name, generation,
// conditions, deletion and external resource.
func (r *Report) fromObject(obj *unstructured.Unstructured) {
	r.Namespace, r.Name, r.Generation = obj.GetNamespace(), obj.GetName(), obj.GetGeneration()
	conds := conditionsOf(obj)
	find := func(typ string) *metav1.Condition {
		if c := conditions.Find(conds, typ); c != nil {
			c := *c
			return &c
		}
		return nil
	}
	r.Ready, r.Reconciling, r.Stalled = find(conditions.TypeReady), find(conditions.TypeReconciling), find(conditions.TypeStalled)
	r.ObservedGeneration, _, _ = unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if r.Ready != nil && r.Ready.ObservedGeneration != 0 {
		r.ObservedGeneration = r.Ready.ObservedGeneration
	}

	annotations := obj.GetAnnotations()
	r.ReconciledBy = annotations[bosun.AnnotationReconciledBy]
	if _, named := annotations[managed.AnnotationExternalName]; named || find(typeSynced) != nil {
		r.External = &External{
			Name:          annotations[managed.AnnotationExternalName],
			Synced:        find(typeSynced),
			Available:     find(typeAvailable),
			CreatePending: createPending(annotations),
		}
	}
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		r.Deletion = &Deletion{
			Requested:  ts.Time,
			Finalizers: obj.GetFinalizers(),
			Blocked:    find(conditions.TypeDeletionBlocked),
			Release:    annotations[bosun.AnnotationReleaseFinalizer],
		}
	}

	skip := map[string]bool{
		conditions.TypeReady: true, conditions.TypeReconciling: true, conditions.TypeStalled: true,
		conditions.TypeDeletionBlocked: true,
	}
	if r.External != nil {
		skip[typeSynced], skip[typeAvailable] = true, true
	}
	r.Failing = nil
	for _, c := range conds {
		if !skip[c.Type] && c.Status != metav1.ConditionTrue {
			r.Failing = append(r.Failing, c)
		}
	}
	slices.SortStableFunc(r.Failing, func(a, b metav1.Condition) int { return severity(b) - severity(a) })
}

// severity ranks a failing condition: False is worse than Unknown.
func severity(c metav1.Condition) int {
	if c.Status == metav1.ConditionFalse {
		return 2
	}
	return 1
}

// conditionsOf returns the status conditions of obj, those it cannot read
// left out.
func conditionsOf(obj *unstructured.Unstructured) []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	out := make([]metav1.Condition, 0, len(raw))
	for _, item := range raw {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		var c metav1.Condition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c); err != nil || c.Type == "" {
			continue
		}
		out = append(out, c)
	}
	return out
}

// createPending returns when the managed step's last Create started, if no
// outcome of it (or of a later one) is recorded: the leak guard's mark.
func createPending(annotations map[string]string) time.Time {
	pending, err := time.Parse(time.RFC3339Nano, annotations[managed.AnnotationCreatePending])
	if err != nil {
		return time.Time{}
	}
	for _, a := range []string{annotationCreateSucceeded, annotationCreateFailed} {
		if t, err := time.Parse(time.RFC3339Nano, annotations[a]); err == nil && !t.Before(pending) {
			return time.Time{}
		}
	}
	return pending
}
