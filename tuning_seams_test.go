package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/fairqueue"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/tuning"
)

// holdFirstStep records the order of the passes, and holds the first one
// until release is closed.
type holdFirstStep struct {
	release chan struct{}

	mu    sync.Mutex
	order []string
}

func (*holdFirstStep) Name() string { return "hold-first" }

func (s *holdFirstStep) Do(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	s.mu.Lock()
	s.order = append(s.order, req.Object.Name)
	first := len(s.order) == 1
	s.mu.Unlock()
	if first {
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctrl.Result{}, ctx.Err()
		}
	}
	req.Object.Status.Result = req.Object.Spec.Value
	return ctrl.Result{}, nil
}

// passes returns the order of the passes so far.
func (s *holdFirstStep) passes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.order)
}

// TestChangeDuringStartGoesFirst checks that bosun's wrappers of the
// controller's queue (the record of triggers, the For watch that drops
// the engine's own writes) keep the priorities controller-runtime's
// handlers give: the objects a starting controller lists wait behind a
// change made meanwhile. With 20 Widgets stored before the start and one
// worker held in the first pass, a Widget created then is the next one
// reconciled, in controller-runtime's priority queue and in the fair
// queue (whatever UsePriorityQueue says); client-go's plain queue, which
// knows no priorities, takes it last.
func TestChangeDuringStartGoesFirst(t *testing.T) {
	t.Parallel()
	const stored = 20
	for _, tc := range []struct {
		name  string
		fair  bool
		plain bool // UsePriorityQueue false
		// want is the place of the new Widget's pass.
		want int
	}{
		{name: "controller-runtime's priority queue", want: 1},
		{name: "fair queue", fair: true, want: 1},
		{name: "fair queue, UsePriorityQueue false", fair: true, plain: true, want: 1},
		{name: "client-go's plain queue", plain: true, want: stored},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cp := shared.ControlPlane(t)
			ns := bosuntest.Namespace(t, cp.Client)
			storeWidgets(t.Context(), t, cp.Client, ns, "s", stored, 1)
			step := &holdFirstStep{release: make(chan struct{})}
			var lateOnce sync.Once
			lateSeen := make(chan struct{})
			mine := predicate.Funcs{
				CreateFunc: func(e event.CreateEvent) bool {
					if e.Object.GetNamespace() == ns && e.Object.GetName() == "late" {
						lateOnce.Do(func() { close(lateSeen) })
					}
					return e.Object.GetNamespace() == ns
				},
				UpdateFunc:  func(e event.UpdateEvent) bool { return e.ObjectNew.GetNamespace() == ns },
				DeleteFunc:  func(e event.DeleteEvent) bool { return e.Object.GetNamespace() == ns },
				GenericFunc: func(e event.GenericEvent) bool { return e.Object.GetNamespace() == ns },
			}
			r := &bosun.Reconciler[*testapi.Widget]{Name: "start-" + ns, Steps: []bosun.Step[*testapi.Widget]{step}}
			r.Options.IgnoreNamespacePolicy = true
			opts := controller.Options{MaxConcurrentReconciles: 1}
			if tc.plain {
				opts.UsePriorityQueue = ptr.To(false)
			}
			bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
				b := bosun.ControllerManagedBy[*testapi.Widget](mgr).WithEventFilter(mine).WithOptions(opts)
				if tc.fair {
					b = b.WithFairQueue(fairqueue.ByNamespace)
				}
				return b.Complete(r)
			})
			bosuntest.Eventually(t, func(context.Context) error {
				if len(step.passes()) == 0 {
					return errors.New("no pass has started")
				}
				return nil
			})
			late := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late"}, Spec: testapi.WidgetSpec{Value: 1, Divisor: 1}}
			if err := cp.Client.Create(t.Context(), late); err != nil {
				t.Fatal(err)
			}
			select {
			case <-lateSeen:
			case <-t.Context().Done():
				t.Fatal("the new Widget's create event never came")
			}
			// The handler adds the key just after the filter passed the
			// event; the held pass then writes before its worker takes
			// the next key.
			close(step.release)
			bosuntest.Eventually(t, func(context.Context) error {
				if got := step.passes(); !slices.Contains(got, "late") || len(got) < stored+1 {
					return fmt.Errorf("%d passes, want %d", len(got), stored+1)
				}
				return nil
			})
			got := step.passes()
			if i := slices.Index(got, "late"); i != tc.want {
				t.Errorf("the Widget created while the start's backlog waited had pass %d of %d (%v), want pass %d", i, len(got), got, tc.want)
			}
		})
	}
}

// logStep logs a line through the logger of its pass, and fails the first
// pass of each object, so that controller-runtime logs its error.
type logStep struct {
	mu     sync.Mutex
	passes map[string]int
}

func (*logStep) Name() string { return "log" }

func (s *logStep) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	s.mu.Lock()
	s.passes[req.Object.Name]++
	n := s.passes[req.Object.Name]
	s.mu.Unlock()
	req.Log.Info("step ran", "pass", n)
	if n == 1 {
		return ctrl.Result{}, errors.New("not yet")
	}
	req.Object.Status.Result = req.Object.Spec.Value
	return ctrl.Result{}, nil
}

// TestLogConstructorKeysOnEveryLine checks that the keys of a log
// constructor given to WithLogConstructor, before or after WithOptions,
// are on every line of a pass, with tuning (whose loggers hand their keys
// to the sink only when a line is logged) and without: a step's own line,
// with the engine's policy key, and controller-runtime's line of a failed
// pass, both with the reconcile's ID.
func TestLogConstructorKeysOnEveryLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		tuned, after bool
	}{
		{name: "before WithOptions"},
		{name: "after WithOptions", after: true},
		{name: "before WithOptions, with tuning", tuned: true},
		{name: "after WithOptions, with tuning", tuned: true, after: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			rec := &bosuntest.LogRecorder{}
			step := &logStep{passes: map[string]int{}}
			r := &bosun.Reconciler[*testapi.Widget]{Name: "logs", Steps: []bosun.Step[*testapi.Widget]{step}}
			var configure func(*ctrl.Options)
			if tc.tuned {
				configure = func(o *ctrl.Options) { tuning.Enable(o) }
			}
			inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool {
				return o.GetNamespace() == f.ns || o.GetNamespace() == "" && o.GetName() == f.ns
			})
			bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{Configure: configure}, func(mgr ctrl.Manager) error {
				// BOSUN_TUNING=on tunes every manager.
				if want := tc.tuned || os.Getenv(bosuntest.EnvTuning) == "on"; tuning.Enabled(mgr) != want {
					return fmt.Errorf("tuning.Enabled = %v, want %v", !want, want)
				}
				base := rec.Wrap(mgr.GetLogger())
				ctor := func(req *reconcile.Request) logr.Logger {
					l := base.WithValues("tenant", "blue")
					if req != nil {
						l = l.WithValues("widget", req.Name)
					}
					return l
				}
				b := bosun.ControllerManagedBy[*testapi.Widget](mgr).WithEventFilter(inNamespace)
				if tc.after {
					b = b.WithOptions(controller.Options{MaxConcurrentReconciles: 2}).WithLogConstructor(ctor)
				} else {
					b = b.WithLogConstructor(ctor).WithOptions(controller.Options{MaxConcurrentReconciles: 2})
				}
				return b.Complete(r)
			})
			f.create("w", 6, 3, nil)
			f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)

			var stepLines, errorLines []bosuntest.LogEntry
			for _, e := range rec.Entries() {
				switch {
				case e.Message == "step ran":
					stepLines = append(stepLines, e)
				case e.Error && e.Message == "Reconciler error":
					errorLines = append(errorLines, e)
				}
			}
			if len(stepLines) < 2 || len(errorLines) == 0 {
				t.Fatalf("recorded %d lines of the step and %d of the failed pass, want 2 and 1 at least:\n%v", len(stepLines), len(errorLines), rec.Entries())
			}
			check := func(e bosuntest.LogEntry, keys ...string) {
				t.Helper()
				if v, _ := e.Value("tenant"); v != "blue" {
					t.Errorf("line %q has tenant %v, want the log constructor's blue", e.String(), v)
				}
				if v, _ := e.Value("widget"); v != "w" {
					t.Errorf("line %q has widget %v, want the log constructor's w", e.String(), v)
				}
				for _, k := range keys {
					if _, ok := e.Value(k); !ok {
						t.Errorf("line %q has no %s", e.String(), k)
					}
				}
			}
			for _, e := range stepLines {
				check(e, "reconcileID", "policy")
			}
			for _, e := range errorLines {
				check(e, "reconcileID")
			}
		})
	}
}

// TestLeanCacheKeepsEmptyAndNilMaps checks that the transform of
// LeanCache, which gives an object new label and annotation maps holding
// shared strings, leaves each object equal to what it was but for
// managedFields: a nil map stays nil and an empty one empty, for typed
// objects, unstructured ones and metadata alone.
func TestLeanCacheKeepsEmptyAndNilMaps(t *testing.T) {
	t.Parallel()
	var o cache.Options
	tuning.LeanCache(&o)
	fields := []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}}
	meta := func(labels, annotations map[string]string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "shop", Name: "w", Labels: labels, Annotations: annotations, Finalizers: []string{}, ManagedFields: fields}
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("test.bosun.dev/v1")
	u.SetKind("Widget")
	u.SetNamespace("shop")
	u.SetName("u")
	u.SetLabels(map[string]string{"app": "web"})
	u.SetAnnotations(map[string]string{"note": strings.Repeat("x", 100)})
	u.SetManagedFields(fields)
	pm := &metav1.PartialObjectMetadata{ObjectMeta: meta(map[string]string{}, map[string]string{"a": "b"})}
	pm.SetGroupVersionKind(testapi.GroupVersion.WithKind("Widget"))
	for _, tc := range []struct {
		name string
		obj  client.Object
	}{
		{"nil maps", &testapi.Widget{ObjectMeta: meta(nil, nil)}},
		{"empty maps", &testapi.Widget{ObjectMeta: meta(map[string]string{}, map[string]string{})}},
		{"maps", &testapi.Widget{ObjectMeta: meta(map[string]string{"app": "web", "": ""}, map[string]string{"note": strings.Repeat("x", 100), "empty": ""})}},
		{"unstructured", u},
		{"metadata only", pm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.obj.DeepCopyObject().(client.Object)
			want.SetManagedFields(nil)
			out, err := o.DefaultTransform(tc.obj.DeepCopyObject())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, out); diff != "" {
				t.Errorf("the transform changed the object (-want +got):\n%s", diff)
			}
			if !equality.Semantic.DeepEqual(want, out) || !reflect.DeepEqual(want, out) {
				t.Error("the object is not deeply equal to what it was")
			}
		})
	}
}
