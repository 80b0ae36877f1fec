package unit

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta/testrestmapper"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
)

// Finalizer is the finalizer of the reconcilers Steps makes.
const Finalizer = "unit.bosun.dev/cleanup"

// Steps returns a reconciler named "unit" that runs steps, with Finalizer
// for the steps that clean up. Reconcile fills in its client and recorder.
func Steps[T client.Object](steps ...bosun.Step[T]) *bosun.Reconciler[T] {
	return &bosun.Reconciler[T]{Name: "unit", Steps: steps, Finalizer: Finalizer}
}

// Case is one reconcile of one object, and what it should do. The
// expectations left at their zero value are not checked, but for
// ExpectErr: a case without it expects no error.
type Case[T client.Object] struct {
	// Name names the subtest.
	Name string
	// Object is the object reconciled, as stored before the pass. Give it
	// a name (and a namespace for a namespaced kind); a Generation, or 1.
	Object T
	// Given are the other objects the client holds before the pass.
	Given []client.Object
	// Interceptor injects faults into the client's calls, or observes
	// them. The engine's status write reaches SubResourcePatch with a
	// *metav1.PartialObjectMetadata of Object's kind, not an object of
	// type T: read what it writes from the patch (client.Patch.Data).
	Interceptor interceptor.Funcs
	// Deleting marks Object as being deleted, with the reconciler's
	// finalizer on it, so that the pass runs Cleanup.
	Deleting bool

	// ExpectResult is the result the pass returns. Its Priority is
	// compared only when set: the queue priority the engine gives a poll
	// or a retry is its own affair.
	ExpectResult ctrl.Result
	// ExpectErr is a part of the error the pass returns; empty expects no
	// error.
	ExpectErr string
	// ExpectConditions are conditions Object must have after the pass, in
	// any order, compared on type and status, and on reason, message and
	// observed generation when they are set here. Others may be present.
	ExpectConditions []metav1.Condition
	// ExpectWrites are every write of the pass, in order, as
	// bosuntest.Write prints them: "create ConfigMap ns/name", "patch
	// status Widget ns/name". Writes refused by an Interceptor count. Set
	// ExpectNoWrites to expect none.
	ExpectWrites   []string
	ExpectNoWrites bool
	// ExpectEvents are every event of the pass, in order, as
	// events.FakeRecorder prints them: "Warning Reason note". Set
	// ExpectNoEvents to expect none.
	ExpectEvents   []string
	ExpectNoEvents bool
	// ExpectObjects must exist after the pass, and hold at least what is
	// set in them: fields left empty here are not compared, and neither is
	// the server-set metadata (resourceVersion, uid, creationTimestamp,
	// generation, managedFields).
	ExpectObjects []client.Object
	// ExpectGone must not exist after the pass.
	ExpectGone []client.Object
	// Check, if set, checks anything else.
	Check func(t bosuntest.TB, out *Outcome[T])
}

// Outcome is what one pass did.
type Outcome[T client.Object] struct {
	// Result and Err are what Reconcile returned.
	Result ctrl.Result
	Err    error
	// Object is the object as stored after the pass; its zero value when
	// it is gone.
	Object T
	// Writes are the writes of the pass, in order.
	Writes []bosuntest.Write
	// Events are the events of the pass, in order.
	Events []string
	// Client is the in-memory client, to read anything else.
	Client client.Client
}

// Scheme returns a new scheme with the types that each of adds adds, such
// as an operator's AddToScheme; it fails t when one of them fails.
func Scheme(t bosuntest.TB, adds ...func(*runtime.Scheme) error) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range adds {
		if err := add(s); err != nil {
			t.Fatalf("unit: building the scheme: %v", err)
		}
	}
	return s
}

// Reconcile runs one pass of r on c.Object, against an in-memory client
// made with scheme (which must know T and the kinds of c.Given) that holds
// c.Object and c.Given, and has the field indexes r's steps set up (see
// bosun.Reconciler.FieldIndexes). Its RESTMapper knows every kind of scheme, as
// namespaced but for the built-in cluster-scoped kinds (Namespace, Node,
// ClusterRole...). It sets r's Client, APIReader and Recorder. It does
// not check c's expectations; Run does.
func Reconcile[T client.Object](t bosuntest.TB, scheme *runtime.Scheme, r *bosun.Reconciler[T], c Case[T]) *Outcome[T] {
	t.Helper()
	if reflect.ValueOf(c.Object).IsNil() {
		t.Fatalf("unit: case %q has no Object", c.Name)
	}
	obj := c.Object.DeepCopyObject().(T)
	if obj.GetGeneration() == 0 {
		obj.SetGeneration(1)
	}
	if c.Deleting {
		now := metav1.Now()
		obj.SetDeletionTimestamp(&now)
		if r.Finalizer != "" && !slices.Contains(obj.GetFinalizers(), r.Finalizer) {
			obj.SetFinalizers(append(obj.GetFinalizers(), r.Finalizer))
		}
	}
	objs := []client.Object{obj}
	for _, g := range c.Given {
		objs = append(objs, g.DeepCopyObject().(client.Object))
	}
	fb := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithRESTMapper(testrestmapper.TestOnlyStaticRESTMapper(scheme)).
		WithStatusSubresource(c.Object.DeepCopyObject().(client.Object)).
		WithInterceptorFuncs(c.Interceptor)
	indexes, err := r.FieldIndexes(scheme)
	if err != nil {
		t.Fatalf("unit: %v", err)
	}
	for _, ix := range indexes {
		fb = fb.WithIndex(ix.Object, ix.Field, ix.Extract)
	}
	memory := fb.Build()
	writes := &bosuntest.WriteCounter{}
	counted := writes.Wrap(memory)
	recorder := events.NewFakeRecorder(1000)
	r.Client, r.APIReader, r.Recorder = counted, counted, recorder

	key := client.ObjectKeyFromObject(obj)
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	out := &Outcome[T]{Result: res, Err: err, Writes: writes.Writes(), Client: memory}
	close(recorder.Events)
	for e := range recorder.Events {
		out.Events = append(out.Events, e)
	}
	after := c.Object.DeepCopyObject().(T)
	switch gerr := memory.Get(context.Background(), key, after); {
	case apierrors.IsNotFound(gerr):
	case gerr != nil:
		t.Fatalf("unit: reading %s after the pass: %v", key, gerr)
	default:
		out.Object = after
	}
	return out
}

// Run runs each case as a subtest: a fresh reconciler from newReconciler,
// one pass (see Reconcile), and the case's expectations checked.
func Run[T client.Object](t *testing.T, scheme *runtime.Scheme, newReconciler func() *bosun.Reconciler[T], cases ...Case[T]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			out := Reconcile(t, scheme, newReconciler(), c)
			Check(t, c, out)
		})
	}
}

// Check compares out with the expectations of c, reporting each
// difference with t.Errorf.
func Check[T client.Object](t bosuntest.TB, c Case[T], out *Outcome[T]) {
	t.Helper()
	switch {
	case c.ExpectErr == "" && out.Err != nil:
		t.Errorf("error = %v, want none", out.Err)
	case c.ExpectErr != "" && (out.Err == nil || !strings.Contains(out.Err.Error(), c.ExpectErr)):
		t.Errorf("error = %v, want one containing %q", out.Err, c.ExpectErr)
	}
	got := out.Result
	if c.ExpectResult.Priority == nil {
		got.Priority = nil
	}
	if diff := cmp.Diff(c.ExpectResult, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if len(c.ExpectConditions) > 0 {
		if problems := conditionProblems(c.ExpectConditions, out.Object); len(problems) > 0 {
			t.Errorf("conditions:\n\t%s", strings.Join(problems, "\n\t"))
		}
	}
	if len(c.ExpectWrites) > 0 || c.ExpectNoWrites {
		got := make([]string, 0, len(out.Writes))
		for _, w := range out.Writes {
			got = append(got, w.String())
		}
		want := c.ExpectWrites
		if want == nil {
			want = []string{}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("writes (-want +got):\n%s", diff)
		}
	}
	if len(c.ExpectEvents) > 0 || c.ExpectNoEvents {
		want := c.ExpectEvents
		if want == nil {
			want = []string{}
		}
		got := out.Events
		if got == nil {
			got = []string{}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events (-want +got):\n%s", diff)
		}
	}
	for _, want := range c.ExpectObjects {
		if err := holds(out.Client, want); err != nil {
			t.Errorf("%v", err)
		}
	}
	for _, gone := range c.ExpectGone {
		got := gone.DeepCopyObject().(client.Object)
		if err := out.Client.Get(context.Background(), client.ObjectKeyFromObject(gone), got); !apierrors.IsNotFound(err) {
			t.Errorf("%s %s: still there (error %v), want it gone", kindOf(out.Client, gone), client.ObjectKeyFromObject(gone), err)
		}
	}
	if c.Check != nil {
		c.Check(t, out)
	}
}

// conditionProblems compares the expected conditions with obj's.
func conditionProblems[T client.Object](want []metav1.Condition, obj T) []string {
	co, ok := any(obj).(conditions.Object)
	if !ok || reflect.ValueOf(obj).IsNil() {
		return []string{fmt.Sprintf("the object (%T) is gone or keeps no conditions", obj)}
	}
	got := co.GetConditions()
	var problems []string
	for _, w := range want {
		g := conditions.Find(got, w.Type)
		if g == nil {
			problems = append(problems, fmt.Sprintf("%s: missing, want %s", w.Type, statusReason(w)))
			continue
		}
		line := fmt.Sprintf("%s: %s/%s %q (generation %d)", w.Type, g.Status, g.Reason, g.Message, g.ObservedGeneration)
		switch {
		case g.Status != w.Status || w.Reason != "" && g.Reason != w.Reason:
			problems = append(problems, fmt.Sprintf("%s, want %s", line, statusReason(w)))
		case w.Message != "" && g.Message != w.Message:
			problems = append(problems, fmt.Sprintf("%s, want message %q", line, w.Message))
		case w.ObservedGeneration != 0 && g.ObservedGeneration != w.ObservedGeneration:
			problems = append(problems, fmt.Sprintf("%s, want generation %d", line, w.ObservedGeneration))
		}
	}
	sort.Strings(problems)
	return problems
}

// statusReason prints the status of an expected condition, and its reason
// when it gives one.
func statusReason(c metav1.Condition) string {
	if c.Reason == "" {
		return string(c.Status)
	}
	return string(c.Status) + "/" + c.Reason
}

// serverSet are the metadata fields an expected object does not compare.
var serverSet = []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields"}

// holds reports whether c holds want's object with at least what is set
// in want.
func holds(c client.Client, want client.Object) error {
	key := client.ObjectKeyFromObject(want)
	name := kindOf(c, want) + " " + key.String()
	got := want.DeepCopyObject().(client.Object)
	if err := c.Get(context.Background(), key, got); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	w, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	g, err := runtime.DefaultUnstructuredConverter.ToUnstructured(got)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if m, ok := w["metadata"].(map[string]any); ok {
		for _, f := range serverSet {
			delete(m, f)
		}
	}
	delete(w, "apiVersion")
	delete(w, "kind")
	var diffs []string
	subset("", w, g, &diffs)
	if len(diffs) > 0 {
		return errors.New(name + ":\n\t" + strings.Join(diffs, "\n\t"))
	}
	return nil
}

// subset records in diffs every value of want (its empty values aside)
// that got does not hold at the same path.
func subset(path string, want, got any, diffs *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, _ := got.(map[string]any)
		for k, v := range w {
			if isEmpty(v) {
				continue
			}
			subset(path+"."+k, v, g[k], diffs)
		}
	default:
		if !reflect.DeepEqual(want, got) {
			*diffs = append(*diffs, fmt.Sprintf("%s: %v, want %v", strings.TrimPrefix(path, "."), got, want))
		}
	}
}

// isEmpty reports whether v is a value an expected object leaves unset.
func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map, reflect.Slice, reflect.String:
		return rv.Len() == 0
	}
	return false
}

// kindOf names obj's kind from c's scheme, or its Go type.
func kindOf(c client.Client, obj client.Object) string {
	if gvks, _, err := c.Scheme().ObjectKinds(obj); err == nil && len(gvks) > 0 {
		return gvks[0].Kind
	}
	return fmt.Sprintf("%T", obj)
}
