package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

func TestCompleteValidatesAtSetup(t *testing.T) {
	t.Parallel()
	cp := shared.ControlPlane(t)
	mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{Scheme: cp.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:  "setup",
		Steps: []bosun.Step[*testapi.Widget]{&divide{j: newJournal()}, &output{j: newJournal()}},
	}
	err = bosun.ControllerManagedBy[*testapi.Widget](mgr).Complete(r)
	if !errors.Is(err, bosun.ErrInvalidConfig) || !strings.Contains(err.Error(), `step "output"`) {
		t.Fatalf("Complete() = %v, want ErrInvalidConfig naming step output", err)
	}
	if r.Client == nil || r.APIReader == nil || r.Recorder == nil {
		t.Errorf("Complete did not fill Client, APIReader and Recorder from the manager")
	}

	named := &bosun.Reconciler[*testapi.Widget]{Steps: []bosun.Step[*testapi.Widget]{&divide{j: newJournal()}}}
	if err := bosun.ControllerManagedBy[*testapi.Widget](mgr).Named("by-builder").Complete(named); err != nil {
		t.Fatalf("Complete() = %v", err)
	}
	if named.Name != "by-builder" {
		t.Errorf("Name = %q, want the builder's name", named.Name)
	}
}

// events returns the events.k8s.io events about a Widget, by reason, with
// their series counts added.
func (f *fixture) events(ctx context.Context, widget string) (map[conditions.Reason]int, error) {
	var list eventsv1.EventList
	if err := f.c.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
		return nil, err
	}
	got := map[conditions.Reason]int{}
	for _, e := range list.Items {
		if e.Regarding.Name != widget {
			continue
		}
		n := 1
		if e.Series != nil {
			n = int(e.Series.Count)
		}
		got[conditions.Reason(e.Reason)] += n
	}
	return got, nil
}

func TestEventsOnlyWhenSomethingHappened(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j := newJournal()
	log := &passLog{}
	r := newReconciler("events", j, true)
	r.Options.Observers = []bosun.PassObserver{log}
	f.run(r, runOptions{})
	f.create("ok", 6, 3, nil)
	f.create("bad", 6, 0, nil)
	f.waitReady("ok", metav1.ConditionTrue, conditions.ReasonSucceeded)
	f.waitReady("bad", metav1.ConditionFalse, "ZeroDivisor")
	var touched time.Time
	for i := range 3 {
		before := j.count(j.do, "ok") + j.count(j.do, "bad")
		touched = time.Now()
		f.touch("ok", fmt.Sprint(i))
		f.touch("bad", fmt.Sprint(i))
		bosuntest.Eventually(t, func(context.Context) error {
			if j.count(j.do, "ok")+j.count(j.do, "bad") < before+2 {
				return errors.New("not reconciled yet")
			}
			return nil
		})
	}
	// The passes of the last touches have ended, and with them what they
	// recorded.
	bosuntest.Eventually(t, func(context.Context) error {
		for _, name := range []string{"ok", "bad"} {
			if !slices.ContainsFunc(log.since(name, 0), func(r bosun.PassReport) bool { return !r.Start.Before(touched) }) {
				return fmt.Errorf("no pass of %s since the last touch has ended", name)
			}
		}
		return nil
	})
	// The recorder sends in the background. The events of a Widget made
	// now are recorded after all of those above: once they have come, so
	// have any the touches brought.
	f.create("last", 6, 0, nil)
	want := map[string]map[conditions.Reason]int{
		"ok":   {conditions.ReasonClaimed: 1},
		"bad":  {conditions.ReasonClaimed: 1, "ZeroDivisor": 1},
		"last": {conditions.ReasonClaimed: 1, "ZeroDivisor": 1},
	}
	f.waitEvents("last", want["last"])
	for _, name := range []string{"ok", "bad"} {
		f.waitEvents(name, want[name])
	}
}

// waitEvents waits until the events about the Widget named are, by reason
// with their series counts, those of want.
func (f *fixture) waitEvents(widget string, want map[conditions.Reason]int) {
	f.t.Helper()
	bosuntest.Eventually(f.t, func(ctx context.Context) error {
		got, err := f.events(ctx, widget)
		if err != nil {
			return err
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("events of %s (-want +got):\n%s", widget, diff)
		}
		return nil
	})
}

func TestMetricsPerStepAndPhase(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(newReconciler("metrics", newJournal(), true), runOptions{})
	w := f.create("ok", 6, 3, nil)
	f.create("bad", 6, 0, nil)
	f.waitReady("ok", metav1.ConditionTrue, conditions.ReasonSucceeded)
	f.waitReady("bad", metav1.ConditionFalse, "ZeroDivisor")
	if err := f.c.Delete(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	f.waitGone("ok")

	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	durations := map[string]uint64{}
	errs := map[string]float64{}
	for _, fam := range families {
		for _, m := range fam.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["controller"] != "metrics" {
				continue
			}
			key := labels["step"] + "/" + labels["phase"]
			switch fam.GetName() {
			case bosun.MetricStepDuration:
				durations[key] = m.GetHistogram().GetSampleCount()
			case bosun.MetricStepErrors:
				errs[key] = m.GetCounter().GetValue()
			}
		}
	}
	for _, key := range []string{"divide/do", "output/do", "output/cleanup", "divide/post"} {
		if durations[key] == 0 {
			t.Errorf("no duration samples for %s; have %v", key, durations)
		}
	}
	if errs["divide/do"] == 0 {
		t.Errorf("no errors counted for divide/do; have %v", errs)
	}
	if errs["output/do"] != 0 {
		t.Errorf("errors counted for output/do: %v", errs["output/do"])
	}
}
