package bosun_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/tuning"
	"github.com/bosunkit/bosun/webhook"
)

// triggers are the triggers of the passes of name, as "Kind Event"
// ("Watch Create", "Requeue").
func (l *passLog) triggers(name string) []string {
	var out []string
	for _, r := range l.since(name, 0) {
		t := r.Trigger.Kind
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
// ReconcileOwnWrites brings the second pass back, as controller-runtime's
// plumbing has it. It holds as well with package operator's cache, and
// with tuning, whose cache trims what the API server sends before it is
// decoded.
//
// The Widgets are touched after they are Ready, and the test waits for the
// pass of that change: the watch delivers the events of one object in
// order, so by then the event of the engine's own write has come too.
func TestOwnWritesStartNoPass(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		own  bool
		// lean runs the manager as package operator makes it; tuned
		// with tuning too (tuning.Enable).
		lean, tuned bool
		// watchKind adds another watch of Widgets to the controller.
		watchKind bool
		want      []string
		// fixed is how many passes the foreign status write and the
		// touch after it bring.
		fixed int
	}{
		{name: "dropped", want: []string{"Watch Create", "Watch Update"}, fixed: 2},
		{name: "dropped, as package operator", lean: true, want: []string{"Watch Create", "Watch Update"}, fixed: 2},
		{name: "dropped, with tuning", lean: true, tuned: true, want: []string{"Watch Create", "Watch Update"}, fixed: 2},
		{name: "dropped, beside another watch of the kind", watchKind: true, want: []string{"Watch Create", "Watch Update"}, fixed: 2},
		{name: "ReconcileOwnWrites", own: true, want: []string{"Watch Create", "Watch Update", "Watch Update"}, fixed: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			log := &passLog{}
			r := newReconciler("own-writes", newJournal(), false)
			r.Options.Observers = []bosun.PassObserver{log}
			r.Options.ReconcileOwnWrites = tc.own
			opts := runOptions{watchKind: tc.watchKind}
			if tc.lean {
				opts.configure = asOperator
			}
			if tc.tuned {
				opts.configure = func(o *ctrl.Options) {
					asOperator(o)
					tuning.Enable(o)
				}
			}
			f.run(r, opts)
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
	r := &bosun.Reconciler[*testapi.Widget]{Name: "own-writes-unsettled", Steps: []bosun.Step[*testapi.Widget]{stepper{}}, Options: bosun.Options{Observers: []bosun.PassObserver{log}}}
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
	r.Options.Observers = []bosun.PassObserver{log}
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

// fixDuringWrite is a client whose status writes of one Widget, while its
// divisor is zero, let the write through and then, before answering,
// have a user fix the divisor, and wait until the controller has seen
// that change (the engine holds back the event of an unknown version while
// its own write is on its way).
type fixDuringWrite struct {
	client.Client
	user    client.Client
	name    string
	skipped func() float64
	done    atomic.Bool
}

func (*fixDuringWrite) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errors.New("fixDuringWrite cannot watch")
}

func (c *fixDuringWrite) Status() client.SubResourceWriter {
	return &fixDuringStatusWrite{SubResourceWriter: c.Client.Status(), c: c}
}

type fixDuringStatusWrite struct {
	client.SubResourceWriter
	c *fixDuringWrite
}

func (s *fixDuringStatusWrite) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	// The write that reports the zero divisor: the engine's status write
	// is answered with metadata only, so the patch tells it.
	body, err := patch.Data(obj)
	if err != nil {
		return err
	}
	if obj.GetName() != s.c.name || !bytes.Contains(body, []byte("ZeroDivisor")) || s.c.done.Load() {
		return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
	}
	before := s.c.skipped()
	if err := s.SubResourceWriter.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	s.c.done.Store(true)
	fix := &testapi.Widget{}
	fix.Namespace, fix.Name = obj.GetNamespace(), obj.GetName()
	if err := s.c.user.Patch(ctx, fix, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"divisor":2}}`))); err != nil {
		return fmt.Errorf("fixing the divisor: %w", err)
	}
	// Both events, the write's own and the fix, reach the controller
	// while this write has not answered. Should the engine let them
	// through, the wait ends at its deadline and the pass goes on.
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for s.c.skipped() < before+2 && wait.Err() == nil {
		select {
		case <-wait.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil
}

// TestChangeDuringOwnWriteIsNeverLost checks that a user's change that
// lands while the engine's status write is on its way brings a pass, also
// when the pass fails with a terminal error: the divisor is fixed during
// the write that reports the zero divisor, and the Widget becomes Ready
// with the fixed divisor's result.
func TestChangeDuringOwnWriteIsNeverLost(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	reg := prometheus.NewRegistry()
	r := newReconciler("own-writes-fix", newJournal(), false)
	r.Options.Metrics = reg
	skipped := func() float64 {
		mfs, err := reg.Gather()
		if err != nil {
			return 0
		}
		for _, mf := range mfs {
			if mf.GetName() == bosun.MetricOwnWritesSkipped {
				var n float64
				for _, m := range mf.GetMetric() {
					n += m.GetCounter().GetValue()
				}
				return n
			}
		}
		return 0
	}
	var wrapped *fixDuringWrite
	f.run(r, runOptions{client: func(c client.Client) client.WithWatch {
		wrapped = &fixDuringWrite{Client: c, user: f.c, name: "fix", skipped: skipped}
		return wrapped
	}})
	f.create("fix", 10, 0, nil)
	w := f.waitReady("fix", metav1.ConditionTrue, conditions.ReasonSucceeded)
	if !wrapped.done.Load() {
		t.Fatal("the divisor was never fixed during a status write")
	}
	if w.Status.Result != 5 {
		t.Errorf("status.result is %d, want 5", w.Status.Result)
	}
}

// stampAnnotation is what the mutating webhook of
// TestWebhookChangeOnOwnWriteIsReconciled adds to a labelled Widget.
const stampAnnotation = "test.bosun.dev/stamp"

// stampReader copies the webhook's stamp into status.result.
type stampReader struct{}

func (stampReader) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	if v, err := strconv.ParseInt(req.Object.Annotations[stampAnnotation], 10, 64); err == nil {
		req.Object.Status.Result = v
	}
	return ctrl.Result{}, nil
}

// TestWebhookChangeOnOwnWriteIsReconciled runs the engine on a control
// plane with a mutating webhook that stamps an annotation on every labelled
// Widget: the engine's own write of the label comes back stamped, a change
// its steps have not seen, and a pass over that version must follow,
// however the write's event is handled. Budget: one more pass, no more
// writes of the Widget once it shows the stamp.
func TestWebhookChangeOnOwnWriteIsReconciled(t *testing.T) {
	t.Parallel()
	s := &bosuntest.Shared{
		Options: func() (controlplane.Options, error) {
			opts, err := testapi.ControlPlaneOptions()
			opts.Webhooks = testapi.WidgetWebhooks()
			return opts, err
		},
		Webhooks: (&webhook.Kind[*testapi.Widget]{
			Default: func(_ context.Context, w *testapi.Widget) error {
				if w.Labels["test.bosun.dev/labelled"] != "" && w.Annotations[stampAnnotation] == "" {
					if w.Annotations == nil {
						w.Annotations = map[string]string{}
					}
					w.Annotations[stampAnnotation] = "42"
				}
				return nil
			},
			Validate: func(context.Context, *testapi.Widget, *testapi.Widget) (webhook.Warnings, field.ErrorList) {
				return nil, nil
			},
		}).SetupWithManager,
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	cp := s.ControlPlane(t)
	f := &fixture{t: t, cp: cp, c: cp.Client, ns: bosuntest.Namespace(t, cp.Client)}
	writes := &bosuntest.WriteCounter{}
	f.run(&bosun.Reconciler[*testapi.Widget]{
		Name:  "webhook-own-write",
		Steps: []bosun.Step[*testapi.Widget]{labeller{}, stampReader{}},
	}, runOptions{client: writes.Wrap})
	f.create("w", 1, 1, nil)
	var w *testapi.Widget
	bosuntest.Eventually(t, func(ctx context.Context) error {
		got, err := f.get(ctx, "w")
		if err != nil {
			return err
		}
		if got.Status.Result != 42 {
			return fmt.Errorf("status.result = %d, annotations %v: the webhook's stamp on the engine's write was never reconciled", got.Status.Result, got.Annotations)
		}
		w = got
		return nil
	})
	if c := conditions.Find(w.Status.Conditions, conditions.TypeReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v, want True", c)
	}
	if got := writes.Counts(); got["patch Widget"] != 1 {
		t.Errorf("writes %v, want one patch of the Widget (its label)", got)
	}
}
