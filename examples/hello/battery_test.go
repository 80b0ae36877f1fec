package hello

import (
	"context"
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
)

// TestBattery runs the reliability battery on the Greeting controller, set
// up as SetupWithManager sets it up, with the battery's engine options. Each Greeting should end with exactly
// one ConfigMap it controls, holding its rendered greeting. The controller
// deletes that ConfigMap itself (its finalizer), so a deleted Greeting must
// leave no ConfigMap behind; the package's control plane runs no garbage
// collector, so that nothing else removes it for the controller.
func TestBattery(t *testing.T) {
	faults.RunBattery(t, shared.ControlPlane(t), faults.Operator{
		Name: "hello",
		Setup: func(mgr ctrl.Manager, p *faults.Process) error {
			r := NewReconciler()
			p.Configure(&r.Options)
			return faults.Shard(bosun.ControllerManagedBy[*hellov1.Greeting](mgr), p).Complete(r)
		},
		Object: batteryGreeting,
		// A new name to greet: the ConfigMap must follow it.
		Change: func(o client.Object) { o.(*hellov1.Greeting).Spec.Name += " again" },
		// Create: the finalizer, the ConfigMap and the status (a Greeting
		// with the default template is one fewer); change: the ConfigMap
		// and the status; delete: the ConfigMap and the finalizer.
		Budget: faults.Budget{
			Create: faults.Cost{Writes: 3},
			Change: faults.Cost{Writes: 2},
			Delete: faults.Cost{Writes: 2},
		},
		Converged:  batteryConverged,
		Duplicates: batteryDuplicates,
		Cleaned:    batteryCleaned,
	})
}

// batteryGreeting returns the i-th Greeting of a battery scenario. Odd ones
// have a template of their own and name their ConfigMap, so that both ways
// of naming it are covered.
func batteryGreeting(ns string, i int) client.Object {
	g := &hellov1.Greeting{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("greeting-%d", i)},
		Spec:       hellov1.GreetingSpec{Name: fmt.Sprintf("reader %d", i)},
	}
	if i%2 == 1 {
		g.Spec.Template = "Hi %s, 100%% welcome."
		g.Spec.ConfigMapName = fmt.Sprintf("greeting-%d-text", i)
	}
	return g
}

// batteryConverged checks that each Greeting's status message and its
// ConfigMap (named as the spec says, controlled by that very Greeting)
// hold the greeting Render makes of its spec.
func batteryConverged(ctx context.Context, c client.Client, _ string, objs []client.Object) error {
	var errs []error
	for _, o := range objs {
		g := &hellov1.Greeting{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), g); err != nil {
			errs = append(errs, err)
			continue
		}
		want, err := Render(g.Spec)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", g.Name, err))
			continue
		}
		if _, _, err := published(ctx, c, client.ObjectKeyFromObject(g), want); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", g.Name, err))
		}
	}
	return errors.Join(errs...)
}

// batteryDuplicates counts the Greetings that control more than one
// ConfigMap.
func batteryDuplicates(ctx context.Context, c client.Client, ns string, objs []client.Object) (int, error) {
	byOwner, err := oracle.Controlled[*corev1.ConfigMap](ctx, c, ns, &corev1.ConfigMapList{})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range objs {
		if len(byOwner[o.GetUID()]) > 1 {
			n++
		}
	}
	return n, nil
}

// batteryCleaned checks that no ConfigMap of a deleted Greeting is left:
// the controller deletes it before it lets the Greeting go.
func batteryCleaned(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	return oracle.NoOrphans(ctx, c, ns, oracle.UIDs(objs), &corev1.ConfigMapList{})
}
