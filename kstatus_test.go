package bosun_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// gate holds a Widget in mode slow back: it asks to come back later
// before the steps after it run.
type gate struct{}

func (gate) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if req.Object.Spec.Mode == "slow" {
		return ctrl.Result{RequeueAfter: time.Hour}, nil
	}
	return ctrl.Result{}, nil
}

// quotient divides, refusing a zero divisor for good.
type quotient struct{}

func (quotient) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if req.Object.Spec.Divisor == 0 {
		return ctrl.Result{}, conditions.Terminalf("ZeroDivisor", "divisor is zero")
	}
	req.Object.Status.Result = req.Object.Spec.Value / req.Object.Spec.Divisor
	return ctrl.Result{}, nil
}

// kstatusOf is what kstatus, the library behind Flux's and Argo CD's
// health checks, computes for w, and w's Reconciling and Stalled
// conditions as status/reason.
func kstatusOf(t *testing.T, w *testapi.Widget) (status.Status, map[string]string) {
	t.Helper()
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	if err != nil {
		t.Fatal(err)
	}
	res, err := status.Compute(&unstructured.Unstructured{Object: raw})
	if err != nil {
		t.Fatal(err)
	}
	conds := map[string]string{}
	for _, typ := range []string{conditions.TypeReconciling, conditions.TypeStalled} {
		if c := conditions.Find(w.Status.Conditions, typ); c != nil {
			conds[typ] = string(c.Status) + "/" + c.Reason
		}
	}
	return res.Status, conds
}

// TestKStatus follows a Widget through the states kstatus tells apart:
// in progress while a step is not done (and Ready is not True, though the
// steps after it reported True before), failed after a terminal error,
// current once Ready.
func TestKStatus(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:    "kstatus",
		Steps:   []bosun.Step[*testapi.Widget]{gate{}, quotient{}},
		Options: bosun.Options{KStatus: true},
	}
	f.run(r, runOptions{})
	ctx := t.Context()
	f.create("w", 6, 2, nil)
	w := f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	got, conds := kstatusOf(t, w)
	if got != status.CurrentStatus || len(conds) != 0 {
		t.Errorf("Ready widget: kstatus %s with %v, want Current and no Reconciling or Stalled", got, conds)
	}

	steps := []struct {
		name      string
		change    func(*testapi.Widget)
		ready     conditions.Reason
		want      status.Status
		wantConds map[string]string
	}{{
		name:      "a step not done",
		change:    func(w *testapi.Widget) { w.Spec.Mode = "slow" },
		ready:     conditions.ReasonProgressing,
		want:      status.InProgressStatus,
		wantConds: map[string]string{conditions.TypeReconciling: "True/" + string(conditions.ReasonProgressing)},
	}, {
		name:      "a terminal error",
		change:    func(w *testapi.Widget) { w.Spec.Mode, w.Spec.Divisor = "fast", 0 },
		ready:     "ZeroDivisor",
		want:      status.FailedStatus,
		wantConds: map[string]string{conditions.TypeStalled: "True/ZeroDivisor"},
	}, {
		name:      "fixed",
		change:    func(w *testapi.Widget) { w.Spec.Divisor = 3 },
		ready:     conditions.ReasonSucceeded,
		want:      status.CurrentStatus,
		wantConds: map[string]string{},
	}}
	for _, step := range steps {
		patch := client.MergeFrom(w.DeepCopy())
		step.change(w)
		if err := f.c.Patch(ctx, w, patch); err != nil {
			t.Fatal(err)
		}
		readyStatus := metav1.ConditionFalse
		if step.ready == conditions.ReasonSucceeded {
			readyStatus = metav1.ConditionTrue
		}
		w = f.waitReady("w", readyStatus, step.ready)
		got, conds := kstatusOf(t, w)
		if got != step.want {
			t.Errorf("%s: kstatus %s, want %s", step.name, got, step.want)
		}
		if diff := cmp.Diff(step.wantConds, conds); diff != "" {
			t.Errorf("%s: Reconciling and Stalled (-want +got):\n%s", step.name, diff)
		}
	}
}

// TestNoKStatusByDefault: without Options.KStatus the engine keeps Ready
// alone, and still does not call a Widget whose gate holds it Ready.
func TestNoKStatusByDefault(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.run(&bosun.Reconciler[*testapi.Widget]{Name: "nokstatus", Steps: []bosun.Step[*testapi.Widget]{gate{}, quotient{}}}, runOptions{})
	w := f.create("w", 6, 2, nil)
	patch := client.MergeFrom(w.DeepCopy())
	w.Spec.Mode = "slow"
	if err := f.c.Patch(t.Context(), w, patch); err != nil {
		t.Fatal(err)
	}
	w = f.waitReady("w", metav1.ConditionFalse, conditions.ReasonProgressing)
	if _, conds := kstatusOf(t, w); len(conds) != 0 {
		t.Errorf("conditions %v without Options.KStatus", conds)
	}
}

// holdGate asks to come back later, before the steps after it run, while
// the Widget carries the label hold: a step waiting on something of its
// own (a cache to show its write) on a Widget whose spec did not change.
type holdGate struct{}

func (holdGate) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if req.Object.Labels["hold"] != "" {
		return ctrl.Result{RequeueAfter: time.Hour}, nil
	}
	return ctrl.Result{}, nil
}

// TestEarlyReturnKeepsReady: a pass that a step ends early on a Widget
// already Ready for its generation leaves Ready True and writes nothing; a
// new generation ended early the same way is Progressing.
func TestEarlyReturnKeepsReady(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var counter bosuntest.ReconcileCounter
	f.run(&bosun.Reconciler[*testapi.Widget]{Name: "earlyready", Steps: []bosun.Step[*testapi.Widget]{holdGate{}, quotient{}}}, runOptions{counter: &counter})
	ctx := t.Context()
	f.create("w", 6, 2, nil)
	w := f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)

	patch := client.MergeFrom(w.DeepCopy())
	w.Labels = map[string]string{"hold": "true"}
	since := time.Now()
	if err := f.c.Patch(ctx, w, patch); err != nil {
		t.Fatal(err)
	}
	held := w.ResourceVersion
	key := client.ObjectKeyFromObject(w)
	bosuntest.Eventually(t, func(context.Context) error {
		if n := counter.CountSince(key, since); n == 0 {
			return errors.New("no pass since the label was set")
		}
		return nil
	})
	got, err := f.get(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != held {
		t.Errorf("the early pass wrote the Widget: resourceVersion %s, want %s; Ready %v", got.ResourceVersion, held, conditions.Find(got.Status.Conditions, conditions.TypeReady))
	}
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)

	patch = client.MergeFrom(got.DeepCopy())
	got.Spec.Value = 9
	if err := f.c.Patch(ctx, got, patch); err != nil {
		t.Fatal(err)
	}
	f.waitReady("w", metav1.ConditionFalse, conditions.ReasonProgressing)
}
