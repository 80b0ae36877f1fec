package hello

import (
	"context"
	"errors"
	"fmt"
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

	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
)

// The tests in this file run the reconciler against controller-runtime's
// fake client. They cover what a real API server cannot easily be made to
// do: serve a template that skipped validation, and fail a given write. The
// envtest tests cover the rest against a real kube-apiserver.

const testNS = "ns"

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	return s
}

// greetingObj returns a Greeting at generation gen with the given spec.
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

func deleting(g *hellov1.Greeting) *hellov1.Greeting {
	now := metav1.Now()
	g.DeletionTimestamp = &now
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

func readyCond(status metav1.ConditionStatus, reason, msg string, gen int64) metav1.Condition {
	return metav1.Condition{Type: hellov1.ConditionReady, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen}
}

// recorder wraps a client and records its writes as "verb Kind name" lines;
// fail, when set, may replace the outcome of a write.
type recorder struct {
	mu     sync.Mutex
	writes []string
	fail   func(write string) error
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
	if r.fail != nil {
		return r.fail(w)
	}
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

// logLines records the log lines of a reconcile, at verbosity 1, as
// "info: msg" or "error: msg".
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) context(ctx context.Context) context.Context {
	return logr.NewContext(ctx, logr.New(logSink{l}))
}

func (l *logLines) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

// errors returns the lines logged at error level.
func (l *logLines) errors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []string
	for _, line := range l.lines {
		if strings.HasPrefix(line, "error: ") {
			errs = append(errs, line)
		}
	}
	return errs
}

// logSink is a logr.LogSink writing to a logLines.
type logSink struct{ l *logLines }

func (logSink) Init(logr.RuntimeInfo)              {}
func (logSink) Enabled(level int) bool             { return level <= 1 }
func (s logSink) Info(_ int, msg string, _ ...any) { s.l.add("info: " + msg) }
func (s logSink) Error(err error, msg string, _ ...any) {
	s.l.add("error: " + msg + ": " + err.Error())
}
func (s logSink) WithValues(...any) logr.LogSink { return s }
func (s logSink) WithName(string) logr.LogSink   { return s }

type fixture struct {
	c   client.WithWatch
	rec *recorder
	r   *GreetingReconciler
}

func newFixture(t *testing.T, objs ...client.Object) *fixture {
	t.Helper()
	base := fake.NewClientBuilder().
		WithScheme(testScheme(t)).
		WithObjects(objs...).
		WithStatusSubresource(&hellov1.Greeting{}).
		Build()
	rec := &recorder{}
	c := rec.wrap(base)
	return &fixture{c: c, rec: rec, r: &GreetingReconciler{Client: c}}
}

func (f *fixture) reconcile(ctx context.Context, name string) (ctrl.Result, error) {
	return f.r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: testNS, Name: name}})
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
			{Type: hellov1.ConditionReady, Status: metav1.ConditionTrue, Reason: hellov1.ReasonPublished,
				Message: `configmap "g" holds the greeting`, ObservedGeneration: 1, LastTransitionTime: metav1.Now()},
		},
	}
	tests := []struct {
		name       string
		objs       []client.Object
		wantResult ctrl.Result
		wantWrites []string
		// wantConfigMaps maps each ConfigMap name to its greeting.
		wantConfigMaps map[string]string
		// wantGone is true when the Greeting must no longer exist.
		wantGone   bool
		wantStatus hellov1.GreetingStatus
		wantFinal  []string
	}{
		{
			name:           "new greeting gets finalizer, configmap and status",
			objs:           []client.Object{greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})},
			wantWrites:     []string{"patch Greeting g", "create ConfigMap g", "patch status of Greeting g"},
			wantConfigMaps: map[string]string{"g": "Hello, World!"},
			wantStatus: hellov1.GreetingStatus{ObservedGeneration: 1, Message: "Hello, World!", Conditions: []metav1.Condition{
				readyCond(metav1.ConditionTrue, hellov1.ReasonPublished, `configmap "g" holds the greeting`, 1),
			}},
			wantFinal: []string{Finalizer},
		},
		{
			name: "own template and configmap name",
			objs: []client.Object{withFinalizer(greetingObj("g", 3, hellov1.GreetingSpec{
				Name: "crew", Template: "Ahoy, %s! 100%%", ConfigMapName: "other"}))},
			wantWrites:     []string{"create ConfigMap other", "patch status of Greeting g"},
			wantConfigMaps: map[string]string{"other": "Ahoy, crew! 100%"},
			wantStatus: hellov1.GreetingStatus{ObservedGeneration: 3, Message: "Ahoy, crew! 100%", Conditions: []metav1.Condition{
				readyCond(metav1.ConditionTrue, hellov1.ReasonPublished, `configmap "other" holds the greeting`, 3),
			}},
			wantFinal: []string{Finalizer},
		},
		{
			name: "changed spec updates the configmap",
			objs: []client.Object{
				withStatus(withFinalizer(greetingObj("g", 2, hellov1.GreetingSpec{Name: "Gopher"})), published),
				configMapObj("g", "Hello, World!", owner),
			},
			wantWrites:     []string{"update ConfigMap g", "patch status of Greeting g"},
			wantConfigMaps: map[string]string{"g": "Hello, Gopher!"},
			wantStatus: hellov1.GreetingStatus{ObservedGeneration: 2, Message: "Hello, Gopher!", Conditions: []metav1.Condition{
				readyCond(metav1.ConditionTrue, hellov1.ReasonPublished, `configmap "g" holds the greeting`, 2),
			}},
			wantFinal: []string{Finalizer},
		},
		{
			name: "converged greeting makes no writes",
			objs: []client.Object{
				withStatus(withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})), published),
				configMapObj("g", "Hello, World!", owner),
			},
			wantConfigMaps: map[string]string{"g": "Hello, World!"},
			wantStatus:     published,
			wantFinal:      []string{Finalizer},
		},
		{
			name:       "invalid template is reported without a requeue",
			objs:       []client.Object{withFinalizer(greetingObj("g", 2, hellov1.GreetingSpec{Name: "x", Template: "no verb"}))},
			wantWrites: []string{"patch status of Greeting g"},
			wantStatus: hellov1.GreetingStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{
				readyCond(metav1.ConditionFalse, hellov1.ReasonInvalidTemplate,
					`invalid template "no verb": it must contain exactly one %s; write %% for a literal percent sign`, 2),
			}},
			wantFinal: []string{Finalizer},
		},
		{
			name: "invalid template keeps the old configmap and clears the message",
			objs: []client.Object{
				withStatus(withFinalizer(greetingObj("g", 2, hellov1.GreetingSpec{Name: "x", Template: "%s%s"})), published),
				configMapObj("g", "Hello, World!", owner),
			},
			wantWrites:     []string{"patch status of Greeting g"},
			wantConfigMaps: map[string]string{"g": "Hello, World!"},
			wantStatus: hellov1.GreetingStatus{ObservedGeneration: 2, Conditions: []metav1.Condition{
				readyCond(metav1.ConditionFalse, hellov1.ReasonInvalidTemplate,
					`invalid template "%s%s": it must contain exactly one %s; write %% for a literal percent sign`, 2),
			}},
			wantFinal: []string{Finalizer},
		},
		{
			name: "configmap of someone else is left alone",
			objs: []client.Object{
				withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})),
				configMapObj("g", "theirs", nil),
			},
			wantResult:     ctrl.Result{RequeueAfter: NotOwnedRecheck},
			wantWrites:     []string{"patch status of Greeting g"},
			wantConfigMaps: map[string]string{"g": "theirs"},
			wantStatus: hellov1.GreetingStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{
				readyCond(metav1.ConditionFalse, hellov1.ReasonConfigMapNotOwned,
					`configmap "g" exists and is not controlled by this greeting`, 1),
			}},
			wantFinal: []string{Finalizer},
		},
		{
			name: "deleted greeting loses its configmap, then its finalizer",
			objs: []client.Object{
				deleting(withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}))),
				configMapObj("g", "Hello, World!", owner),
			},
			wantWrites: []string{"delete ConfigMap g", "patch Greeting g"},
			wantGone:   true,
		},
		{
			name: "deleted greeting keeps a configmap of someone else",
			objs: []client.Object{
				deleting(withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}))),
				configMapObj("g", "theirs", nil),
			},
			wantWrites:     []string{"patch Greeting g"},
			wantConfigMaps: map[string]string{"g": "theirs"},
			wantGone:       true,
		},
		{
			name: "deleted greeting held by another finalizer only is not touched",
			objs: []client.Object{
				func() *hellov1.Greeting {
					g := deleting(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}))
					g.Finalizers = []string{"example.com/other"}
					return g
				}(),
				configMapObj("g", "Hello, World!", owner),
			},
			wantConfigMaps: map[string]string{"g": "Hello, World!"},
			wantFinal:      []string{"example.com/other"},
		},
		{
			name: "missing greeting is done",
		},
	}
	ignoreTime := cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.objs...)
			var logs logLines
			ctx := logs.context(t.Context())

			for pass := 1; pass <= 2; pass++ {
				res, err := f.reconcile(ctx, "g")
				if err != nil {
					t.Fatalf("pass %d: Reconcile error: %v", pass, err)
				}
				if diff := cmp.Diff(tt.wantResult, res); diff != "" {
					t.Errorf("pass %d: result (-want +got):\n%s", pass, diff)
				}
				want := tt.wantWrites
				if pass == 2 {
					want = nil // a second pass over the result must be quiet
				}
				if diff := cmp.Diff(want, f.rec.take()); diff != "" {
					t.Errorf("pass %d: writes (-want +got):\n%s", pass, diff)
				}
			}
			if errs := logs.errors(); len(errs) > 0 {
				t.Errorf("error logs: %q", errs)
			}

			var cms corev1.ConfigMapList
			if err := f.c.List(ctx, &cms, client.InNamespace(testNS)); err != nil {
				t.Fatalf("list configmaps: %v", err)
			}
			gotCMs := map[string]string{}
			for _, cm := range cms.Items {
				gotCMs[cm.Name] = cm.Data[hellov1.ConfigMapKey]
				if cm.Data[hellov1.ConfigMapKey] != "theirs" && !metav1.IsControlledBy(&cm, owner) {
					t.Errorf("configmap %s is not controlled by the greeting: %v", cm.Name, cm.OwnerReferences)
				}
			}
			if diff := cmp.Diff(tt.wantConfigMaps, gotCMs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("configmaps (-want +got):\n%s", diff)
			}

			g := &hellov1.Greeting{}
			err := f.c.Get(ctx, client.ObjectKey{Namespace: testNS, Name: "g"}, g)
			if tt.wantGone || len(tt.objs) == 0 {
				if !apierrors.IsNotFound(err) {
					t.Errorf("get greeting: %v, want NotFound", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("get greeting: %v", err)
			}
			if diff := cmp.Diff(tt.wantStatus, g.Status, ignoreTime, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantFinal, g.Finalizers, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("finalizers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReconcileKeepsTransitionTime checks that a condition whose status does
// not change keeps its lastTransitionTime when its reason or generation do.
func TestReconcileKeepsTransitionTime(t *testing.T) {
	owner := greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})
	then := metav1.NewTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))
	old := hellov1.GreetingStatus{ObservedGeneration: 1, Message: "Hello, World!", Conditions: []metav1.Condition{{
		Type: hellov1.ConditionReady, Status: metav1.ConditionTrue, Reason: hellov1.ReasonPublished,
		Message: `configmap "g" holds the greeting`, ObservedGeneration: 1, LastTransitionTime: then,
	}}}
	f := newFixture(t,
		withStatus(withFinalizer(greetingObj("g", 2, hellov1.GreetingSpec{Name: "Gopher"})), old),
		configMapObj("g", "Hello, World!", owner))
	if _, err := f.reconcile(t.Context(), "g"); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	g := &hellov1.Greeting{}
	if err := f.c.Get(t.Context(), client.ObjectKey{Namespace: testNS, Name: "g"}, g); err != nil {
		t.Fatalf("get greeting: %v", err)
	}
	if len(g.Status.Conditions) != 1 || !g.Status.Conditions[0].LastTransitionTime.Equal(&then) {
		t.Errorf("conditions = %+v, want lastTransitionTime %v kept", g.Status.Conditions, then)
	}
	if g.Status.ObservedGeneration != 2 || g.Status.Conditions[0].ObservedGeneration != 2 {
		t.Errorf("observed generations = %d and %d, want 2", g.Status.ObservedGeneration, g.Status.Conditions[0].ObservedGeneration)
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

	tests := []struct {
		name       string
		objs       []client.Object
		failOn     string
		err        error
		wantResult ctrl.Result
		wantErr    string
	}{
		{
			name:       "finalizer conflict",
			objs:       []client.Object{greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})},
			failOn:     "patch Greeting g",
			err:        conflict,
			wantResult: ctrl.Result{RequeueAfter: ConflictDelay},
		},
		{
			name:       "configmap created meanwhile",
			objs:       []client.Object{withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}))},
			failOn:     "create ConfigMap g",
			err:        exists,
			wantResult: ctrl.Result{RequeueAfter: ConflictDelay},
		},
		{
			name: "configmap update conflict",
			objs: []client.Object{
				withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"})),
				configMapObj("g", "stale", owner),
			},
			failOn:     "update ConfigMap g",
			err:        conflict,
			wantResult: ctrl.Result{RequeueAfter: ConflictDelay},
		},
		{
			name:       "status conflict",
			objs:       []client.Object{withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}))},
			failOn:     "patch status of Greeting g",
			err:        conflict,
			wantResult: ctrl.Result{RequeueAfter: ConflictDelay},
		},
		{
			name: "finalizer release conflict",
			objs: []client.Object{
				deleting(withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}))),
			},
			failOn:     "patch Greeting g",
			err:        conflict,
			wantResult: ctrl.Result{RequeueAfter: ConflictDelay},
		},
		{
			name:    "configmap create fails",
			objs:    []client.Object{withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}))},
			failOn:  "create ConfigMap g",
			err:     boom,
			wantErr: "create configmap: Internal error occurred: boom",
		},
		{
			name: "configmap delete fails",
			objs: []client.Object{
				deleting(withFinalizer(greetingObj("g", 1, hellov1.GreetingSpec{Name: "World"}))),
				configMapObj("g", "Hello, World!", owner),
			},
			failOn:  "delete ConfigMap g",
			err:     boom,
			wantErr: "delete configmap: Internal error occurred: boom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.objs...)
			f.rec.fail = func(w string) error {
				if w == tt.failOn {
					return tt.err
				}
				return nil
			}
			var logs logLines
			res, err := f.reconcile(logs.context(t.Context()), "g")
			if diff := cmp.Diff(tt.wantResult, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			errs := logs.errors()
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("Reconcile error = %v, want nil", err)
				}
				if len(errs) > 0 {
					t.Errorf("error logs: %q", errs)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Reconcile error = %v, want %q", err, tt.wantErr)
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("Reconcile error %v does not wrap %v", err, tt.err)
			}
			if len(errs) != 1 {
				t.Errorf("error logs = %q, want one", errs)
			}
		})
	}
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
