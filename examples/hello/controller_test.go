package hello

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/conditions"
	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
)

// The tests in this file run the reconciler against the in-memory client of
// the unit-test kit (package bosuntest/unit), with its tables of cases. They
// cover what a real API server cannot easily be made to do: serve a
// template that skipped validation, and fail a given write. The envtest
// tests cover the rest against a real kube-apiserver.
//
// The kit runs bosun.Reconcilers, and the Greeting reconciler is plain
// controller-runtime: reconcileGreeting runs it the way unit.Reconcile runs
// the engine, into the kit's Outcome, and unit.Check compares that with the
// case.

const testNS = "ns"

// greetingCase is a case of the kit for the Greeting reconciler. Deleting
// marks Object as being deleted with Finalizer on it; a case without an
// Object reconciles a Greeting ns/g that does not exist.
type greetingCase = unit.Case[*hellov1.Greeting]

// reconcileGreeting runs one reconcile of c.Object by a GreetingReconciler
// against an in-memory client that holds c.Object and c.Given and injects
// c.Interceptor's faults. When again is true it then reconciles once more,
// over what the first pass left, and reports an error unless that second
// pass returns the same result and writes nothing. Either way it reports
// an error unless the first pass logs one error line exactly when it
// returns an error.
func reconcileGreeting(t *testing.T, c greetingCase, again bool) *unit.Outcome[*hellov1.Greeting] {
	t.Helper()
	key := client.ObjectKey{Namespace: testNS, Name: "g"}
	var objs []client.Object
	if c.Object != nil {
		g := c.Object.DeepCopy()
		if g.Generation == 0 {
			g.Generation = 1
		}
		if c.Deleting {
			now := metav1.Now()
			g.DeletionTimestamp = &now
			if !slices.Contains(g.Finalizers, Finalizer) {
				g.Finalizers = append(g.Finalizers, Finalizer)
			}
		}
		key = client.ObjectKeyFromObject(g)
		objs = append(objs, g)
	}
	for _, o := range c.Given {
		objs = append(objs, o.DeepCopyObject().(client.Object))
	}
	memory := fake.NewClientBuilder().WithScheme(unit.Scheme(t, AddToScheme)).WithObjects(objs...).
		WithStatusSubresource(&hellov1.Greeting{}).WithInterceptorFuncs(c.Interceptor).Build()
	writes := &bosuntest.WriteCounter{}
	logs := &bosuntest.LogRecorder{}
	ctx := logr.NewContext(t.Context(), logs.Logger())
	r := &GreetingReconciler{Client: writes.Wrap(memory)}

	res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
	out := &unit.Outcome[*hellov1.Greeting]{Result: res, Err: err, Writes: writes.Writes(), Client: memory}
	after := &hellov1.Greeting{}
	switch gerr := memory.Get(ctx, key, after); {
	case apierrors.IsNotFound(gerr):
	case gerr != nil:
		t.Fatalf("reading greeting %s after the pass: %v", key, gerr)
	default:
		out.Object = after
	}
	if errs := logs.Errors(); (err != nil) != (len(errs) == 1) || len(errs) > 1 {
		t.Errorf("error %v, error logs %q: want one error line for an error, none otherwise", err, errs)
	}

	if again {
		writes.Reset()
		res2, err2 := r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
		if err2 != nil || res2 != res {
			t.Errorf("second pass = %+v, %v; want %+v and no error", res2, err2, res)
		}
		if w := writes.Writes(); len(w) > 0 {
			t.Errorf("second pass writes %v, want none", w)
		}
	}
	return out
}

// runGreetings runs each case as a subtest: reconcileGreeting, then the
// case's expectations checked by the kit.
func runGreetings(t *testing.T, again bool, cases ...greetingCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			unit.Check(t, c, reconcileGreeting(t, c, again))
		})
	}
}

// greetingObj returns Greeting ns/name at generation gen with the given
// spec.
func greetingObj(name string, gen int64, spec hellov1.GreetingSpec) *hellov1.Greeting {
	return &hellov1.Greeting{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: name, Generation: gen, UID: types.UID("uid-" + name)},
		Spec:       spec,
	}
}

func withFinalizer(g *hellov1.Greeting) *hellov1.Greeting {
	g.Finalizers = append(g.Finalizers, Finalizer)
	return g
}

func withStatus(g *hellov1.Greeting, st hellov1.GreetingStatus) *hellov1.Greeting {
	g.Status = st
	return g
}

// configMapObj returns a ConfigMap holding greeting; when owner is not nil,
// the ConfigMap is controlled by it.
func configMapObj(name, greeting string, owner *hellov1.Greeting) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: name},
		Data:       map[string]string{hellov1.ConfigMapKey: greeting},
	}
	if owner != nil {
		cm.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, hellov1.GroupVersion.WithKind("Greeting"))}
	}
	return cm
}

func readyCond(status metav1.ConditionStatus, reason conditions.Reason, msg string, gen int64) metav1.Condition {
	return metav1.Condition{Type: hellov1.ConditionReady, Status: status, Reason: string(reason), Message: msg, ObservedGeneration: gen}
}

// left is a Case.Check of what a pass left behind: the Greeting with
// status and finalizers (or gone when status is nil), and exactly the
// ConfigMaps of configMaps (name to greeting), each controlled by the
// Greeting but those holding "theirs".
func left(status *hellov1.GreetingStatus, finalizers []string, configMaps map[string]string) func(bosuntest.TB, *unit.Outcome[*hellov1.Greeting]) {
	owner := greetingObj("g", 1, hellov1.GreetingSpec{})
	return func(t bosuntest.TB, out *unit.Outcome[*hellov1.Greeting]) {
		t.Helper()
		switch {
		case status == nil && out.Object != nil:
			t.Errorf("greeting still there: %+v", out.Object.ObjectMeta)
		case status != nil && out.Object == nil:
			t.Errorf("greeting gone")
		case status != nil:
			if diff := cmp.Diff(*status, out.Object.Status, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(finalizers, out.Object.Finalizers, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
		}
		var cms corev1.ConfigMapList
		if err := out.Client.List(t.Context(), &cms, client.InNamespace(testNS)); err != nil {
			t.Fatalf("list configmaps: %v", err)
		}
		got := map[string]string{}
		for _, cm := range cms.Items {
			got[cm.Name] = cm.Data[hellov1.ConfigMapKey]
			if cm.Data[hellov1.ConfigMapKey] != "theirs" && !metav1.IsControlledBy(&cm, owner) {
				t.Errorf("configmap %s is not controlled by the greeting: %v", cm.Name, cm.OwnerReferences)
			}
		}
		if diff := cmp.Diff(configMaps, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("configmaps (-want +got):\n%s", diff)
		}
	}
}

// TestReconcile runs one reconcile per case and checks the outcome, the
// writes it made, and the state it left; a second reconcile must then be
// quiet: the same outcome and no writes.
func TestReconcile(t *testing.T) {
	owner := greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})
	published := hellov1.GreetingStatus{
		ObservedGeneration: 1,
		Message:            "Hello, World!",
		Conditions: []metav1.Condition{
			{Type: hellov1.ConditionReady, Status: metav1.ConditionTrue, Reason: string(hellov1.ReasonPublished),
				Message: `configmap "g" holds the greeting`, ObservedGeneration: 1, LastTransitionTime: metav1.Now()},
		},
	}
	mine := []string{Finalizer}
	otherFinalizer := greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})
	otherFinalizer.Finalizers = []string{"example.com/other"}
	otherFinalizer.DeletionTimestamp = &metav1.Time{Time: time.Now()}

	runGreetings(t, true,
		greetingCase{
			Name:          "new greeting gets finalizer, configmap and status",
			Object:        greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}),
			ExpectWrites:  []string{"patch Greeting ns/g", "create ConfigMap ns/g", "patch status Greeting ns/g"},
			ExpectObjects: []client.Object{configMapObj("g", "Hello, World!", owner)},
			Check: left(&hellov1.GreetingStatus{ObservedGeneration: 1, Message: "Hello, World!", Conditions: []metav1.Condition{
				readyCond(metav1.ConditionTrue, hellov1.ReasonPublished, `configmap "g" holds the greeting`, 1),
			}}, mine, map[string]string{"g": "Hello, World!"}),
		},
		greetingCase{
			Name: "own template and configmap name",
			Object: withFinalizer(greetingObj("g", 3, hellov1.GreetingSpec{
				Name: "crew", Template: "Ahoy, %s! 100%%", ConfigMapName: "other"})),
			ExpectWrites: []string{"create ConfigMap ns/other", "patch status Greeting ns/g"},
			Check: left(&hellov1.GreetingStatus{ObservedGeneration: 3, Message: "Ahoy, crew! 100%", Conditions: []metav1.Condition{
				readyCond(metav1.ConditionTrue, hellov1.ReasonPublished, `configmap "other" holds the greeting`, 3),
			}}, mine, map[string]string{"other": "Ahoy, crew! 100%"}),
		},
		greetingCase{
			Name:         "changed spec updates the configmap",
			Object:       withStatus(withFinalizer(greetingObj("g", 2, hellov1.GreetingSpec{Name: "Gopher"})), published),
			Given:        []client.Object{configMapObj("g", "Hello, World!", owner)},
			ExpectWrites: []string{"update ConfigMap ns/g", "patch status Greeting ns/g"},
			Check: left(&hellov1.GreetingStatus{ObservedGeneration: 2, Message: "Hello, Gopher!", Conditions: []metav1.Condition{
				readyCond(metav1.ConditionTrue, hellov1.ReasonPublished, `configmap "g" holds the greeting`, 2),
			}}, mine, map[string]string{"g": "Hello, Gopher!"}),
		},
		greetingCase{
			Name:           "converged greeting makes no writes",
			Object:         withStatus(withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})), published),
			Given:          []client.Object{configMapObj("g", "Hello, World!", owner)},
			ExpectNoWrites: true,
			Check:          left(&published, mine, map[string]string{"g": "Hello, World!"}),
		},
		greetingCase{
			Name:         "invalid template is reported without a requeue",
			Object:       withFinalizer(greetingObj("g", 2, hellov1.GreetingSpec{Name: "x", Template: "no verb"})),
			ExpectWrites: []string{"patch status Greeting ns/g"},
			Check: left(&hellov1.GreetingStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{
				readyCond(metav1.ConditionFalse, hellov1.ReasonInvalidTemplate,
					`invalid template "no verb": it must contain exactly one %s; write %% for a literal percent sign`, 2),
			}}, mine, nil),
		},
		greetingCase{
			Name:         "invalid template keeps the old configmap and clears the message",
			Object:       withStatus(withFinalizer(greetingObj("g", 2, hellov1.GreetingSpec{Name: "x", Template: "%s%s"})), published),
			Given:        []client.Object{configMapObj("g", "Hello, World!", owner)},
			ExpectWrites: []string{"patch status Greeting ns/g"},
			Check: left(&hellov1.GreetingStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{
				readyCond(metav1.ConditionFalse, hellov1.ReasonInvalidTemplate,
					`invalid template "%s%s": it must contain exactly one %s; write %% for a literal percent sign`, 2),
			}}, mine, map[string]string{"g": "Hello, World!"}),
		},
		greetingCase{
			Name:         "configmap of someone else is left alone",
			Object:       withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})),
			Given:        []client.Object{configMapObj("g", "theirs", nil)},
			ExpectResult: ctrl.Result{RequeueAfter: NotOwnedRecheck},
			ExpectWrites: []string{"patch status Greeting ns/g"},
			Check: left(&hellov1.GreetingStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
				readyCond(metav1.ConditionFalse, hellov1.ReasonConfigMapNotOwned,
					`configmap "g" exists and is not controlled by this greeting`, 1),
			}}, mine, map[string]string{"g": "theirs"}),
		},
		greetingCase{
			Name:         "deleted greeting loses its configmap, then its finalizer",
			Object:       greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}),
			Deleting:     true,
			Given:        []client.Object{configMapObj("g", "Hello, World!", owner)},
			ExpectWrites: []string{"delete ConfigMap ns/g", "patch Greeting ns/g"},
			Check:        left(nil, nil, nil),
		},
		greetingCase{
			Name:         "deleted greeting keeps a configmap of someone else",
			Object:       greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}),
			Deleting:     true,
			Given:        []client.Object{configMapObj("g", "theirs", nil)},
			ExpectWrites: []string{"patch Greeting ns/g"},
			Check:        left(nil, nil, map[string]string{"g": "theirs"}),
		},
		greetingCase{
			Name:           "deleted greeting held by another finalizer only is not touched",
			Object:         otherFinalizer,
			Given:          []client.Object{configMapObj("g", "Hello, World!", owner)},
			ExpectNoWrites: true,
			Check:          left(&hellov1.GreetingStatus{}, []string{"example.com/other"}, map[string]string{"g": "Hello, World!"}),
		},
		greetingCase{
			Name:           "missing greeting is done",
			ExpectNoWrites: true,
			Check:          left(nil, nil, nil),
		},
		greetingCase{
			Name:         "a condition whose status stays keeps its transition time",
			Object:       withStatus(withFinalizer(greetingObj("g", 2, hellov1.GreetingSpec{Name: "Gopher"})), *withTransition(published, then)),
			Given:        []client.Object{configMapObj("g", "Hello, World!", owner)},
			ExpectWrites: []string{"update ConfigMap ns/g", "patch status Greeting ns/g"},
			Check: func(t bosuntest.TB, out *unit.Outcome[*hellov1.Greeting]) {
				conds := out.Object.Status.Conditions
				if len(conds) != 1 || !conds[0].LastTransitionTime.Equal(&then) {
					t.Errorf("conditions = %+v, want lastTransitionTime %v kept", conds, then)
				}
				if out.Object.Status.ObservedGeneration != 2 || len(conds) == 1 && conds[0].ObservedGeneration != 2 {
					t.Errorf("status = %+v, want observed generations 2", out.Object.Status)
				}
			},
		},
	)
}

// then is a time long past, for lastTransitionTime.
var then = metav1.NewTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))

// withTransition returns a copy of st whose conditions changed at at.
func withTransition(st hellov1.GreetingStatus, at metav1.Time) *hellov1.GreetingStatus {
	st = *st.DeepCopy()
	for i := range st.Conditions {
		st.Conditions[i].LastTransitionTime = at
	}
	return &st
}

// failing returns hooks that fail the write op ("create ConfigMap",
// "patch status Greeting", as bosuntest.Write.Op names it) with err.
func failing(op string, err error) interceptor.Funcs {
	is := func(c client.Client, verb, sub string, obj client.Object) bool {
		gvk, gerr := c.GroupVersionKindFor(obj)
		return gerr == nil && (bosuntest.Write{Verb: verb, Subresource: sub, Kind: gvk.Kind}).Op() == op
	}
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if is(c, bosuntest.VerbCreate, "", obj) {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if is(c, bosuntest.VerbUpdate, "", obj) {
				return err
			}
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if is(c, bosuntest.VerbPatch, "", obj) {
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if is(c, bosuntest.VerbDelete, "", obj) {
				return err
			}
			return c.Delete(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if is(c, bosuntest.VerbPatch, sub, obj) {
				return err
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}
}

// wraps is a Case.Check: the error wraps err.
func wraps(err error) func(bosuntest.TB, *unit.Outcome[*hellov1.Greeting]) {
	return func(t bosuntest.TB, out *unit.Outcome[*hellov1.Greeting]) {
		if !errors.Is(out.Err, err) {
			t.Errorf("error %v does not wrap %v", out.Err, err)
		}
	}
}

// TestReconcileFailedWrites makes one write fail and checks that conflicts
// (and an AlreadyExists from a stale cache) are quiet requeues, while any
// other error is returned, wrapped, and logged by the log hook.
func TestReconcileFailedWrites(t *testing.T) {
	gr := schema.GroupResource{Group: hellov1.GroupVersion.Group, Resource: "greetings"}
	conflict := apierrors.NewConflict(gr, "g", errors.New("the object has been modified"))
	exists := apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, "g")
	boom := apierrors.NewInternalError(errors.New("boom"))
	owner := greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})
	claimed := func() *hellov1.Greeting {
		return withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}))
	}
	requeue := ctrl.Result{RequeueAfter: ConflictDelay}

	runGreetings(t, false,
		greetingCase{
			Name:         "finalizer conflict",
			Object:       greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}),
			Interceptor:  failing("patch Greeting", conflict),
			ExpectResult: requeue,
			ExpectWrites: []string{"patch Greeting ns/g"},
			Check:        left(&hellov1.GreetingStatus{}, nil, nil),
		},
		greetingCase{
			Name:         "configmap created meanwhile",
			Object:       claimed(),
			Interceptor:  failing("create ConfigMap", exists),
			ExpectResult: requeue,
			ExpectWrites: []string{"create ConfigMap ns/g"},
		},
		greetingCase{
			Name:         "configmap update conflict",
			Object:       claimed(),
			Given:        []client.Object{configMapObj("g", "stale", owner)},
			Interceptor:  failing("update ConfigMap", conflict),
			ExpectResult: requeue,
			ExpectWrites: []string{"update ConfigMap ns/g"},
			Check:        left(&hellov1.GreetingStatus{}, []string{Finalizer}, map[string]string{"g": "stale"}),
		},
		greetingCase{
			Name:         "status conflict",
			Object:       claimed(),
			Interceptor:  failing("patch status Greeting", conflict),
			ExpectResult: requeue,
			ExpectWrites: []string{"create ConfigMap ns/g", "patch status Greeting ns/g"},
			Check:        left(&hellov1.GreetingStatus{}, []string{Finalizer}, map[string]string{"g": "Hello, World!"}),
		},
		greetingCase{
			Name:         "finalizer release conflict",
			Object:       greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}),
			Deleting:     true,
			Interceptor:  failing("patch Greeting", conflict),
			ExpectResult: requeue,
			ExpectWrites: []string{"patch Greeting ns/g"},
		},
		greetingCase{
			Name:         "configmap create fails",
			Object:       claimed(),
			Interceptor:  failing("create ConfigMap", boom),
			ExpectErr:    "create configmap: Internal error occurred: boom",
			ExpectWrites: []string{"create ConfigMap ns/g"},
			Check:        wraps(boom),
		},
		greetingCase{
			Name:         "configmap delete fails",
			Object:       greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}),
			Deleting:     true,
			Given:        []client.Object{configMapObj("g", "Hello, World!", owner)},
			Interceptor:  failing("delete ConfigMap", boom),
			ExpectErr:    "delete configmap: Internal error occurred: boom",
			ExpectWrites: []string{"delete ConfigMap ns/g"},
			Check:        wraps(boom),
		},
	)
}

// recorder wraps a client and records its writes as "verb Kind name" lines.
// TestConvergedReconcileMakesNoWrites records with it the writes of a
// reconcile against the real API server.
type recorder struct {
	mu     sync.Mutex
	writes []string
}

func (r *recorder) record(c client.Client, verb string, obj client.Object) error {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return err
	}
	w := fmt.Sprintf("%s %s %s", verb, gvk.Kind, obj.GetName())
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, w)
	return nil
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.writes
	r.writes = nil
	return w
}

func (r *recorder) wrap(c client.WithWatch) client.WithWatch {
	return interceptor.NewClient(c, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if err := r.record(c, "create", obj); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if err := r.record(c, "update", obj); err != nil {
				return err
			}
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := r.record(c, "patch", obj); err != nil {
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if err := r.record(c, "delete", obj); err != nil {
				return err
			}
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if err := r.record(c, "update "+sub+" of", obj); err != nil {
				return err
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if err := r.record(c, "patch "+sub+" of", obj); err != nil {
				return err
			}
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
}

func TestSetupWithManagerNeedsClient(t *testing.T) {
	err := (&GreetingReconciler{}).SetupWithManager(nil)
	if err == nil || err.Error() != "hello: greeting reconciler: Client must be set" {
		t.Errorf("SetupWithManager error = %v", err)
	}
	c := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).Build()
	err = (&GreetingReconciler{Client: c}).SetupWithManager(nil)
	if err == nil || !strings.HasPrefix(err.Error(), "hello: greeting reconciler: client scheme: ") {
		t.Errorf("SetupWithManager error = %v", err)
	}
}
