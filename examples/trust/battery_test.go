package trust

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/controlplane"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// The target keys of the battery's Bundles: the first before a change,
// the second after it.
const (
	batteryKey        = "ca.pem"
	batteryChangedKey = "bundle.pem"
)

// TestBattery runs the reliability battery on the Bundle controller, a
// cluster-scoped kind, set up as SetupWithManager sets it up, with the
// battery's engine options, and its manager's cache narrowed by
// CacheOptions as the operator's is. Each Bundle of a scenario is named
// after the scenario's namespace and selects that namespace alone
// (kubernetes.io/metadata.name), from one inline CA certificate, into a
// ConfigMap target: it should end with exactly one target, in that
// namespace, controlled by it and holding its bundle under its key and
// nothing else. A change adds a second certificate and moves the bundle
// to another key (or, made again, goes back): the target must follow,
// the old key gone. A Bundle has no finalizer: its target goes with the
// garbage collector, which the battery's control plane runs, so a deleted
// Bundle must leave no ConfigMap it owned.
func TestBattery(t *testing.T) {
	cp := batteryControlPlane(t)
	opts := withTrustNamespace(Options{})
	first, second := newTestCert(t, "battery-first", false, time.Time{}), newTestCert(t, "battery-second", false, time.Time{})
	// The bundle of a Bundle, by its number of sources.
	bundles := map[int]string{1: bundleOf(t, first), 2: bundleOf(t, first, second)}
	faults.RunBattery(t, cp, faults.Operator{
		Name: "trust",
		Setup: func(mgr ctrl.Manager, p *faults.Process) error {
			r := NewReconciler(opts)
			p.Configure(&r.Options)
			return faults.Shard(bosun.ControllerManagedBy[*trustv1alpha1.Bundle](mgr), p).Complete(r)
		},
		Manager: CacheOptions(opts),
		Object:  batteryBundle(first.pem),
		Change:  batteryChange(second.pem),
		// Create: the target's apply and the status (Synced and Ready);
		// change: the target's apply and the status; delete: nothing (no
		// finalizer; the garbage collector removes the target).
		Budget: faults.Budget{
			Create: faults.Cost{Writes: 2},
			Change: faults.Cost{Writes: 2},
		},
		Converged:  batteryConverged(bundles),
		Duplicates: batteryDuplicates,
		Cleaned:    batteryCleaned,
	})
}

// batteryControlPlane starts the battery's control plane, with the
// Bundle CRD and the garbage collector, which removes the targets of a
// deleted Bundle, and the namespace controller, which removes the
// scenarios' namespaces when they end.
func batteryControlPlane(t *testing.T) *controlplane.ControlPlane {
	t.Helper()
	opts, err := controlplane.OptionsFor(AddToScheme, CRDs)()
	if err != nil {
		t.Fatal(err)
	}
	opts.ControllerManager = true
	opts.Controllers = []string{controlplane.GarbageCollectorController, controlplane.NamespaceController}
	return bosuntest.Start(t, opts)
}

// batteryBundle returns the battery's i-th Bundle of the scenario of ns:
// named after ns, one inline certificate, a ConfigMap target in ns alone.
func batteryBundle(pem string) func(ns string, i int) client.Object {
	return func(ns string, i int) client.Object {
		return &trustv1alpha1.Bundle{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-bundle-%d", ns, i)},
			Spec: trustv1alpha1.BundleSpec{
				Sources: []trustv1alpha1.BundleSource{{InLine: pem}},
				Target: trustv1alpha1.BundleTarget{
					ConfigMap:         &trustv1alpha1.TargetTemplate{Key: batteryKey},
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
				},
			},
		}
	}
}

// batteryChange adds the certificate pem to a Bundle of one source and
// moves its bundle to batteryChangedKey; a Bundle changed already goes
// back to its one source and batteryKey, so that every change is one.
func batteryChange(pem string) func(client.Object) {
	return func(o client.Object) {
		b := o.(*trustv1alpha1.Bundle)
		if len(b.Spec.Sources) == 1 {
			b.Spec.Sources = append(b.Spec.Sources, trustv1alpha1.BundleSource{InLine: pem})
			b.Spec.Target.ConfigMap.Key = batteryChangedKey
			return
		}
		b.Spec.Sources = b.Spec.Sources[:1]
		b.Spec.Target.ConfigMap.Key = batteryKey
	}
}

// batteryConverged checks that each Bundle has exactly one target, in the
// namespace its selector names, controlled by it, whose data is its bundle
// (bundles, by its number of sources) under its key alone.
func batteryConverged(bundles map[int]string) func(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	return func(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
		var errs []error
		for _, o := range objs {
			b := &trustv1alpha1.Bundle{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(o), b); err != nil {
				errs = append(errs, err)
				continue
			}
			if err := batteryTarget(ctx, c, ns, b, bundles); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", b.Name, err))
			}
		}
		return errors.Join(errs...)
	}
}

// batteryTarget checks the one target of b, which must be in ns.
func batteryTarget(ctx context.Context, c client.Client, ns string, b *trustv1alpha1.Bundle, bundles map[int]string) error {
	want, ok := bundles[len(b.Spec.Sources)]
	if !ok {
		return fmt.Errorf("%d sources, no bundle known for them", len(b.Spec.Sources))
	}
	list := &corev1.ConfigMapList{}
	if err := c.List(ctx, list, client.MatchingLabels{trustv1alpha1.LabelBundle: b.Name}); err != nil {
		return err
	}
	if len(list.Items) != 1 || list.Items[0].Namespace != ns {
		var where []string
		for _, cm := range list.Items {
			where = append(where, cm.Namespace)
		}
		return fmt.Errorf("targets in %v, want one in %s", where, ns)
	}
	cm := &list.Items[0]
	if !metav1.IsControlledBy(cm, b) {
		return fmt.Errorf("the target's owners %v, want the Bundle (uid %s) as controller", cm.OwnerReferences, b.UID)
	}
	if diff := cmp.Diff(map[string]string{b.Spec.Target.ConfigMap.Key: want}, cm.Data); diff != "" {
		return fmt.Errorf("the target's data (-want +got):\n%s", diff)
	}
	return nil
}

// batteryDuplicates counts the Bundles that control more than one
// ConfigMap, in any namespace.
func batteryDuplicates(ctx context.Context, c client.Client, _ string, objs []client.Object) (int, error) {
	byOwner, err := oracle.Controlled[*corev1.ConfigMap](ctx, c, "", &corev1.ConfigMapList{})
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

// batteryCleaned checks that no ConfigMap of a deleted Bundle is left, in
// any namespace: the garbage collector removes them.
func batteryCleaned(ctx context.Context, c client.Client, _ string, objs []client.Object) error {
	return oracle.NoOrphans(ctx, c, "", oracle.UIDs(objs), &corev1.ConfigMapList{})
}
