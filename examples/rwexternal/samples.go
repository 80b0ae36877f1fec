package rwexternal

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	rwv1 "github.com/bosunkit/bosun/examples/rwexternal/api/v1alpha1"
)

// Samples returns the RWExternals the demo creates in namespace: one with
// the default output name, and one that names its output and is annotated
// with the detach-on-delete policy, so its output stays when it is deleted.
// They read the Secrets of SampleInputs, which PrepareSamples creates. Each
// call returns new objects.
func Samples(namespace string) []client.Object {
	rw := func(name, input, output string, annotations map[string]string) *rwv1.RWExternal {
		return &rwv1.RWExternal{
			TypeMeta:   metav1.TypeMeta{APIVersion: rwv1.GroupVersion.String(), Kind: "RWExternal"},
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Annotations: annotations},
			Spec:       rwv1.RWExternalSpec{InputSecret: input, OutputSecret: output},
		}
	}
	return []client.Object{
		rw("alpha", "alpha-credentials", "", nil),
		rw("beta", "beta-credentials", "beta-fingerprints",
			map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicyDetachOnDelete)}),
	}
}

// SampleInputs returns the input Secrets the Samples read, in namespace.
// Each call returns new objects.
func SampleInputs(namespace string) []*corev1.Secret {
	secret := func(name string, data map[string]string) *corev1.Secret {
		return &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Type:       corev1.SecretTypeOpaque,
			StringData: data,
		}
	}
	return []*corev1.Secret{
		secret("alpha-credentials", map[string]string{"username": "alpha", "password": "correct horse battery staple"}),
		secret("beta-credentials", map[string]string{"token": "beta-token", "ca.crt": "not really a certificate"}),
	}
}

// PrepareSamples creates the Secrets of SampleInputs in namespace, which must
// exist. Secrets that already exist are left as they are.
func PrepareSamples(ctx context.Context, c client.Client, namespace string) error {
	for _, s := range SampleInputs(namespace) {
		if err := c.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("rwexternal: create input secret %s: %w", s.Name, err)
		}
	}
	return nil
}
