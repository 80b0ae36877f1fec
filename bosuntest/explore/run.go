package explore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/oracle"
)

// Target is a kind of a running operator to explore, and what the test
// sees of the operator.
type Target struct {
	// Client writes and reads the explored objects: a client of the
	// test's own, not the operator's.
	Client client.Client
	// GVK is the explored kind.
	GVK schema.GroupVersionKind
	// Spec is the schema of the kind's spec (see SpecSchema).
	Spec *apiextensionsv1.JSONSchemaProps
	// Base is the spec of a new object, before the first change. It must
	// be one the schema admits.
	Base map[string]any
	// Passes counts the operator's passes of the explored kind, and notes
	// the objects its client loads (ReconcileCounter.WrapClient), for
	// Touch. Required.
	Passes *bosuntest.ReconcileCounter
	// Writes counts the operator's writes. Required.
	Writes *bosuntest.WriteCounter
	// Logs, when set, records the operator's log: an error logged during a
	// step whose object ends Ready True is a failure (an error no
	// condition tells of), unless its values name another object (the
	// namespace and name of a reconcile's log).
	Logs *bosuntest.LogRecorder
	// Leftovers, when set, is checked after each explored object is
	// deleted and gone: what the operator made for it and left behind
	// (children, external resources), as an error naming them. It is
	// checked again until it returns nil or Options.Timeout passes, since
	// the garbage collector and external systems remove things a while
	// after their owner went.
	Leftovers func(ctx context.Context, obj client.Object) error
}

// Options of an exploration.
type Options struct {
	// Seed draws the sequence of changes (see Sequence).
	Seed uint64
	// Steps is the length of the sequence; zero means 8.
	Steps int
	// Timeout bounds the wait for the operator to settle after each
	// change, and for the object to go once deleted; zero means 30s.
	Timeout time.Duration
	// PassBudget is the most passes of the object a step may take, from
	// the change to the end of the passes of the touches that follow once
	// it has settled; zero means 10.
	PassBudget int
	// NoShrink reports a failing sequence as drawn, without shrinking it.
	// Shrinking runs shorter subsequences, each on an object of its own:
	// when only a timeout shows the failure, each such run takes Timeout.
	NoShrink bool
	// Stats, when set, counts the sequence run, its steps and the spec
	// shapes they reach. It may be shared by several Run calls.
	Stats *Stats
}

func (o Options) withDefaults() Options {
	if o.Steps == 0 {
		o.Steps = 8
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	if o.PassBudget == 0 {
		o.PassBudget = 10
	}
	return o
}

// Failure is a sequence the operator failed: the seed that draws it, the
// steps that still fail (shrunk, unless Options.NoShrink), and what went
// wrong at the last of them.
type Failure struct {
	Seed  uint64
	Steps []Change
	Err   error
}

// Error implements error.
func (f *Failure) Error() string {
	steps := make([]string, len(f.Steps))
	for i, c := range f.Steps {
		steps[i] = c.String()
	}
	return fmt.Sprintf("explore: seed %d fails after %d steps [%s]: %v", f.Seed, len(f.Steps), strings.Join(steps, "; "), f.Err)
}

// Unwrap returns the error of the failing step.
func (f *Failure) Unwrap() error { return f.Err }

// SpecSchema returns the schema of the spec of version of crd.
func SpecSchema(crd *apiextensionsv1.CustomResourceDefinition, version string) (*apiextensionsv1.JSONSchemaProps, error) {
	for _, v := range crd.Spec.Versions {
		if v.Name != version {
			continue
		}
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("explore: CRD %s version %s has no schema", crd.Name, version)
		}
		spec, ok := v.Schema.OpenAPIV3Schema.Properties["spec"]
		if !ok {
			return nil, fmt.Errorf("explore: CRD %s version %s has no spec", crd.Name, version)
		}
		return &spec, nil
	}
	return nil, fmt.Errorf("explore: CRD %s has no version %s", crd.Name, version)
}

// Run explores the target in namespace ns: it creates an object with the
// base spec, makes each change of the sequence Options.Seed draws, and
// checks after each one that
//
//   - the operator settles within Options.Timeout: the object's Ready
//     condition is for its generation, True, or False with a reason
//     other than those of work under way (a managed step's Creating,
//     Updating and Deleting);
//   - a pass that finds nothing changed (the pass of a touch, see
//     ReconcileCounter.Touch) writes nothing; one that writes and changes
//     a condition (its status, reason or message) found the world changed
//     (a resource being made became available, a Deployment's pods came
//     up), and the step settles and touches again;
//   - the step took at most Options.PassBudget passes of the object;
//   - with Target.Logs, no error was logged in a step that ends Ready True
//     (errors of reconciles of other objects are not counted).
//
// A cluster-scoped kind is explored the same way: its objects have no
// namespace (ns names those its operator writes in), and the writes of
// objects of the kind count with those in ns.
//
// A change the API server refuses (a validation rule the schema does not
// show) is skipped. Finally it deletes the object and checks that it goes
// within Options.Timeout and, with Target.Leftovers, that nothing is left.
// A failing sequence is shrunk, by running its shorter subsequences on
// new objects, and returned as a *Failure.
func Run(ctx context.Context, t Target, ns string, o Options) error {
	o = o.withDefaults()
	if t.Passes == nil || t.Writes == nil || t.Client == nil || t.Spec == nil {
		return errors.New("explore: Target needs Client, Spec, Passes and Writes")
	}
	e := &explorer{t: t, ns: ns, o: o, stats: o.Stats, changes: Changes(t.Spec)}
	seq := Sequence(t.Spec, o.Seed, o.Steps)
	e.stats.sequence()
	failed, err := e.run(ctx, seq)
	if err == nil {
		return nil
	}
	// The runs of shrinking are not counted.
	e.stats = nil
	if ctx.Err() != nil {
		return err
	}
	steps := seq[:failed]
	if !o.NoShrink {
		steps = Shrink(steps, func(s []Change) bool {
			_, err := e.run(ctx, s)
			return err != nil && ctx.Err() == nil
		})
		if _, last := e.run(ctx, steps); last != nil {
			err = last
		}
	}
	return &Failure{Seed: o.Seed, Steps: steps, Err: err}
}

// explorer runs sequences of one target on objects of their own.
type explorer struct {
	t  Target
	ns string
	o  Options
	// runs counts the sequences run, which name their objects.
	runs int
	// stats, when not nil, counts what the runs reach.
	stats *Stats
	// changes are the changes of the spec's schema, which shapes are of.
	changes []Change
}

// run runs seq on a new object and returns how many of its steps were
// made when it failed (the failing one included) and why. The object of a
// failed run is deleted too, so that the writes the failure may go on
// making do not count against the next run.
func (e *explorer) run(ctx context.Context, seq []Change) (int, error) {
	obj, n, err := e.runOn(ctx, seq)
	if err != nil && obj != nil {
		if rerr := e.remove(ctx, obj); rerr != nil {
			err = fmt.Errorf("%w (and deleting %s failed: %w)", err, obj.GetName(), rerr)
		}
	}
	return n, err
}

// runOn is run but for the deletion of a failed run's object, which it
// returns once made.
func (e *explorer) runOn(ctx context.Context, seq []Change) (*unstructured.Unstructured, int, error) {
	e.runs++
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(e.t.GVK)
	obj.SetNamespace(e.ns)
	obj.SetName(fmt.Sprintf("explore-%d", e.runs))
	spec := Change{}.Apply(e.t.Base)
	obj.Object["spec"] = spec
	if err := e.t.Client.Create(ctx, obj); err != nil {
		return nil, 0, fmt.Errorf("creating %s with the base spec: %w", obj.GetName(), err)
	}
	e.reached(false, spec)
	if err := e.step(ctx, obj, "created"); err != nil {
		return obj, 0, fmt.Errorf("after the create: %w", err)
	}
	for i, c := range seq {
		next := c.Apply(spec)
		written, err := e.write(ctx, obj, next)
		if err != nil {
			return obj, i + 1, fmt.Errorf("%s: %w", c, err)
		}
		if !written {
			continue
		}
		// A change that leaves the spec as it was (the removal of an absent
		// field) is checked as any other, but is no step to count.
		e.reached(!reflect.DeepEqual(next, spec), next)
		spec = next
		if err := e.step(ctx, obj, fmt.Sprint("step-", i)); err != nil {
			return obj, i + 1, fmt.Errorf("%s: %w", c, err)
		}
	}
	if err := e.remove(ctx, obj); err != nil {
		return nil, len(seq), fmt.Errorf("deleting %s: %w", obj.GetName(), err)
	}
	return nil, len(seq), nil
}

// reached counts, with stats, a spec written: by a step when step is true,
// or by the create.
func (e *explorer) reached(step bool, spec map[string]any) {
	if e.stats != nil {
		e.stats.reached(step, shapeOf(e.t.GVK.GroupKind().String(), e.changes, spec))
	}
}

// write replaces the spec of obj with spec. It reports false when the API
// server refused the spec as invalid.
func (e *explorer) write(ctx context.Context, obj *unstructured.Unstructured, spec map[string]any) (bool, error) {
	admitted := false
	// Past the cap the backoff stops growing and keeps waiting its cap:
	// Until, unlike ExponentialBackoffWithContext, never runs out of steps.
	err := conflictBackoff.DelayFunc().Until(ctx, true, true, func(ctx context.Context) (bool, error) {
		if err := e.t.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		obj.Object["spec"] = spec
		err := e.t.Client.Update(ctx, obj)
		switch {
		case err == nil:
			admitted = true
			return true, nil
		case apierrors.IsInvalid(err):
			return true, nil
		case apierrors.IsConflict(err):
			// The operator wrote the object meanwhile: read it again.
			return false, nil
		}
		return false, err
	})
	return admitted, err
}

// conflictBackoff paces write's retries after a conflict with the
// operator's own writes of the object: quickly at first, for as long as
// the operator keeps writing it.
var conflictBackoff = wait.Backoff{Duration: 5 * time.Millisecond, Factor: 1.5, Jitter: 0.1, Steps: math.MaxInt32, Cap: 200 * time.Millisecond}

// step waits for the operator to settle on the object's generation, then
// touches it twice and checks that the pass of the second touch wrote
// nothing, that the step kept within its pass budget, and that no error
// was logged behind a Ready True. A pass of the second touch that wrote
// and changed a condition found the world changed (a resource that was
// being made became available, a Deployment's pods came up one more): the
// step settles and touches again, within its pass budget, which a pass
// that rewrites a condition on every pass exceeds.
func (e *explorer) step(ctx context.Context, obj *unstructured.Unstructured, touch string) error {
	key := client.ObjectKeyFromObject(obj)
	passes := e.t.Passes.Count(key)
	logged := 0
	if e.t.Logs != nil {
		logged = len(e.t.Logs.Errors())
	}
	var ready bool
	for round := 0; ; round++ {
		var err error
		if ready, err = e.settle(ctx, obj); err != nil {
			return err
		}
		// The pass of a first touch ends the passes the change brought; the
		// pass of a second one finds nothing new. The values name the
		// object by its UID: a ReconcileCounter remembers the values it saw
		// of every object of a name, and the objects of several runs share
		// names.
		tb := &stepTB{ctx: ctx, name: key.String()}
		e.t.Passes.Touch(tb, e.t.Client, obj, fmt.Sprintf("%s-%s-%da", obj.GetUID(), touch, round))
		writes := len(e.writesIn())
		before, err := e.ready(ctx, obj)
		if err != nil {
			return err
		}
		e.t.Passes.Touch(tb, e.t.Client, obj, fmt.Sprintf("%s-%s-%db", obj.GetUID(), touch, round))
		if tb.err != nil {
			return tb.err
		}
		after, err := e.ready(ctx, obj)
		if err != nil {
			return err
		}
		w := e.writesIn()[writes:]
		if len(w) > 0 && before == after {
			return fmt.Errorf("a pass that found nothing changed wrote %d times, first %v", len(w), w[:min(len(w), 3)])
		}
		if n := e.t.Passes.Count(key) - passes; n > e.o.PassBudget {
			return fmt.Errorf("%d passes of %s in one step, over the budget of %d (a hot loop?)", n, key, e.o.PassBudget)
		}
		if len(w) == 0 {
			break
		}
	}
	if e.t.Logs != nil && ready {
		var errs []bosuntest.LogEntry
		for _, l := range e.t.Logs.Errors()[logged:] {
			if about(l, key) {
				errs = append(errs, l)
			}
		}
		if len(errs) > 0 {
			return fmt.Errorf("errors logged while the object ends Ready True, with no condition telling of them: %v", errs)
		}
	}
	return nil
}

// about reports whether the log line l may be about the object at key: it
// names that object, or none, by the values namespace and name that
// controller-runtime gives the log of a reconcile (the first of them, as
// the line's own values come after the logger's).
func about(l bosuntest.LogEntry, key client.ObjectKey) bool {
	var name, ns any
	var named bool
	for i := 0; i+1 < len(l.Values); i += 2 {
		switch l.Values[i] {
		case "name":
			if !named {
				name, named = l.Values[i+1], true
			}
		case "namespace":
			if ns == nil {
				ns = l.Values[i+1]
			}
		}
	}
	return !named || fmt.Sprint(name) == key.Name && (ns == nil || fmt.Sprint(ns) == key.Namespace)
}

// ready describes the conditions of obj as the API server has it: the
// status and reason of Ready and whether it is for obj's generation, and
// every condition's status, reason and message (conditionsOf).
func (e *explorer) ready(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(e.t.GVK)
	if err := e.t.Client.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
		return "", err
	}
	status, reason, current := readyOf(cur)
	return fmt.Sprintf("%s/%s (for the generation: %v); %s", status, reason, current, conditionsOf(cur)), nil
}

// conditionsOf returns the type, status, reason and message of each of
// obj's conditions, sorted by type: what the operator says of the world,
// which changes when its children or external resources make progress
// (a Deployment's pods becoming available) even where Ready does not.
func conditionsOf(obj *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var out []string
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok {
			out = append(out, fmt.Sprintf("%v=%v/%v %q", m["type"], m["status"], m["reason"], m["message"]))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "; ")
}

// writesIn returns the operator's writes in the explored namespace, and
// those of objects of the explored kind outside any namespace: the
// explored objects themselves, when the kind is cluster-scoped.
func (e *explorer) writesIn() []bosuntest.Write {
	var out []bosuntest.Write
	for _, w := range e.t.Writes.Writes() {
		if w.Namespace == e.ns || (w.Namespace == "" && w.Kind == e.t.GVK.Kind) {
			out = append(out, w)
		}
	}
	return out
}

// settle waits until the Ready condition of obj is for its generation,
// True or False with a reason other than those of progressing, and reports
// whether it is True.
func (e *explorer) settle(ctx context.Context, obj *unstructured.Unstructured) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, e.o.Timeout)
	defer cancel()
	var last string
	ready := false
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		cur := &unstructured.Unstructured{}
		cur.SetGroupVersionKind(e.t.GVK)
		if err := e.t.Client.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
			last = err.Error()
			return false, nil
		}
		status, reason, ok := readyOf(cur)
		switch {
		case ok && status == "True":
			ready = true
			return true, nil
		case ok && status == "False" && reason != "" && !slices.Contains(progressing, reason):
			return true, nil
		}
		last = fmt.Sprintf("Ready %q, reason %q, for the generation: %v", status, reason, ok)
		return false, nil
	})
	if err != nil {
		return false, fmt.Errorf("not settled within %s: %s", e.o.Timeout, last)
	}
	return ready, nil
}

// progressing are the reasons of a Ready False that tell of work under way,
// which the operator looks at again by itself: a resource of a managed step
// being created, updated or deleted (see package managed).
var progressing = []string{"Creating", "Updating", "Deleting"}

// readyOf returns the status and reason of the Ready condition of obj, and
// whether it is for obj's generation.
func readyOf(obj *unstructured.Unstructured) (status, reason string, current bool) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Ready" {
			continue
		}
		status, _ = m["status"].(string)
		reason, _ = m["reason"].(string)
		gen, _, _ := unstructured.NestedInt64(m, "observedGeneration")
		return status, reason, gen == obj.GetGeneration()
	}
	return "", "", false
}

// remove deletes obj and waits until it is gone and, with
// Target.Leftovers, until nothing of it is left.
func (e *explorer) remove(ctx context.Context, obj *unstructured.Unstructured) error {
	if err := e.t.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return err
	}
	if err := oracle.Gone(ctx, e.t.Client, []client.Object{obj}, e.o.Timeout); err != nil {
		return err
	}
	if e.t.Leftovers == nil {
		return nil
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, e.o.Timeout, true, func(ctx context.Context) (bool, error) {
		last = e.t.Leftovers(ctx, obj)
		return last == nil, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("left after %s: %w", e.o.Timeout, last)
	}
	return err
}

// stepTB is the bosuntest.TB of the helpers a step calls: it keeps the
// first failure as an error instead of ending a test.
type stepTB struct {
	ctx  context.Context
	name string
	err  error
}

func (s *stepTB) Helper()                  {}
func (s *stepTB) Cleanup(func())           {}
func (s *stepTB) Context() context.Context { return s.ctx }
func (s *stepTB) Name() string             { return s.name }
func (s *stepTB) Error(args ...any)        { s.fail(fmt.Sprint(args...)) }
func (s *stepTB) Errorf(f string, a ...any) {
	s.fail(fmt.Sprintf(f, a...))
}
func (s *stepTB) Fatal(args ...any)         { s.fail(fmt.Sprint(args...)) }
func (s *stepTB) Fatalf(f string, a ...any) { s.fail(fmt.Sprintf(f, a...)) }
func (s *stepTB) Log(...any)                {}
func (s *stepTB) Logf(string, ...any)       {}

func (s *stepTB) fail(msg string) {
	if s.err == nil {
		s.err = errors.New(msg)
	}
}
