package bosun_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// triggers are the triggers of the passes of name, as "Kind Event"
// ("Watch Create", "Requeue").
func (l *passLog) triggers(name string) []string {
	var out []string
	for _, r := range l.since(name, 0) {
		t := string(r.Trigger.Kind)
		if r.Trigger.Event != "" {
			t += " " + r.Trigger.Event
		}
		out = append(out, t)
	}
	return out
}

// waitPasses waits until the Widget name has had n passes.
func waitPasses(t *testing.T, log *passLog, name string, n int) {
	t.Helper()
	bosuntest.Eventually(t, func(context.Context) error {
		if got := log.triggers(name); len(got) < n {
			return fmt.Errorf("%s had passes %v, want %d", name, got, n)
		}
		return nil
	})
}

// TestOwnWritesStartNoPass checks that the status write of a pass that
// leaves a Widget Ready starts no second pass, while a change by someone
// else, of the metadata or of the status the engine wrote, does; and that
// ReconcileOwnWrites brings the second pass back.
//
// The Widgets are touched after they are Ready, and the test waits for the
// pass of that change: the watch delivers the events of one object in
// order, so by then the event of the engine's own write has come too.
func TestOwnWritesStartNoPass(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		own  bool
		want []string
		// fixed is how many passes the foreign status write and the
		// touch after it bring.
		fixed int
	}{
		{name: "dropped", want: []string{"Watch Create", "Watch Update"}, fixed: 2},
		{name: "ReconcileOwnWrites", own: true, want: []string{"Watch Create", "Watch Update", "Watch Update"}, fixed: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			log := &passLog{}
			r := newReconciler("own-writes", newJournal(), false)
			r.Observers = []bosun.PassObserver{log}
			r.ReconcileOwnWrites = tc.own
			f.run(r, runOptions{})
			const n = 10
			for i := range n {
				f.create("w"+strconv.Itoa(i), int64(10*i), 5, nil)
			}
			for i := range n {
				f.waitReady("w"+strconv.Itoa(i), metav1.ConditionTrue, conditions.ReasonSucceeded)
			}
			for i := range n {
				f.touch("w"+strconv.Itoa(i), "1")
			}
			want := len(tc.want)
			for i := range n {
				waitPasses(t, log, "w"+strconv.Itoa(i), want)
			}
			// A write of the status by someone else is seen and undone.
			w, err := f.get(t.Context(), "w3")
			if err != nil {
				t.Fatal(err)
			}
			w.Status.Result = 999
			if err := f.c.Status().Update(t.Context(), w); err != nil {
				t.Fatalf("writing the status of w3: %v", err)
			}
			bosuntest.Eventually(t, func(ctx context.Context) error {
				w, err := f.get(ctx, "w3")
				if err != nil {
					return err
				}
				if w.Status.Result != 6 {
					return fmt.Errorf("status.result is %d, want 6", w.Status.Result)
				}
				return nil
			})
			// The engine's write that undid it is settled too (or, with
			// ReconcileOwnWrites, brings a pass): touch again and count.
			f.touch("w3", "2")
			waitPasses(t, log, "w3", want+tc.fixed)
			for i := range n {
				name := "w" + strconv.Itoa(i)
				got := log.triggers(name)
				if name == "w3" {
					if len(got) != want+tc.fixed {
						t.Errorf("%s: passes %v, want %d", name, got, want+tc.fixed)
					}
					continue
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s: passes (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// stepper raises status.result by one a pass, up to 3, and only then
// reports its condition True; until then it asks to be run again in an
// hour. It relies on the event of its own status write to go on quickly.
type stepper struct{}

func (stepper) Name() string         { return "stepper" }
func (stepper) Conditions() []string { return []string{"Stepped"} }

func (stepper) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	conds := w.Status.Conditions
	if w.Status.Result < 3 {
		w.Status.Result++
	}
	if w.Status.Result < 3 {
		conditions.Set(&conds, metav1.Condition{Type: "Stepped", Status: metav1.ConditionFalse, Reason: "Stepping", ObservedGeneration: w.Generation}, metav1.Now())
		w.Status.Conditions = conds
		return ctrl.Result{RequeueAfter: time.Hour}, nil
	}
	conditions.Set(&conds, metav1.Condition{Type: "Stepped", Status: metav1.ConditionTrue, Reason: "Stepped", ObservedGeneration: w.Generation}, metav1.Now())
	w.Status.Conditions = conds
	return ctrl.Result{}, nil
}

// TestOwnWritesOfUnsettledPassesAreSeen checks that a pass that did not
// leave the object Ready gets the next pass its write brings, as in a
// hand-written controller: the stepper gets from 0 to 3 in three passes
// without waiting for its hour.
func TestOwnWritesOfUnsettledPassesAreSeen(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	log := &passLog{}
	r := &bosun.Reconciler[*testapi.Widget]{Name: "own-writes-unsettled", Steps: []bosun.Step[*testapi.Widget]{stepper{}}, Observers: []bosun.PassObserver{log}}
	f.run(r, runOptions{})
	const n = 5
	for i := range n {
		f.create("s"+strconv.Itoa(i), 1, 1, nil)
	}
	for i := range n {
		w := f.waitReady("s"+strconv.Itoa(i), metav1.ConditionTrue, conditions.ReasonSucceeded)
		if w.Status.Result != 3 {
			t.Errorf("%s: status.result is %d, want 3", w.Name, w.Status.Result)
		}
	}
	// Three passes write; the last settles, and its event starts none.
	for i := range n {
		f.touch("s"+strconv.Itoa(i), "1")
	}
	for i := range n {
		name := "s" + strconv.Itoa(i)
		waitPasses(t, log, name, 4)
		if got := log.triggers(name); len(got) != 4 {
			t.Errorf("%s: passes %v, want 3 to step and 1 for the touch", name, got)
		}
	}
}

// TestOwnWritesAfterErrorsAreSeen checks that an object whose pass failed
// is not left behind: its write (Ready False) does not settle it, and
// fixing the spec makes it Ready with no second pass for that last write.
func TestOwnWritesAfterErrorsAreSeen(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	log := &passLog{}
	r := newReconciler("own-writes-errors", newJournal(), false)
	r.Observers = []bosun.PassObserver{log}
	f.run(r, runOptions{})
	f.create("e", 10, 0, nil)
	f.waitReady("e", metav1.ConditionFalse, "ZeroDivisor")
	w := &testapi.Widget{}
	w.Namespace, w.Name = f.ns, "e"
	if err := f.c.Patch(t.Context(), w, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"divisor":2}}`))); err != nil {
		t.Fatal(err)
	}
	w = f.waitReady("e", metav1.ConditionTrue, conditions.ReasonSucceeded)
	if w.Status.Result != 5 {
		t.Errorf("status.result is %d, want 5", w.Status.Result)
	}
}
