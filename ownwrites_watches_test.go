package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// skippedOwnWrites sums bosun_own_write_events_skipped_total in reg.
func skippedOwnWrites(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() == bosun.MetricOwnWritesSkipped {
			for _, m := range mf.GetMetric() {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}

// lagging is an event filter of every watch that holds one watch on the
// create event of the Widget name until another watch of Widgets has been
// handed the events of the engine's writes of its first pass: the held
// watch then lags behind the other one by those events, as one goroutine
// of the informers' may behind another on a busy machine. The For watch
// is handed Widgets whole, the other watch their metadata only, which
// tells the two apart. Held, For starts the first pass through enqueue
// and passes the create event on to nothing.
type lagging struct {
	predicate.Funcs
	name string
	// holdFor is set to hold the For watch, else the other watch is held.
	holdFor bool
	enqueue func(client.ObjectKey)
	// otherPast is closed when the other watch is handed an update of
	// name whose old object holds the finalizer: the claim's write came
	// before it.
	otherPast chan struct{}
	// forPast reports that the For watch has had the events of the
	// first pass's writes.
	forPast func() bool

	mu   sync.Mutex
	held bool
}

func (l *lagging) Create(e event.CreateEvent) bool {
	_, whole := e.Object.(*testapi.Widget)
	if e.Object.GetName() != l.name || whole != l.holdFor {
		return true
	}
	l.mu.Lock()
	l.held = true
	l.mu.Unlock()
	deadline := time.After(time.Minute)
	if l.holdFor {
		l.enqueue(client.ObjectKeyFromObject(e.Object))
		select {
		case <-l.otherPast:
		case <-deadline:
		}
		return false
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !l.forPast() {
		select {
		case <-tick.C:
		case <-deadline:
			return true
		}
	}
	return true
}

func (l *lagging) Update(e event.UpdateEvent) bool {
	if _, meta := e.ObjectNew.(*metav1.PartialObjectMetadata); meta && e.ObjectNew.GetName() == l.name &&
		controllerutil.ContainsFinalizer(e.ObjectOld, testFinalizer) {
		l.mu.Lock()
		select {
		case <-l.otherPast:
		default:
			close(l.otherPast)
		}
		l.mu.Unlock()
	}
	return true
}

func (l *lagging) wasHeld() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// touchAndWait touches the Widget name and waits until a pass has seen
// the touch and the pass log has its pass: the log has a pass once it
// ended, after its steps ran. The object had one pass before.
func touchAndWait(t *testing.T, f *fixture, touched *sawLabel, log *passLog, name string) {
	t.Helper()
	f.touch(name, "1")
	bosuntest.Eventually(t, func(context.Context) error {
		if !touched.seen() {
			return errors.New("no pass has seen the touch yet")
		}
		return nil
	})
	waitPasses(t, log, name, 2)
}

// sawLabel is a step that notes whether a pass has seen the label.
type sawLabel struct {
	label string
	mu    sync.Mutex
	saw   bool
}

func (s *sawLabel) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if _, ok := req.Object.Labels[s.label]; ok {
		s.mu.Lock()
		s.saw = true
		s.mu.Unlock()
	}
	return ctrl.Result{}, nil
}

func (s *sawLabel) seen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saw
}

// TestOwnWritesStartNoPassThroughALaggingWatch checks that the events of
// a pass that wrote twice (the claim's finalizer, then the status) start
// no pass when one watch of the kind is handed them after the other has
// had both: the first write's event is the engine's as much as the last
// one's, whichever watch comes to it last. With the For watch behind, the
// first pass is enqueued as For is handed the create event, which it then
// drops; with the other watch behind, that watch maps every update but
// the test's touch to the Widget itself. Either way the Widget has two
// passes, its first and the touch's, and
// bosun_own_write_events_skipped_total counts each of the two events
// once.
func TestOwnWritesStartNoPassThroughALaggingWatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		holdFor bool
	}{
		{name: "For behind another watch", holdFor: true},
		{name: "another watch behind For"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			log := &passLog{}
			reg := prometheus.NewRegistry()
			r := newReconciler("own-writes-lag", newJournal(), true)
			touched := &sawLabel{label: "touched"}
			r.Steps = append(r.Steps, touched)
			r.Options.Observers = []bosun.PassObserver{log}
			r.Options.Metrics = reg
			lag := &lagging{name: "w", holdFor: tc.holdFor, otherPast: make(chan struct{}),
				forPast: func() bool { return skippedOwnWrites(t, reg) >= 4 }}
			// Behind For, the other watch maps the updates to the Widget
			// itself, but the touch.
			other := handler.Funcs{
				UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
					if _, touch := e.ObjectNew.GetLabels()["touched"]; !tc.holdFor && !touch {
						q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.ObjectNew)})
					}
				},
			}
			bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{}, func(mgr ctrl.Manager) error {
				inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == f.ns })
				b := bosun.ControllerManagedBy[*testapi.Widget](mgr)
				lag.enqueue = b.Enqueuer().Enqueue
				return b.For(&testapi.Widget{}, builder.WithPredicates(inNamespace)).
					WithEventFilter(inNamespace).
					WithEventFilter(lag).
					WatchesMetadata(&testapi.Widget{}, other).
					Complete(r)
			})
			// Once a first Widget is Ready, the informers have listed:
			// the held watch's create event of w is not one of the
			// initial list, which the cache's reads would wait for.
			f.create("first", 10, 5, nil)
			f.waitReady("first", metav1.ConditionTrue, conditions.ReasonSucceeded)
			bosuntest.Eventually(t, func(context.Context) error {
				if got := skippedOwnWrites(t, reg); got != 2 {
					return fmt.Errorf("%s = %v, want 2: the first Widget's two writes", bosun.MetricOwnWritesSkipped, got)
				}
				return nil
			})
			f.create("w", 10, 5, nil)
			f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
			bosuntest.Eventually(t, func(context.Context) error {
				select {
				case <-lag.otherPast:
					return nil
				default:
					return errors.New("the other watch has not been handed the status write's event")
				}
			})
			if !lag.wasHeld() {
				t.Fatal("no watch was held on the create event")
			}
			// Each watch is handed the events of one object in order:
			// once a pass has seen the touch, the held watch has had the
			// events of the engine's writes before it.
			touchAndWait(t, f, touched, log, "w")
			want := []string{"Watch Create", "Watch Update"}
			if tc.holdFor {
				want[0] = bosun.TriggerEnqueued
			}
			if diff := cmp.Diff(want, log.triggers("w")); diff != "" {
				t.Errorf("passes of a Widget whose own-write events one watch was handed late (-want +got):\n%s", diff)
			}
			if got := skippedOwnWrites(t, reg); got != 4 {
				t.Errorf("%s = %v, want 4 (of each Widget, the claim's write and the status write, each once)", bosun.MetricOwnWritesSkipped, got)
			}
		})
	}
}

// childReady is a step of a parent Widget that reports, as its condition
// ChildReady, whether its child Widget (named by the annotation
// test.bosun.dev/child) is Ready, as the cache shows it; a Widget that
// names no child has none to wait for.
type childReady struct{}

func (childReady) Name() string         { return "child-ready" }
func (childReady) Conditions() []string { return []string{"ChildReady"} }

func (childReady) Do(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	name := w.Annotations["test.bosun.dev/child"]
	status, reason := metav1.ConditionFalse, "ChildNotReady"
	child := &testapi.Widget{}
	if name == "" {
		status, reason = metav1.ConditionTrue, "NoChild"
	} else if err := req.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: name}, child); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
	} else if c := conditions.Find(child.Status.Conditions, conditions.TypeReady); c != nil && c.Status == metav1.ConditionTrue {
		status, reason = metav1.ConditionTrue, "ChildIsReady"
	}
	conds := w.Status.Conditions
	conditions.Set(&conds, metav1.Condition{Type: "ChildReady", Status: status, Reason: reason, ObservedGeneration: w.Generation}, metav1.Now())
	w.Status.Conditions = conds
	return ctrl.Result{}, nil
}

// TestOwnWritesReachAnOwnerOfTheSameKind: a Widget controls a child
// Widget, which the same controller reconciles (Owns of the reconciled
// kind), and is Ready once its child is. What makes the child Ready is
// the engine's own status write, whose event is not the parent's: the
// Owns watch maps it to the parent, which becomes Ready. The child's first
// pass is held until the parent has found it not Ready, so that only the
// event of that write can bring the parent's next pass. It holds when
// the caller gives For and Owns the very same object: only For's watch
// drops the engine's own writes.
func TestOwnWritesReachAnOwnerOfTheSameKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// same gives For and the owner's watch one object; watches makes
		// that watch a Watches that maps an object to its controller.
		same, watches bool
	}{
		{name: "an object for each watch"},
		{name: "one object for For and Owns", same: true},
		{name: "one object for For and Watches", same: true, watches: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			release := make(chan struct{})
			var held atomic.Bool
			gate := bosun.NewStep("gate", func(ctx context.Context, p *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
				if p.Object.Name == "child" && held.CompareAndSwap(false, true) {
					select {
					case <-release:
					case <-ctx.Done():
					}
				}
				return ctrl.Result{}, nil
			})
			touched := &sawLabel{label: "touched"}
			r := &bosun.Reconciler[*testapi.Widget]{Name: "own-writes-owner", Steps: []bosun.Step[*testapi.Widget]{childReady{}, gate, touched}}
			bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{}, func(mgr ctrl.Manager) error {
				inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == f.ns })
				forObj, owned := &testapi.Widget{}, &testapi.Widget{}
				if tc.same {
					owned = forObj
				}
				// Two workers: the parent's passes run while the child's
				// first one is held.
				b := bosun.ControllerManagedBy[*testapi.Widget](mgr).
					For(forObj, builder.WithPredicates(inNamespace)).
					WithOptions(controller.Options{MaxConcurrentReconciles: 2})
				if tc.watches {
					toOwner := handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), &testapi.Widget{}, handler.OnlyControllerOwner())
					return b.Watches(owned, toOwner, builder.WithPredicates(inNamespace)).Complete(r)
				}
				return b.Owns(owned, builder.WithPredicates(inNamespace)).Complete(r)
			})
			parent := f.create("parent", 1, 1, map[string]string{"test.bosun.dev/child": "child"})
			f.waitReady("parent", metav1.ConditionFalse, "ChildNotReady")
			child := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "child"}, Spec: testapi.WidgetSpec{Value: 1, Divisor: 1}}
			if err := controllerutil.SetControllerReference(parent, child, f.c.Scheme()); err != nil {
				t.Fatal(err)
			}
			if err := f.c.Create(t.Context(), child); err != nil {
				t.Fatal(err)
			}
			// The child's create event brings a pass of the parent (Owns),
			// which finds the child not Ready yet: its first pass is held.
			bosuntest.Eventually(t, func(ctx context.Context) error {
				if !held.Load() {
					return errors.New("the child's first pass has not started")
				}
				return nil
			})
			// A pass of the parent that has seen a touch made now finds the
			// child not Ready; the passes before it are over.
			f.touch("parent", "1")
			bosuntest.Eventually(t, func(context.Context) error {
				if !touched.seen() {
					return errors.New("no pass of the parent has seen the touch yet")
				}
				return nil
			})
			f.waitReady("parent", metav1.ConditionFalse, "ChildNotReady")
			close(release)
			f.waitReady("child", metav1.ConditionTrue, conditions.ReasonSucceeded)
			f.waitReady("parent", metav1.ConditionTrue, conditions.ReasonSucceeded)
		})
	}
}

// TestOwnWritesStartNoPassForMetadataOnly checks that a controller whose
// For watch holds only the metadata of Widgets (builder.OnlyMetadata)
// drops the events of the engine's own writes too: its For watch is made
// from an object the Builder makes, which it must know as For's. The
// Widget's first pass writes twice (the claim, then the status), and both
// events are dropped: it has that one pass.
func TestOwnWritesStartNoPassForMetadataOnly(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	log := &passLog{}
	reg := prometheus.NewRegistry()
	r := newReconciler("own-writes-metadata", newJournal(), true)
	r.Options.Observers = []bosun.PassObserver{log}
	r.Options.Metrics = reg
	bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{}, func(mgr ctrl.Manager) error {
		inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == f.ns })
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).
			For(&testapi.Widget{}, builder.WithPredicates(inNamespace), builder.OnlyMetadata).
			Complete(r)
	})
	f.create("w", 10, 5, nil)
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	bosuntest.Eventually(t, func(context.Context) error {
		if got := skippedOwnWrites(t, reg); got != 2 {
			return fmt.Errorf("%s = %v, want 2: the claim's write and the status write", bosun.MetricOwnWritesSkipped, got)
		}
		return nil
	})
	if diff := cmp.Diff([]string{"Watch Create"}, log.triggers("w")); diff != "" {
		t.Errorf("passes of a Widget whose For watch holds metadata only (-want +got):\n%s", diff)
	}
}

// TestOwnWriteAheadOfItsAnswerStartsNoPass checks that the event of the
// engine's status write starts no pass through a Watches of the kind when
// that watch is handed it before the write's answer has reached the
// engine: the answer to the status write of "w" is held until the other
// watch has been handed the version it made, by which time the For watch
// has dropped it too. The other watch maps every update but the test's
// touch to the Widget itself; the Widget's passes are its first and the
// touch's.
func TestOwnWriteAheadOfItsAnswerStartsNoPass(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	log := &passLog{}
	r := newReconciler("own-write-ahead", newJournal(), true)
	touched := &sawLabel{label: "touched"}
	r.Steps = append(r.Steps, touched)
	r.Options.Observers = []bosun.PassObserver{log}
	var mu sync.Mutex
	handed := map[string]chan struct{}{} // version: closed once the other watch had it
	handedOf := func(rv string) chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		if handed[rv] == nil {
			handed[rv] = make(chan struct{})
		}
		return handed[rv]
	}
	other := handler.Funcs{
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.ObjectNew.GetName() == "w" {
				ch := handedOf(e.ObjectNew.GetResourceVersion())
				mu.Lock()
				select {
				case <-ch:
				default:
					close(ch)
				}
				mu.Unlock()
			}
			if _, touch := e.ObjectNew.GetLabels()["touched"]; !touch {
				q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.ObjectNew)})
			}
		},
	}
	var held atomic.Bool
	bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{}, func(mgr ctrl.Manager) error {
		r.Client = &answerHolder{Client: mgr.GetClient(), after: func(obj client.Object) {
			if obj.GetName() != "w" || !held.CompareAndSwap(false, true) {
				return
			}
			select {
			case <-handedOf(obj.GetResourceVersion()):
			case <-time.After(30 * time.Second):
				t.Errorf("the other watch was not handed version %s of w", obj.GetResourceVersion())
			}
		}}
		inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == f.ns })
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).For(&testapi.Widget{}, builder.WithPredicates(inNamespace)).
			WithEventFilter(inNamespace).
			WatchesMetadata(&testapi.Widget{}, other).
			Complete(r)
	})
	f.create("w", 10, 5, nil)
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	// The API server may show the write before its answer reaches the
	// holder: wait for the holder to have it.
	bosuntest.Eventually(t, func(context.Context) error {
		if !held.Load() {
			return errors.New("no status write of w was held")
		}
		return nil
	})
	touchAndWait(t, f, touched, log, "w")
	if diff := cmp.Diff([]string{"Watch Create", "Watch Update"}, log.triggers("w")); diff != "" {
		t.Errorf("passes of a Widget whose status write's event came ahead of its answer (-want +got):\n%s", diff)
	}
}

// answerHolder is a client whose status patches call after once the API
// server answered, before the caller has the answer.
type answerHolder struct {
	client.Client
	after func(client.Object)
}

func (*answerHolder) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("answerHolder cannot watch")
}

func (c *answerHolder) Status() client.SubResourceWriter {
	return &heldStatusWriter{SubResourceWriter: c.Client.Status(), after: c.after}
}

type heldStatusWriter struct {
	client.SubResourceWriter
	after func(client.Object)
}

func (w *heldStatusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if err := w.SubResourceWriter.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	w.after(obj)
	return nil
}
