package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/handlers"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/shard"
)

// calls records which handler ran for which Widget, in order.
type calls struct {
	mu  sync.Mutex
	log []string
}

func (c *calls) add(handler, widget string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.log = append(c.log, handler+" "+widget)
}

// of returns the handlers that ran for widget, in order.
func (c *calls) of(widget string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, l := range c.log {
		if h, w, _ := strings.Cut(l, " "); w == widget {
			out = append(out, h)
		}
	}
	return out
}

// TestHandlers registers handlers of Widgets as two packages would, both
// handed the set New made, and checks that one controller runs them:
// the OnChange handlers in order, all of them when one fails, with the
// failure named in Ready, in the log and in the metrics; the OnRemove
// handlers with the key of a deleted Widget, all of them, again after one
// failed; and no handler can be added once the manager runs.
func TestHandlers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	seen := &calls{}
	logs := &bosuntest.LogRecorder{}
	name := "handlers-" + f.ns
	var set *handlers.Set[*testapi.Widget]
	flaky := map[string]bool{}
	bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{Namespaces: []string{f.ns}}, func(mgr ctrl.Manager) error {
		mgr = bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger()))
		// The first package.
		a := handlers.New[*testapi.Widget](mgr)
		err := errors.Join(
			a.Configure(func(_ *bosun.Builder[*testapi.Widget], r *bosun.Reconciler[*testapi.Widget]) { r.Name = name }),
			a.OnChange("double", func(_ context.Context, p *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
				seen.add("double", p.Object.Name)
				p.Object.Status.Result = 2 * p.Object.Spec.Value
				return ctrl.Result{}, nil
			}),
			a.OnChange("refuse", func(_ context.Context, p *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
				seen.add("refuse", p.Object.Name)
				if p.Object.Spec.Value == 13 {
					p.Log.Info("refusing an unlucky value")
					return ctrl.Result{}, conditions.Terminal("Unlucky", errors.New("13 is unlucky"))
				}
				return ctrl.Result{}, nil
			}),
			a.OnRemove("forget", func(_ context.Context, key client.ObjectKey) error {
				seen.add("forget", key.Name)
				return nil
			}),
		)
		// The second package, which is handed the same set.
		b := a
		set = b
		return errors.Join(err,
			b.OnChange("count", func(_ context.Context, p *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
				seen.add("count", p.Object.Name)
				return ctrl.Result{}, nil
			}),
			b.OnRemove("flaky", func(_ context.Context, key client.ObjectKey) error {
				seen.add("flaky", key.Name)
				if !flaky[key.Name] {
					flaky[key.Name] = true
					return errors.New("not this time")
				}
				return nil
			}),
		)
	})

	ok := f.create("ok", 3, 0, nil)
	f.create("bad", 13, 0, nil)
	w := f.waitReady("ok", metav1.ConditionTrue, conditions.ReasonSucceeded)
	if w.Status.Result != 6 {
		t.Errorf("result of ok = %d, want 6", w.Status.Result)
	}
	w = f.waitReady("bad", metav1.ConditionFalse, "Unlucky")
	if msg := conditions.Find(w.Status.Conditions, conditions.TypeReady).Message; !strings.Contains(msg, `handler "refuse": 13 is unlucky`) {
		t.Errorf("Ready of bad says %q, want the refusing handler named", msg)
	}
	for _, widget := range []string{"ok", "bad"} {
		if diff := cmp.Diff([]string{"double", "refuse", "count"}, seen.of(widget)[:3]); diff != "" {
			t.Errorf("handlers run for %s (-want +got):\n%s", widget, diff)
		}
	}
	var named []string
	for _, e := range logs.Entries() {
		if h, _ := e.Value("handler"); h != nil {
			named = append(named, fmt.Sprintf("%v: %s", h, e.Message))
		}
	}
	if !contains(named, "refuse: refusing an unlucky value") {
		t.Errorf("no log line of the refusing handler with its name; have %q", named)
	}

	if err := f.c.Delete(t.Context(), ok); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(context.Context) error {
		var got []string
		for _, h := range seen.of("ok") {
			if h == "forget" || h == "flaky" {
				got = append(got, h)
			}
		}
		if want := []string{"forget", "flaky", "forget", "flaky"}; !cmp.Equal(want, got) {
			return fmt.Errorf("handlers run for ok after its deletion: %q, want %q", got, want)
		}
		return nil
	})

	if diff := cmp.Diff(map[string]bool{"handlers" + "/do": true, "double/do": true, "refuse/do": true, "count/do": true, "forget/remove": true, "flaky/remove": true},
		stepsWithSamples(t, name)); diff != "" {
		t.Errorf("steps and phases with duration samples (-want +got):\n%s", diff)
	}
	if got := stepErrors(t, name); got["refuse/do"] == 0 || got["flaky/remove"] != 1 || got["double/do"] != 0 {
		t.Errorf("errors counted by step and phase: %v, want refuse/do and flaky/remove once", got)
	}

	err := set.OnChange("late", func(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) { return ctrl.Result{}, nil })
	if !errors.Is(err, handlers.ErrStarted) {
		t.Errorf("OnChange after start = %v, want ErrHandlersStarted", err)
	}
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// stepsWithSamples returns the "step/phase" of the duration metrics of
// controller that have samples.
func stepsWithSamples(t *testing.T, controller string) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	eachStepMetric(t, controller, bosun.MetricStepDuration, func(key string, m float64) {
		if m > 0 {
			got[key] = true
		}
	})
	return got
}

// stepErrors returns the error counts of controller by "step/phase".
func stepErrors(t *testing.T, controller string) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	eachStepMetric(t, controller, bosun.MetricStepErrors, func(key string, v float64) { got[key] = v })
	return got
}

// eachStepMetric calls fn with the step/phase and the value (the sample
// count of a histogram) of each metric of family for controller.
func eachStepMetric(t *testing.T, controller, family string, fn func(key string, v float64)) {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		if fam.GetName() != family {
			continue
		}
		for _, m := range fam.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] != controller {
				continue
			}
			v := m.GetCounter().GetValue()
			if h := m.GetHistogram(); h != nil {
				v = float64(h.GetSampleCount())
			}
			fn(labels["step"]+"/"+labels["phase"], v)
		}
	}
}

// TestHandlersRefuseBadRegistrations checks the registrations a HandlerSet
// refuses at once, before the manager starts, and that sets are per
// manager and kind.
func TestHandlersRefuseBadRegistrations(t *testing.T) {
	t.Parallel()
	cp := shared.ControlPlane(t)
	newManager := func(scheme *runtime.Scheme) ctrl.Manager {
		mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
		if err != nil {
			t.Fatal(err)
		}
		return mgr
	}
	mgr := newManager(cp.Scheme)
	nop := func(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) { return ctrl.Result{}, nil }
	gone := func(context.Context, client.ObjectKey) error { return nil }
	set := handlers.New[*testapi.Widget](mgr)
	if err := set.OnChange("taken", nop); err != nil {
		t.Fatal(err)
	}
	if err := set.OnRemove("taken", gone); err != nil {
		t.Errorf("OnRemove of a name an OnChange handler has = %v, want none: they are apart", err)
	}
	tests := []struct {
		name     string
		register func() error
		want     string
	}{
		{"empty name", func() error { return set.OnChange("", nop) }, "a handler has an empty name"},
		{"name taken", func() error { return set.OnChange("taken", nop) }, `two handlers are named "taken"`},
		{"remove name taken", func() error { return set.OnRemove("taken", gone) }, `two handlers are named "taken"`},
		{"the engine's step", func() error { return set.OnChange("handlers", nop) }, "is the engine's step that runs the handlers"},
		{"nil handler", func() error { return set.OnChange("nil", nil) }, `OnChange handler "nil" is nil`},
		{"nil configuration", func() error { return set.Configure(nil) }, "a configuration is nil"},
		{"kind unknown to the scheme", func() error {
			return handlers.New[*testapi.Widget](newManager(runtime.NewScheme())).OnChange("any", nop)
		}, "finding the kind of *testapi.Widget"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.register()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("registering = %v, want an error saying %q", err, tt.want)
			}
		})
	}

	if handlers.New[*testapi.Widget](mgr) == set {
		t.Error("New returned the same set twice; each call makes a set of its own")
	}
	if got, want := handlers.New[*corev1.ConfigMap](mgr).Name(), "configmap-handlers"; got != want {
		t.Errorf("Name of the ConfigMap handlers = %q, want %q", got, want)
	}
	if got, want := set.Name(), "widget.test.bosun.dev-handlers"; got != want {
		t.Errorf("Name of the Widget handlers = %q, want %q", got, want)
	}
}

// removals counts the OnRemove calls of sharded members by object.
type removals struct {
	mu    sync.Mutex
	calls map[string]map[string]int // object name -> member -> calls
}

func (r *removals) add(member, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls[name] == nil {
		r.calls[name] = map[string]int{}
	}
	r.calls[name][member]++
}

func (r *removals) of(name string) map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.calls[name])
}

// TestHandlersOnRemoveOnlyForObjectsGone runs a HandlerSet on two
// sharded members (package shard), each caching only its share of the
// Widgets. Keys of objects a member does not hold reach it all the same:
// the objects it lets go when the other member joins leave its cache, and
// its Enqueuer is given every key. OnRemove runs for none of those live
// objects, and for a Widget that is deleted.
func TestHandlersOnRemoveOnlyForObjectsGone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const ring, widgets = "handlers", 20
	label := shard.LabelPrefix + ring
	removed := &removals{calls: map[string]map[string]int{}}
	enqueuers := map[string]*bosun.Enqueuer{}
	start := func(id string) {
		t.Helper()
		m, err := shard.New(shard.Options{
			Ring: ring, Identity: id, Namespace: f.ns, Object: &testapi.Widget{},
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RenewPeriod: 500 * time.Millisecond,
			ObjectNamespaces: []string{f.ns},
		})
		if err != nil {
			t.Fatal(err)
		}
		logger, quiet := bosuntest.TestLogger(t)
		opts := ctrl.Options{
			Scheme: f.cp.Scheme, Logger: logger,
			Metrics:                       metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress:        "0",
			LeaderElection:                true,
			LeaderElectionID:              ring + "-sharder",
			LeaderElectionNamespace:       f.ns,
			LeaderElectionReleaseOnCancel: true,
			LeaseDuration:                 ptr.To(2 * time.Second),
			RenewDeadline:                 ptr.To(1500 * time.Millisecond),
			RetryPeriod:                   ptr.To(300 * time.Millisecond),
		}
		opts.Cache.DefaultNamespaces = map[string]cache.Config{f.ns: {}}
		m.ConfigureCache(&opts.Cache)
		mgr, err := ctrl.NewManager(f.cp.Config, opts)
		if err != nil {
			t.Fatal(err)
		}
		set := handlers.New[*testapi.Widget](mgr)
		if err := errors.Join(
			m.SetupWithManager(mgr),
			set.Configure(func(b *bosun.Builder[*testapi.Widget], r *bosun.Reconciler[*testapi.Widget]) {
				r.Name = "handlers-" + id + "-" + f.ns
				r.Options.IgnoreNamespacePolicy = true
				b.For(nil, builder.WithPredicates(m.Predicate())).WithOptions(m.ControllerOptions(controller.Options{}))
			}),
			set.OnChange("see", func(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) { return ctrl.Result{}, nil }),
			set.OnRemove("count", func(_ context.Context, key client.ObjectKey) error {
				removed.add(id, key.Name)
				return nil
			}),
		); err != nil {
			t.Fatal(err)
		}
		enqueuers[id] = set.Enqueuer()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := mgr.Start(ctx); err != nil {
				t.Errorf("member %s: %v", id, err)
			}
		}()
		t.Cleanup(func() {
			cancel()
			<-done
			quiet()
		})
	}
	// converge waits until every Widget is labelled for one of members,
	// none is draining, and each member holds some.
	converge := func(members ...string) {
		t.Helper()
		bosuntest.Eventually(t, func(ctx context.Context) error {
			var list testapi.WidgetList
			if err := f.c.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
				return err
			}
			held := map[string]int{}
			for _, w := range list.Items {
				if w.Labels[shard.DrainPrefix+ring] != "" {
					return fmt.Errorf("%s is draining", w.Name)
				}
				if !slices.Contains(members, w.Labels[label]) {
					return fmt.Errorf("%s is labelled %q, want one of %v", w.Name, w.Labels[label], members)
				}
				held[w.Labels[label]]++
			}
			if len(held) != len(members) {
				return fmt.Errorf("members holding Widgets: %v, want %v", held, members)
			}
			return nil
		}, bosuntest.Timeout(time.Minute))
	}
	var names []string
	for i := range widgets {
		names = append(names, fmt.Sprintf("w%02d", i))
		f.create(names[i], 1, 0, nil)
	}
	start("a")
	converge("a")
	// b joins: a lets half of its Widgets go, and they leave its cache.
	start("b")
	converge("a", "b")
	// Every key reaches both members. The keys a member let go come
	// through once its gate has forgotten that they left.
	for _, id := range []string{"a", "b"} {
		controller := "handlers-" + id + "-" + f.ns
		bosuntest.Eventually(t, func(ctx context.Context) error {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			before := reconciles(t, controller)
			for _, n := range names {
				enqueuers[id].Enqueue(client.ObjectKey{Namespace: f.ns, Name: n})
			}
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for got := 0.0; got < widgets; got = reconciles(t, controller) - before {
				select {
				case <-ctx.Done():
					return fmt.Errorf("member %s reconciled %v of the %d keys enqueued", id, got, widgets)
				case <-tick.C:
				}
			}
			return nil
		}, bosuntest.Timeout(time.Minute))
	}

	gone := names[0]
	if err := f.c.Delete(t.Context(), &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: gone}}); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(context.Context) error {
		if len(removed.of(gone)) == 0 {
			return fmt.Errorf("no OnRemove for the deleted %s", gone)
		}
		return nil
	}, bosuntest.Timeout(time.Minute))
	for _, n := range names[1:] {
		if got := removed.of(n); len(got) > 0 {
			t.Errorf("OnRemove ran for the live %s: calls by member %v", n, got)
		}
	}
}

// reconciles returns the reconciles controller-runtime counted for
// controller, whatever their result.
func reconciles(t *testing.T, controller string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, fam := range families {
		if fam.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range fam.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}
