package bosun_test

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/testapi"
)

// A controller for an optional API: the operator starts whether or not the
// Gadget CRD is installed, and the controller starts once it is.
func ExampleBuilder_WhenServed() {
	setup := func(mgr ctrl.Manager) error {
		r := &bosun.Reconciler[*testapi.Gadget]{
			Name:  "gadgets",
			Steps: []bosun.Step[*testapi.Gadget]{twins{}},
		}
		return bosun.ControllerManagedBy[*testapi.Gadget](mgr).
			WhenServed().
			Complete(r)
	}
	_ = setup
}

// A controller woken by something outside Kubernetes: a ticker here, a
// webhook or a message queue elsewhere. The Enqueuer is asked for before
// Complete and used from any goroutine, even before the manager starts.
func ExampleBuilder_Enqueuer() {
	setup := func(ctx context.Context, mgr ctrl.Manager, r *bosun.Reconciler[*testapi.Widget]) error {
		b := bosun.ControllerManagedBy[*testapi.Widget](mgr)
		enq := b.Enqueuer()
		if err := b.Complete(r); err != nil {
			return err
		}
		key := client.ObjectKey{Namespace: "default", Name: "polled"}
		enq.EnqueueAfter(key, time.Minute) // once a minute has passed
		go func() {
			tick := time.NewTicker(10 * time.Minute)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					enq.Enqueue(key)
				}
			}
		}()
		return nil
	}
	_ = setup
}
