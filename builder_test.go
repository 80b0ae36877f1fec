package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

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
func (f *fixture) events(ctx context.Context, widget string) (map[string]int, error) {
	var list eventsv1.EventList
	if err := f.c.List(ctx, &list, client.InNamespace(f.ns)); err != nil {
		return nil, err
	}
	got := map[string]int{}
	for _, e := range list.Items {
		if e.Regarding.Name != widget {
			continue
		}
		n := 1
		if e.Series != nil {
			n = int(e.Series.Count)
		}
		got[e.Reason] += n
	}
	return got, nil
}

func TestEventsOnlyWhenSomethingHappened(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j := newJournal()
	f.run(newReconciler("events", j, true), runOptions{})
	f.create("ok", 6, 3, nil)
	f.create("bad", 6, 0, nil)
	f.waitReady("ok", metav1.ConditionTrue, conditions.ReasonSucceeded)
	f.waitReady("bad", metav1.ConditionFalse, "ZeroDivisor")
	for i := range 3 {
		before := j.count(j.do, "ok") + j.count(j.do, "bad")
		f.touch("ok", fmt.Sprint(i))
		f.touch("bad", fmt.Sprint(i))
		bosuntest.Eventually(t, func(context.Context) error {
			if j.count(j.do, "ok")+j.count(j.do, "bad") < before+2 {
				return errors.New("not reconciled yet")
			}
			return nil
		})
	}
	time.Sleep(2 * time.Second) // let the recorder send what it has
	for name, want := range map[string]map[string]int{
		"ok":  {bosun.EventClaimed: 1},
		"bad": {bosun.EventClaimed: 1, "ZeroDivisor": 1},
	} {
		got, err := f.events(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("events of %s = %v, want %v", name, got, want)
		}
	}
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
