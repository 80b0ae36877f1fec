package rwexternal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest/faults"
	rwv1 "github.com/bosunkit/bosun/examples/rwexternal/api/v1alpha1"
)

// batteryInputs is how many input Secrets the objects of a battery scenario
// share: object i reads input i%batteryInputs, so that a change of one
// input concerns several objects through the InputSecretIndex.
const batteryInputs = 2

// TestBattery runs the reliability battery on the RWExternal operator, set
// up as SetupWithManager sets it up. Each namespace gets batteryInputs input
// Secrets holding a password; each RWExternal must end with exactly one
// output Secret, marked as its own and holding the digests of its input,
// and leave none behind once deleted (its finalizer deletes the output; the
// output has no owner reference, so the garbage collector plays no part).
// The passwords must show in no log line, Event or RWExternal status.
func TestBattery(t *testing.T) {
	faults.RunBattery(t, shared.ControlPlane(t), faults.Operator{
		Name: "rwexternal",
		Setup: func(mgr ctrl.Manager, p *faults.Process) error {
			r := NewReconciler()
			p.Configure(&r.Options)
			return faults.Shard(bosun.ControllerManagedBy[*rwv1.RWExternal](mgr), p).Complete(r)
		},
		Object: batteryObject,
		// The other input: the output must follow it.
		Change: func(o client.Object) {
			rw := o.(*rwv1.RWExternal)
			if rw.Spec.InputSecret == batteryInputName(0) {
				rw.Spec.InputSecret = batteryInputName(1)
			} else {
				rw.Spec.InputSecret = batteryInputName(0)
			}
		},
		// Create: the finalizer, the output Secret and the status; change:
		// the output and the status; delete: the output and the
		// finalizer.
		Budget: faults.Budget{
			Create: faults.Cost{Writes: 3},
			Change: faults.Cost{Writes: 2},
			Delete: faults.Cost{Writes: 2},
		},
		Prepare:    batteryPrepare,
		Converged:  batteryConverged,
		Duplicates: batteryDuplicates,
		Cleaned:    batteryCleaned,
		Secrets:    batterySecrets,
		Lists:      []client.ObjectList{&rwv1.RWExternalList{}},
	})
}

// batteryInputName names the input Secret of the i-th object.
func batteryInputName(i int) string { return fmt.Sprintf("input-%d", i%batteryInputs) }

// batteryObject returns the i-th RWExternal of a battery scenario, with the
// default output name.
func batteryObject(ns string, i int) client.Object {
	return &rwv1.RWExternal{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("rw-%d", i)},
		Spec:       rwv1.RWExternalSpec{InputSecret: batteryInputName(i)},
	}
}

// batteryPrepare makes the input Secrets in ns. Each holds a password
// particular to the namespace, which batterySecrets reads back.
func batteryPrepare(ctx context.Context, c client.Client, ns string) error {
	for k := range batteryInputs {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: batteryInputName(k)},
			Type:       corev1.SecretTypeOpaque,
			StringData: map[string]string{
				"username": fmt.Sprintf("user-%d", k),
				"password": fmt.Sprintf("pw-%s-%d-never-logged", ns, k),
			},
		}
		if err := c.Create(ctx, s); err != nil {
			return fmt.Errorf("create input secret %s: %w", s.Name, err)
		}
	}
	return nil
}

// batterySecrets returns the passwords of the input Secrets in ns.
func batterySecrets(ctx context.Context, c client.Client, ns string) ([]string, error) {
	var out []string
	for k := range batteryInputs {
		s := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: batteryInputName(k)}, s); err != nil {
			return nil, fmt.Errorf("read input secret: %w", err)
		}
		out = append(out, string(s.Data["password"]))
	}
	return out, nil
}

// outputsOf returns the Secrets in ns marked as written for each
// RWExternal, by the RWExternal's name.
func outputsOf(ctx context.Context, c client.Client, ns string) (map[string][]corev1.Secret, error) {
	var list corev1.SecretList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list secrets: %w", err)
	}
	out := map[string][]corev1.Secret{}
	for _, s := range list.Items {
		if owner, ok := s.Annotations[OwnerAnnotation]; ok {
			out[owner] = append(out[owner], s)
		}
	}
	return out, nil
}

// batteryConverged checks that each RWExternal has exactly one output
// Secret, under its output name, marked as its own, and holding the
// digests of its input Secret's current data; and that its status names
// the output.
func batteryConverged(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	outputs, err := outputsOf(ctx, c, ns)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		rw := &rwv1.RWExternal{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), rw); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := checkBatteryOutput(ctx, c, rw, outputs[rw.Name]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rw.Name, err))
		}
	}
	return errors.Join(errs...)
}

// checkBatteryOutput checks the output Secrets marked for rw.
func checkBatteryOutput(ctx context.Context, c client.Client, rw *rwv1.RWExternal, outputs []corev1.Secret) error {
	name := rw.OutputSecretName()
	names := make([]string, 0, len(outputs))
	for _, s := range outputs {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{name}) {
		return fmt.Errorf("output secrets %v, want [%s]", names, name)
	}
	if rw.Status.OutputSecret != name {
		return fmt.Errorf("status.outputSecret %q, want %q", rw.Status.OutputSecret, name)
	}
	in := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: rw.Namespace, Name: rw.Spec.InputSecret}, in); err != nil {
		return fmt.Errorf("read input secret: %w", err)
	}
	want, err := Derive(in.Data)
	if err != nil {
		return err
	}
	out := outputs[0]
	if out.Type != corev1.SecretTypeOpaque {
		return fmt.Errorf("output type %q, want %q", out.Type, corev1.SecretTypeOpaque)
	}
	if diff := cmp.Diff(want, out.Data); diff != "" {
		return fmt.Errorf("output data (-want +got):\n%s", diff)
	}
	return nil
}

// batteryDuplicates counts the RWExternals with more than one Secret marked
// as their output.
func batteryDuplicates(ctx context.Context, c client.Client, ns string, objs []client.Object) (int, error) {
	outputs, err := outputsOf(ctx, c, ns)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range objs {
		if len(outputs[o.GetName()]) > 1 {
			n++
		}
	}
	return n, nil
}

// batteryCleaned checks that no Secret marked as the output of a deleted
// RWExternal is left, and that the input Secrets, which are not the
// operator's, are still there.
func batteryCleaned(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	outputs, err := outputsOf(ctx, c, ns)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		if left := outputs[o.GetName()]; len(left) > 0 {
			errs = append(errs, fmt.Errorf("%s left %d output secrets", o.GetName(), len(left)))
		}
	}
	for k := range batteryInputs {
		err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: batteryInputName(k)}, &corev1.Secret{})
		if apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("input secret %s was deleted", batteryInputName(k)))
		} else if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
