package hello

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
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

const testNS = "ns"

// greetingCase is a case of the kit for the Greeting reconciler. Deleting
// marks Object as being deleted with Finalizer on it.
type greetingCase = unit.Case[*hellov1.Greeting]

// runGreetings runs each case as a subtest: one pass of NewReconciler's
// reconciler, checked by the kit. When again is true, a second pass then
// runs over what the first left, and must return the same result, with no
// error, no write and no event.
func runGreetings(t *testing.T, again bool, cases ...greetingCase) {
	t.Helper()
	scheme := unit.Scheme(t, AddToScheme)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			out := unit.Reconcile(t, scheme, NewReconciler(), c)
			unit.Check(t, c, out)
			if !again {
				return
			}
			writes := &bosuntest.WriteCounter{}
			recorder := events.NewFakeRecorder(100)
			r := NewReconciler()
			r.Client, r.APIReader, r.Recorder = writes.Wrap(out.Client), out.Client, recorder
			res, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(c.Object)})
			res.Priority, out.Result.Priority = nil, nil
			if err != nil || res != out.Result {
				t.Errorf("second pass = %+v, %v; want %+v and no error", res, err, out.Result)
			}
			if w := writes.Writes(); len(w) > 0 {
				t.Errorf("second pass writes %v, want none", w)
			}
			if n := len(recorder.Events); n > 0 {
				t.Errorf("second pass records %d events, want none", n)
			}
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

// statusOf returns the status of a Greeting at generation gen whose
// Published condition has status, reason and message, with Ready as the
// engine derives it, and status.message msg.
func statusOf(gen int64, msg string, status metav1.ConditionStatus, reason conditions.Reason, message string) hellov1.GreetingStatus {
	published := metav1.Condition{Type: hellov1.ConditionPublished, Status: status, Reason: string(reason), Message: message, ObservedGeneration: gen}
	ready := published
	ready.Type = hellov1.ConditionReady
	if status == metav1.ConditionTrue {
		ready.Reason, ready.Message = string(conditions.ReasonSucceeded), ""
	}
	return hellov1.GreetingStatus{ObservedGeneration: gen, Message: msg, Conditions: []metav1.Condition{published, ready}}
}

// publishedStatus is the status of a Greeting at generation gen whose
// ConfigMap cm holds msg.
func publishedStatus(gen int64, cm, msg string) hellov1.GreetingStatus {
	return statusOf(gen, msg, metav1.ConditionTrue, hellov1.ReasonPublished, `configmap "`+cm+`" holds the greeting`)
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
	published := publishedStatus(1, "g", "Hello, World!")
	for i := range published.Conditions {
		published.Conditions[i].LastTransitionTime = metav1.Now()
	}
	mine := []string{Finalizer}
	otherFinalizer := greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})
	otherFinalizer.Finalizers = []string{"example.com/other"}
	otherFinalizer.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	invalid := func(gen int64, template string) *hellov1.GreetingStatus {
		st := statusOf(gen, "", metav1.ConditionFalse, hellov1.ReasonInvalidTemplate,
			`invalid template "`+template+`": it must contain exactly one %s; write %% for a literal percent sign`)
		return &st
	}
	status := func(st hellov1.GreetingStatus) *hellov1.GreetingStatus { return &st }

	runGreetings(t, true,
		greetingCase{
			Name:          "new greeting gets finalizer, configmap and status",
			Object:        greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}),
			ExpectWrites:  []string{"patch Greeting ns/g", "create ConfigMap ns/g", "patch status Greeting ns/g"},
			ExpectEvents:  []string{`Normal Claimed claimed by finalizer "hello.bosun.dev/configmap"`, "Normal SuccessfulCreate created configmap g"},
			ExpectObjects: []client.Object{configMapObj("g", "Hello, World!", owner)},
			Check:         left(status(publishedStatus(1, "g", "Hello, World!")), mine, map[string]string{"g": "Hello, World!"}),
		},
		greetingCase{
			Name: "own template and configmap name",
			Object: withFinalizer(greetingObj("g", 3, hellov1.GreetingSpec{
				Name: "crew", Template: "Ahoy, %s! 100%%", ConfigMapName: "other"})),
			ExpectWrites: []string{"create ConfigMap ns/other", "patch status Greeting ns/g"},
			Check:        left(status(publishedStatus(3, "other", "Ahoy, crew! 100%")), mine, map[string]string{"other": "Ahoy, crew! 100%"}),
		},
		greetingCase{
			Name:         "changed spec updates the configmap",
			Object:       withStatus(withFinalizer(greetingObj("g", 2, hellov1.GreetingSpec{Name: "Gopher"})), published),
			Given:        []client.Object{configMapObj("g", "Hello, World!", owner)},
			ExpectWrites: []string{"update ConfigMap ns/g", "patch status Greeting ns/g"},
			Check:        left(status(publishedStatus(2, "g", "Hello, Gopher!")), mine, map[string]string{"g": "Hello, Gopher!"}),
		},
		greetingCase{
			Name:           "converged greeting makes no writes",
			Object:         withStatus(withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})), published),
			Given:          []client.Object{configMapObj("g", "Hello, World!", owner)},
			ExpectNoWrites: true,
			ExpectNoEvents: true,
			Check:          left(&published, mine, map[string]string{"g": "Hello, World!"}),
		},
		greetingCase{
			Name:           "invalid template is reported without a requeue or an error",
			Object:         withFinalizer(greetingObj("g", 2, hellov1.GreetingSpec{Name: "x", Template: "no verb"})),
			ExpectWrites:   []string{"patch status Greeting ns/g"},
			ExpectNoEvents: true,
			Check:          left(invalid(2, "no verb"), mine, nil),
		},
		greetingCase{
			Name:         "invalid template keeps the old configmap and clears the message",
			Object:       withStatus(withFinalizer(greetingObj("g", 2, hellov1.GreetingSpec{Name: "x", Template: "%s%s"})), published),
			Given:        []client.Object{configMapObj("g", "Hello, World!", owner)},
			ExpectWrites: []string{"patch status Greeting ns/g"},
			Check:        left(invalid(2, "%s%s"), mine, map[string]string{"g": "Hello, World!"}),
		},
		greetingCase{
			Name:         "configmap of someone else is left alone",
			Object:       withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})),
			Given:        []client.Object{configMapObj("g", "theirs", nil)},
			ExpectResult: ctrl.Result{RequeueAfter: NotOwnedRecheck},
			ExpectWrites: []string{"patch status Greeting ns/g"},
			Check: left(status(statusOf(1, "", metav1.ConditionFalse, hellov1.ReasonConfigMapNotOwned,
				`configmap "g" exists and is not controlled by this greeting`)), mine, map[string]string{"g": "theirs"}),
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
			Name:         "a condition whose status stays keeps its transition time",
			Object:       withStatus(withFinalizer(greetingObj("g", 2, hellov1.GreetingSpec{Name: "Gopher"})), *withTransition(published, then)),
			Given:        []client.Object{configMapObj("g", "Hello, World!", owner)},
			ExpectWrites: []string{"update ConfigMap ns/g", "patch status Greeting ns/g"},
			Check: func(t bosuntest.TB, out *unit.Outcome[*hellov1.Greeting]) {
				conds := out.Object.Status.Conditions
				if len(conds) != 2 {
					t.Fatalf("conditions = %+v, want Published and Ready", conds)
				}
				for _, c := range conds {
					if !c.LastTransitionTime.Equal(&then) || c.ObservedGeneration != 2 {
						t.Errorf("condition %+v: want lastTransitionTime %v kept and observed generation 2", c, then)
					}
				}
				if out.Object.Status.ObservedGeneration != 2 {
					t.Errorf("status = %+v, want observed generation 2", out.Object.Status)
				}
			},
		},
	)
}

// TestMissingGreeting checks that a request for a Greeting that does not
// exist is done: no requeue, no error, no write.
func TestMissingGreeting(t *testing.T) {
	writes := &bosuntest.WriteCounter{}
	memory := fake.NewClientBuilder().WithScheme(unit.Scheme(t, AddToScheme)).Build()
	r := NewReconciler()
	r.Client, r.APIReader = writes.Wrap(memory), memory
	res, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: testNS, Name: "g"}})
	if err != nil || res != (ctrl.Result{}) {
		t.Errorf("Reconcile = %+v, %v; want a zero result and no error", res, err)
	}
	if w := writes.Writes(); len(w) > 0 {
		t.Errorf("writes %v, want none", w)
	}
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

// createdMeanwhile returns hooks under which creating a ConfigMap finds its
// name taken: by the ConfigMap as sent (one an earlier pass made, which
// the cache does not show yet) when theirs is false, by one that holds
// "theirs" and has no owner when it is true.
func createdMeanwhile(theirs bool) interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			cm, ok := obj.(*corev1.ConfigMap)
			if !ok {
				return c.Create(ctx, obj, opts...)
			}
			made := cm.DeepCopy()
			if theirs {
				made = configMapObj(cm.Name, "theirs", nil)
			}
			if err := c.Create(ctx, made); err != nil {
				return err
			}
			return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "configmaps"}, cm.Name)
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
// are quiet requeues, that a ConfigMap the cache did not show is found
// rather than made twice, and that any other error is returned, wrapped,
// and reported in Ready.
func TestReconcileFailedWrites(t *testing.T) {
	gr := schema.GroupResource{Group: hellov1.GroupVersion.Group, Resource: "greetings"}
	conflict := apierrors.NewConflict(gr, "g", errors.New("the object has been modified"))
	boom := apierrors.NewInternalError(errors.New("boom"))
	owner := greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})
	claimed := func() *hellov1.Greeting {
		return withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}))
	}
	// The engine's quiet retry of a write refused with 409 Conflict.
	requeue := ctrl.Result{RequeueAfter: 100 * time.Millisecond}
	readyFalse := func(reason conditions.Reason, msg string) []metav1.Condition {
		return []metav1.Condition{{Type: hellov1.ConditionReady, Status: metav1.ConditionFalse, Reason: string(reason), Message: msg, ObservedGeneration: 1}}
	}

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
			Name:         "configmap created meanwhile is found, not made again",
			Object:       claimed(),
			Interceptor:  createdMeanwhile(false),
			ExpectWrites: []string{"create ConfigMap ns/g", "patch status Greeting ns/g"},
			Check:        left(ptr.To(publishedStatus(1, "g", "Hello, World!")), []string{Finalizer}, map[string]string{"g": "Hello, World!"}),
		},
		greetingCase{
			Name:         "configmap name taken meanwhile is reported as not owned",
			Object:       claimed(),
			Interceptor:  createdMeanwhile(true),
			ExpectResult: ctrl.Result{RequeueAfter: NotOwnedRecheck},
			ExpectWrites: []string{"create ConfigMap ns/g", "patch status Greeting ns/g"},
			Check: left(ptr.To(statusOf(1, "", metav1.ConditionFalse, hellov1.ReasonConfigMapNotOwned,
				`configmap "g" exists and is not controlled by this greeting`)), []string{Finalizer}, map[string]string{"g": "theirs"}),
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
			Name:             "configmap create fails",
			Object:           claimed(),
			Interceptor:      failing("create ConfigMap", boom),
			ExpectErr:        "create configmap g: Internal error occurred: boom",
			ExpectWrites:     []string{"create ConfigMap ns/g", "patch status Greeting ns/g"},
			ExpectConditions: readyFalse(conditions.ReasonError, "create configmap g: Internal error occurred: boom"),
			Check:            wraps(boom),
		},
		greetingCase{
			Name:             "configmap delete fails",
			Object:           greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}),
			Deleting:         true,
			Given:            []client.Object{configMapObj("g", "Hello, World!", owner)},
			Interceptor:      failing("delete ConfigMap", boom),
			ExpectErr:        `delete configmap "g": Internal error occurred: boom`,
			ExpectWrites:     []string{"delete ConfigMap ns/g", "patch status Greeting ns/g"},
			ExpectConditions: readyFalse(conditions.ReasonError, `delete configmap "g": Internal error occurred: boom`),
			Check:            wraps(boom),
		},
	)
}

// TestReconcilerIsValid checks the configuration the way setup does, and
// that the one step that cleans up is why the reconciler has a finalizer.
func TestReconcilerIsValid(t *testing.T) {
	r := NewReconciler()
	r.Client = fake.NewClientBuilder().WithScheme(unit.Scheme(t, AddToScheme)).Build()
	if err := r.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	var cleaners []string
	for _, s := range r.Steps {
		if _, ok := s.(bosun.Cleaner[*hellov1.Greeting]); ok {
			cleaners = append(cleaners, bosun.StepName(s))
		}
	}
	if diff := cmp.Diff([]string{"publishGreeting"}, cleaners); diff != "" {
		t.Errorf("steps that clean up (-want +got):\n%s", diff)
	}
	if r.Finalizer != Finalizer {
		t.Errorf("Finalizer = %q, want %q", r.Finalizer, Finalizer)
	}
}
