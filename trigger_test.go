package bosun_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// passLog keeps the reports of the passes of a reconciler, by object name.
type passLog struct {
	mu      sync.Mutex
	reports map[string][]bosun.PassReport
}

func (l *passLog) ObservePass(_ context.Context, r bosun.PassReport) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reports == nil {
		l.reports = map[string][]bosun.PassReport{}
	}
	l.reports[r.Object.Name] = append(l.reports[r.Object.Name], r)
}

// since returns the reports of name from the n-th on.
func (l *passLog) since(name string, n int) []bosun.PassReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	rs := l.reports[name]
	if n > len(rs) {
		return nil
	}
	return slices.Clone(rs[n:])
}

func (l *passLog) count(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reports[name])
}

// waitTrigger waits for a pass of name, after the first n, whose trigger
// matches want, and returns it.
func (l *passLog) waitTrigger(t *testing.T, name string, n int, want func(bosun.Trigger) bool, what string) bosun.PassReport {
	t.Helper()
	var found bosun.PassReport
	bosuntest.Eventually(t, func(context.Context) error {
		rs := l.since(name, n)
		for _, r := range rs {
			if want(r.Trigger) {
				found = r
				return nil
			}
		}
		var seen []string
		for _, r := range rs {
			seen = append(seen, r.Trigger.String())
		}
		return fmt.Errorf("no pass of %s triggered by %s yet; triggers seen: %q", name, what, seen)
	})
	return found
}

// configMapChild keeps a ConfigMap controlled by each Widget, and asks to
// be run again soon for Widgets whose value is 7 (a poll).
// It records the trigger of each pass it runs in, as Pass.Trigger tells it.
type configMapChild struct {
	mu   sync.Mutex
	seen map[string][]bosun.Trigger
}

func (*configMapChild) Name() string { return "configmap" }

func (s *configMapChild) triggers(name string) []bosun.Trigger {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen[name])
}

func (s *configMapChild) Do(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	s.mu.Lock()
	if s.seen == nil {
		s.seen = map[string][]bosun.Trigger{}
	}
	s.seen[w.Name] = append(s.seen[w.Name], req.Trigger)
	s.mu.Unlock()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-cm"}}
	if _, err := controllerutil.CreateOrUpdate(ctx, req.Client, cm, func() error {
		cm.Data = map[string]string{"value": fmt.Sprint(w.Spec.Value)}
		return controllerutil.SetControllerReference(w, cm, req.Client.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	if w.Spec.Value == 7 {
		return ctrl.Result{RequeueAfter: 200 * time.Millisecond}, nil
	}
	return ctrl.Result{}, nil
}

// TestPassTriggers: each pass knows why it ran, and tells its steps and
// its observers: the reconciled object's own events, an owned child's, a
// related object's through Watches, a request annotation, an Enqueuer, a
// poll's requeue and the periodic resync.
func TestPassTriggers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	log := &passLog{}
	var enq *bosun.Enqueuer
	inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == f.ns })
	// A Secret named poke-<widget> brings a pass of that Widget.
	poke := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		name, ok := strings.CutPrefix(o.GetName(), "poke-")
		if !ok {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
	})
	child := &configMapChild{}
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:    "triggers",
		Steps:   []bosun.Step[*testapi.Widget]{child},
		Options: bosun.Options{Observers: []bosun.PassObserver{log}},
	}
	bosuntest.RunManager(t, f.cp, func(mgr ctrl.Manager) error {
		b := bosun.ControllerManagedBy[*testapi.Widget](mgr).
			For(&testapi.Widget{}, builder.WithPredicates(inNamespace)).
			Owns(&corev1.ConfigMap{}, builder.WithPredicates(inNamespace)).
			Watches(&corev1.Secret{}, poke, builder.WithPredicates(inNamespace))
		enq = b.Enqueuer()
		return b.Complete(r)
	})
	widgetGVK := testapi.GroupVersion.WithKind("Widget")
	f.create("w", 6, 3, nil)
	key := types.NamespacedName{Namespace: f.ns, Name: "w"}

	first := log.waitTrigger(t, "w", 0, func(tr bosun.Trigger) bool { return tr.Kind == bosun.TriggerWatch }, "a watch")
	want := bosun.Trigger{Kind: bosun.TriggerWatch, Source: "For", Event: "Create", GVK: widgetGVK, Object: key}
	if diff := cmp.Diff(want, first.Trigger); diff != "" {
		t.Errorf("trigger of the first pass (-want +got):\n%s", diff)
	}
	if seen := child.triggers("w"); len(seen) == 0 || seen[0] != first.Trigger {
		t.Errorf("the step saw the triggers %v; want the first to be %v", seen, first.Trigger)
	}
	if got := stepNames(first); !slices.Contains(got, "configmap") {
		t.Errorf("steps of the first pass = %q, want configmap among them", got)
	}
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	bosuntest.Eventually(t, func(context.Context) error {
		rs := log.since("w", 0)
		if last := rs[len(rs)-1]; conditions.Find(last.Conditions, conditions.TypeReady) == nil {
			return fmt.Errorf("the last pass reports no Ready condition: %v", last.Conditions)
		}
		return nil
	})

	t.Run("owned child", func(t *testing.T) {
		n := log.count("w")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "w-cm"}}
		if err := f.c.Delete(t.Context(), cm); err != nil {
			t.Fatal(err)
		}
		got := log.waitTrigger(t, "w", n, func(tr bosun.Trigger) bool { return tr.Source == "Owns" }, "the child")
		want := bosun.Trigger{Kind: bosun.TriggerWatch, Source: "Owns", Event: "Delete", GVK: corev1.SchemeGroupVersion.WithKind("ConfigMap"),
			Object: types.NamespacedName{Namespace: f.ns, Name: "w-cm"}}
		if diff := cmp.Diff(want, got.Trigger); diff != "" {
			t.Errorf("trigger (-want +got):\n%s", diff)
		}
	})
	t.Run("related object", func(t *testing.T) {
		n := log.count("w")
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "poke-w"}}
		if err := f.c.Create(t.Context(), s); err != nil {
			t.Fatal(err)
		}
		got := log.waitTrigger(t, "w", n, func(tr bosun.Trigger) bool { return tr.Source == "Watches" }, "the Secret")
		want := bosun.Trigger{Kind: bosun.TriggerWatch, Source: "Watches", Event: "Create", GVK: corev1.SchemeGroupVersion.WithKind("Secret"),
			Object: types.NamespacedName{Namespace: f.ns, Name: "poke-w"}}
		if diff := cmp.Diff(want, got.Trigger); diff != "" {
			t.Errorf("trigger (-want +got):\n%s", diff)
		}
	})
	t.Run("spec change", func(t *testing.T) {
		n := log.count("w")
		w, err := f.get(t.Context(), "w")
		if err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(w.DeepCopy())
		w.Spec.Value = 9
		if err := f.c.Patch(t.Context(), w, patch); err != nil {
			t.Fatal(err)
		}
		log.waitTrigger(t, "w", n, func(tr bosun.Trigger) bool {
			return tr.Kind == bosun.TriggerWatch && tr.Source == "For" && tr.Event == "Update"
		}, "the Widget's update")
	})
	t.Run("request annotation", func(t *testing.T) {
		n := log.count("w")
		w, err := f.get(t.Context(), "w")
		if err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(w.DeepCopy())
		metav1.SetMetaDataAnnotation(&w.ObjectMeta, bosun.AnnotationReconcileRequestedAt, "now")
		if err := f.c.Patch(t.Context(), w, patch); err != nil {
			t.Fatal(err)
		}
		log.waitTrigger(t, "w", n, func(tr bosun.Trigger) bool { return tr.Kind == bosun.TriggerRequested }, "the request")
	})
	t.Run("enqueuer", func(t *testing.T) {
		n := log.count("w")
		enq.Enqueue(key)
		log.waitTrigger(t, "w", n, func(tr bosun.Trigger) bool { return tr.Kind == bosun.TriggerEnqueued }, "the Enqueuer")
	})
	t.Run("poll", func(t *testing.T) {
		f.create("poll", 7, 1, nil)
		log.waitTrigger(t, "poll", 0, func(tr bosun.Trigger) bool { return tr.Kind == bosun.TriggerRequeue }, "a requeue")
	})
	t.Run("resync", func(t *testing.T) {
		f.create("resync", 1, 1, map[string]string{bosun.AnnotationResyncInterval: "1s"})
		log.waitTrigger(t, "resync", 0, func(tr bosun.Trigger) bool { return tr.Kind == bosun.TriggerResync }, "the resync")
	})
}

// stepNames are the names of the steps a pass ran.
func stepNames(r bosun.PassReport) []string {
	var names []string
	for _, s := range r.Steps {
		names = append(names, s.Name)
	}
	return names
}

// TestObservationOfManager: the reconcilers a Builder sets up are listed
// on their manager's Observation, whose observers see their passes.
func TestObservationOfManager(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	log := &passLog{}
	j := newJournal()
	var obs *bosun.Observation
	bosuntest.RunManager(t, f.cp, func(mgr ctrl.Manager) error {
		obs = bosun.ObservationOf(mgr)
		obs.AddObserver(log)
		inNamespace := builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == f.ns }))
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).For(&testapi.Widget{}, inNamespace).Complete(newReconciler("observed", j, false))
	})
	if obs == nil {
		t.Fatal("ObservationOf(the manager of RunManager) = nil, want the Observation it carries")
	}
	infos := obs.Reconcilers()
	if len(infos) != 1 || infos[0].Name != "observed" || infos[0].GVK != testapi.GroupVersion.WithKind("Widget") {
		t.Fatalf("Reconcilers() = %+v, want the one named observed, of Widgets", infos)
	}
	if g := infos[0].Graph(); len(g.Steps) == 0 {
		t.Errorf("the reconciler's graph has no steps")
	}
	f.create("w", 6, 3, nil)
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	bosuntest.Eventually(t, func(context.Context) error {
		for _, r := range log.since("w", 0) {
			if r.Controller == "observed" && r.Error == "" && len(r.Steps) > 0 && r.Duration > 0 {
				return nil
			}
		}
		return fmt.Errorf("no report of a pass that ran steps yet")
	})
}

// TestObservationLivesOnTheManager: a manager carries the Observation
// Attach gave it, through bosuntest's wrappers too; a manager given none
// has none, and a nil Observation refuses observers with a message.
func TestObservationLivesOnTheManager(t *testing.T) {
	plain := struct{ ctrl.Manager }{}
	if got := bosun.ObservationOf(plain); got != nil {
		t.Errorf("ObservationOf(a plain manager) = %p, want nil", got)
	}
	obs := new(bosun.Observation)
	mgr := obs.Attach(plain)
	wrapped := bosuntest.ManagerWithClient(bosuntest.ManagerWithLogger(mgr, logr.Discard()), nil)
	got := []*bosun.Observation{bosun.ObservationOf(mgr), bosun.ObservationOf(wrapped), bosun.ObservationOf(new(bosun.Observation).Attach(plain))}
	if got[0] != obs || got[1] != obs || got[2] == obs {
		t.Errorf("ObservationOf: attached %p, wrapped %p, another manager %p; want %p, %p and another", got[0], got[1], got[2], obs, obs)
	}
	if r := bosun.ObservationOf(plain).Reconcilers(); r != nil {
		t.Errorf("Reconcilers of a nil Observation = %v, want nil", r)
	}
	defer func() {
		if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "Observation.Attach") {
			t.Errorf("AddObserver on nil: recovered %v, want a panic naming Observation.Attach", v)
		}
	}()
	bosun.ObservationOf(plain).AddObserver(bosun.PassObserverFunc(func(context.Context, bosun.PassReport) {}))
}
