package faults_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/managed"
)

// TestPartition cuts a process off from the API server: its requests
// fail with ErrPartitioned, its cache does not see an object made
// meanwhile (the watch hangs), and once healed it does.
func TestPartition(t *testing.T) {
	cp := shared.ControlPlane(t)
	ctx := t.Context()
	ns := bosuntest.Namespace(t, cp.Client)
	p := faults.Start(t, cp, faults.Options{Namespace: ns}, func(mgr ctrl.Manager, _ *faults.Process) error {
		_, err := mgr.GetCache().GetInformer(context.Background(), &corev1.ConfigMap{})
		return err
	})
	p.Partition()
	err := p.Manager().GetAPIReader().Get(ctx, client.ObjectKey{Namespace: ns, Name: "any"}, &corev1.ConfigMap{})
	if !errors.Is(err, faults.ErrPartitioned) {
		t.Fatalf("a read of a cut process: %v, want ErrPartitioned", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "made-meanwhile"}}
	if err := cp.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	cached := func(ctx context.Context) error {
		return p.Manager().GetCache().Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
	}
	// The watch brings the event to the kit, which holds it while the
	// process is cut off.
	bosuntest.Eventually(t, func(context.Context) error {
		if n := p.Stats().WatchesCut; n == 0 {
			return errors.New("no watch has had anything to deliver yet")
		}
		return nil
	})
	if err := cached(ctx); !apierrors.IsNotFound(err) {
		t.Fatalf("the cache of a cut process: %v, want NotFound", err)
	}
	p.Heal()
	bosuntest.Eventually(t, cached)
	if err := p.Manager().GetAPIReader().Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); err != nil {
		t.Fatalf("a read once healed: %v", err)
	}
}

// TestForeignWrites has another actor annotate a Widget before half the
// operator's writes of it (before every one, the engine's guarded writes
// would meet a conflict each time and never settle): an operator whose writes keep the annotation
// passes ForeignLost; one that clears the object's annotations is caught.
func TestForeignWrites(t *testing.T) {
	for _, wipe := range []bool{false, true} {
		t.Run(fmt.Sprintf("wipe=%t", wipe), func(t *testing.T) {
			cp := shared.ControlPlane(t)
			ctx := t.Context()
			ns := bosuntest.Namespace(t, cp.Client)
			p := faults.Start(t, cp, faults.Options{Namespace: ns, Plan: faults.Plan{Seed: 2, Foreign: faults.ForeignWrites{Rate: 0.5}}},
				func(mgr ctrl.Manager, _ *faults.Process) error {
					c := mgr.GetClient()
					r := &bosun.Reconciler[*testapi.Widget]{Name: "foreign-test", Steps: []bosun.Step[*testapi.Widget]{
						bosun.NewStep("annotations", func(ctx context.Context, pass *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
							if !wipe || len(pass.Object.Annotations) == 0 {
								return ctrl.Result{}, nil
							}
							return ctrl.Result{}, c.Patch(ctx, pass.Object, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":null}}`)))
						}),
					}}
					return bosun.ControllerManagedBy[*testapi.Widget](mgr).Complete(r)
				})
			w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 1}}
			if err := cp.Client.Create(ctx, w); err != nil {
				t.Fatal(err)
			}
			// Wait until the operator has settled: a foreign write, then no
			// write for half a second.
			bosuntest.Eventually(t, func(ctx context.Context) error {
				if p.Stats().Foreign == 0 {
					return errors.New("no foreign write yet")
				}
				if calls := p.Calls(); len(calls) == 0 || time.Since(calls[len(calls)-1].At) < 500*time.Millisecond {
					return errors.New("the operator wrote less than half a second ago")
				}
				if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
					return err
				}
				if wipe && len(w.Annotations) > 0 {
					return fmt.Errorf("annotations %v still there", w.Annotations)
				}
				return nil
			})
			lost, err := p.ForeignLost(ctx)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case wipe && len(lost) != 1:
				t.Errorf("an operator that clears annotations: ForeignLost %q, want the Widget", lost)
			case !wipe && len(lost) != 0:
				t.Errorf("an operator that keeps annotations: ForeignLost %q, want none", lost)
			}
		})
	}
}

// TestSlowExternal holds external calls for Plan.SlowExternal, and gives
// up when the call's context ends first.
func TestSlowExternal(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	slow := faults.Start(t, cp, faults.Options{Namespace: ns, Plan: faults.Plan{SlowExternal: time.Hour}}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := slow.External().BeforeCall(ctx, managed.ExternalCall{Op: "observe"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call whose deadline comes first: %v, want context.DeadlineExceeded", err)
	}
	p := faults.Start(t, cp, faults.Options{Namespace: ns, Plan: faults.Plan{SlowExternal: 200 * time.Millisecond}}, nil)
	start := time.Now()
	if err := p.External().BeforeCall(t.Context(), managed.ExternalCall{Op: "observe"}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("the call went out after %s, want at least 200ms", took)
	}
}
