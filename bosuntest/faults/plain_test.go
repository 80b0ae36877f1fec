package faults_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/internal/testapi"
)

// plainController names the plain controller-runtime controller of the
// tests of Process.Journal and Process.Member.
const plainController = "plain-widgets"

// plainWidgets is a controller-runtime reconciler of its own, no bosun
// engine under it: each Widget gets a ConfigMap <name>-plain that holds
// its value, and a status with the value as Result and Ready True for its
// generation. It writes only what differs, and takes a 409 or an
// AlreadyExists (its cache behind its own writes) as a requeue.
type plainWidgets struct {
	c client.Client
	// meet, when set, runs at the start of every pass, before the read.
	meet func(ctx context.Context)
}

func (r *plainWidgets) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if r.meet != nil {
		r.meet(ctx)
	}
	w := &testapi.Widget{}
	if err := r.c.Get(ctx, req.NamespacedName, w); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Name + "-plain"}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.c, cm, func() error {
		cm.Data = map[string]string{"value": strconv.FormatInt(w.Spec.Value, 10)}
		return controllerutil.SetControllerReference(w, cm, r.c.Scheme())
	}); err != nil {
		return requeueOnConflict(err)
	}
	before := w.Status.DeepCopy()
	w.Status.Result = w.Spec.Value
	w.Status.ObservedGeneration = w.Generation
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
		Type: "Ready", Status: metav1.ConditionTrue, Reason: "Published",
		Message: "the ConfigMap holds the value", ObservedGeneration: w.Generation,
	})
	if equality.Semantic.DeepEqual(before, &w.Status) {
		return reconcile.Result{}, nil
	}
	return requeueOnConflict(r.c.Status().Update(ctx, w))
}

// requeueOnConflict returns err, or a quiet requeue for a 409 or an
// AlreadyExists.
func requeueOnConflict(err error) (reconcile.Result, error) {
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		return reconcile.Result{RequeueAfter: 100 * time.Millisecond}, nil
	}
	return reconcile.Result{}, err
}

// plainSetup registers plainWidgets with a process's manager, its passes
// journaled under the kind given as journaled (Process.Journal). A
// process that is a member of a ring of Widgets (Process.Member) runs the
// controller on its share: the member's Predicate on For, leader
// election off for the controller, the member's Wrap around the journal.
func plainSetup(journaled client.Object, meet func(context.Context)) func(mgr ctrl.Manager, p *faults.Process) error {
	return func(mgr ctrl.Manager, p *faults.Process) error {
		r := p.Journal(plainController, journaled, &plainWidgets{c: mgr.GetClient(), meet: meet})
		b := ctrl.NewControllerManagedBy(mgr).Named(plainController).Owns(&corev1.ConfigMap{})
		m := p.Member(&testapi.Widget{})
		if m == nil {
			return b.For(&testapi.Widget{}).Complete(r)
		}
		return b.For(&testapi.Widget{}, builder.WithPredicates(m.Predicate())).
			WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
			Complete(m.Wrap(r))
	}
}

// plainConverged checks that every Widget's ConfigMap and status follow
// its spec (the battery checks Ready itself).
func plainConverged(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	var errs []error
	for _, o := range objs {
		w := &testapi.Widget{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), w); err != nil {
			errs = append(errs, err)
			continue
		}
		cm := &corev1.ConfigMap{}
		want := strconv.FormatInt(w.Spec.Value, 10)
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: w.Name + "-plain"}, cm); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", w.Name, err))
		} else if got := cm.Data["value"]; got != want {
			errs = append(errs, fmt.Errorf("%s: its ConfigMap holds %s, the spec %s", w.Name, got, want))
		}
		if w.Status.Result != w.Spec.Value {
			errs = append(errs, fmt.Errorf("%s: status.result %d, the spec %d", w.Name, w.Status.Result, w.Spec.Value))
		}
	}
	return errors.Join(errs...)
}

// TestPlainReconcilerInTheShardCells runs the matrix's cells of two shard
// members, without a fault and under a network partition of one of them,
// and of a third member that joins and one that leaves, on an operator of
// a plain controller-runtime reconciler, wired as the battery asks of one:
// its passes journaled by Process.Journal and its controller gated by the
// member Process.Member returns. Each cell's oracles pass, among them no
// object reconciled by two processes at once; the journals hold the plain
// reconciler's passes, and passes that acted on every Widget; and Member
// returns each process's member of the Widgets' ring, under the process's
// name, for a Widget and for a nil *Widget, and nil for a ConfigMap, a
// kind of no ring.
func TestPlainReconcilerInTheShardCells(t *testing.T) {
	cp := shared.ControlPlane(t)
	for _, cell := range [][2]string{{"2 shard members", "no fault"}, {"2 shard members", "network partition"}, {"3 shard members, joins and leaves", "no fault"}} {
		t.Run(cell[0]+"/"+cell[1], func(t *testing.T) {
			var (
				mu    sync.Mutex
				procs []*faults.Process
			)
			setup := plainSetup(&testapi.Widget{}, nil)
			faults.RunCell(t, cp, faults.Operator{
				Name: "plain",
				Setup: func(mgr ctrl.Manager, p *faults.Process) error {
					mu.Lock()
					procs = append(procs, p)
					mu.Unlock()
					return setup(mgr, p)
				},
				Object: func(ns string, i int) client.Object {
					return &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("w%d", i)}, Spec: testapi.WidgetSpec{Value: int64(i + 1)}}
				},
				Converged: plainConverged,
				Change:    func(o client.Object) { o.(*testapi.Widget).Spec.Value += 10 },
			}, cell[0], cell[1])
			if t.Failed() {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			checkPlainJournals(t, procs)
		})
	}
}

// checkPlainJournals checks the Members and the journals of the processes
// of a cell of shard members.
func checkPlainJournals(t *testing.T, procs []*faults.Process) {
	t.Helper()
	if len(procs) < 2 {
		t.Fatalf("%d processes ran the cell; want 2 or more", len(procs))
	}
	acted := map[types.NamespacedName]bool{}
	for _, p := range procs {
		m := p.Member(&testapi.Widget{})
		switch {
		case m == nil:
			t.Errorf("%s: Member(Widget) is nil; want its member of the Widgets' ring", p.Name())
		case m.Identity() != p.Name():
			t.Errorf("%s: Member(Widget) is %q; want the process's own member", p.Name(), m.Identity())
		}
		if got := p.Member((*testapi.Widget)(nil)); got != m {
			t.Errorf("%s: Member of a nil *Widget is %v; want %v, the member for a Widget", p.Name(), got, m)
		}
		if got := p.Member(&corev1.ConfigMap{}); got != nil {
			t.Errorf("%s: Member(ConfigMap) is %q; want nil, no ring shares ConfigMaps", p.Name(), got.Identity())
		}
		counts := map[string]int{}
		for _, pass := range faults.Passes(p) {
			if pass.Controller != plainController || !pass.Plain {
				t.Errorf("%s journaled a pass of %q (plain %v); want only %q's, plain", p.Name(), pass.Controller, pass.Plain, plainController)
			}
			if pass.Acted {
				acted[pass.Object] = true
				counts[pass.Object.Name]++
			} else {
				counts["found nothing"]++
			}
		}
		t.Logf("%s journaled passes: %v", p.Name(), counts)
	}
	if len(acted) != 2 {
		t.Errorf("the journals hold passes that acted on %v; want both Widgets", acted)
	}
	if o := faults.Overlaps(procs...); len(o) > 0 {
		t.Errorf("passes at once: %q", o)
	}
}

// TestJournalSeesTwoProcessesAtOnce breaks what the battery checks: two
// processes, neither sharded nor electing a leader, run the plain
// reconciler on one Widget, their first passes held until both are in
// one. The matrix's oracle must report the two journaled passes at once,
// naming the controller and the Widget; neither process is a member of a
// ring, so Member is nil. The journal is told the kind by a Widget, or
// by a nil *Widget as a generic caller has one (var zero T).
func TestJournalSeesTwoProcessesAtOnce(t *testing.T) {
	cp := shared.ControlPlane(t)
	for _, tt := range []struct {
		name      string
		journaled client.Object
	}{
		{"a Widget", &testapi.Widget{}},
		{"a nil *Widget", (*testapi.Widget)(nil)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ns := bosuntest.Namespace(t, cp.Client)
			both := meeting(2)
			setup := plainSetup(tt.journaled, both.arrive)
			a := faults.Start(t, cp, faults.Options{Name: "a", Namespace: ns}, setup)
			b := faults.Start(t, cp, faults.Options{Name: "b", Namespace: ns}, setup)
			for _, p := range []*faults.Process{a, b} {
				if m := p.Member(&testapi.Widget{}); m != nil {
					t.Errorf("%s: Member(Widget) is %q; want nil, the process is in no ring", p.Name(), m.Identity())
				}
			}
			w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 1}}
			if err := cp.Client.Create(t.Context(), w); err != nil {
				t.Fatal(err)
			}
			var got []string
			bosuntest.Eventually(t, func(context.Context) error {
				if got = faults.Overlaps(a, b); len(got) == 0 {
					return fmt.Errorf("no passes at once reported; journaled: a %v, b %v", faults.Passes(a), faults.Passes(b))
				}
				return nil
			}, bosuntest.Timeout(time.Minute))
			want := plainController + " " + ns + "/w"
			for _, o := range got {
				if !strings.Contains(o, want) {
					t.Errorf("reported %q; want it to name %q", o, want)
				}
			}
			t.Logf("reported: %q", got)
		})
	}
}

// rendezvous holds the passes that arrive until n of them have.
type rendezvous struct {
	mu   sync.Mutex
	left int
	met  chan struct{}
}

// meeting returns a rendezvous of n passes.
func meeting(n int) *rendezvous { return &rendezvous{left: n, met: make(chan struct{})} }

// arrive returns once n passes have arrived (at once for the passes after
// them), or ctx ends.
func (r *rendezvous) arrive(ctx context.Context) {
	r.mu.Lock()
	if r.left--; r.left == 0 {
		close(r.met)
	}
	r.mu.Unlock()
	select {
	case <-r.met:
	case <-ctx.Done():
	}
}
