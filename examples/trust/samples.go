package trust

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// sampleSource is the source ConfigMap of the sample Bundle, in the trust
// namespace, and its key.
const (
	sampleSource = "demo-ca"
	sampleKey    = "ca.crt"
)

// Samples are the objects `bosun demo` and --dev create once the operator
// runs: a Bundle of the CA that PrepareSamples puts in the trust
// namespace, written into a ConfigMap in every namespace. Bundles are
// cluster-scoped: namespace is not used.
func Samples(string) []client.Object {
	return []client.Object{&trustv1alpha1.Bundle{
		ObjectMeta: metav1.ObjectMeta{Name: "trust-demo"},
		Spec: trustv1alpha1.BundleSpec{
			Sources: []trustv1alpha1.BundleSource{{ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Name: sampleSource, Key: sampleKey}}},
			Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca-bundle.pem"}},
		},
	}}
}

// PrepareSamples makes what Samples need: the trust namespace, and in it
// the ConfigMap demo-ca holding a new self-signed CA under ca.crt. What
// exists already is left as it is.
func PrepareSamples(ctx context.Context, c client.Client, trustNamespace string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: trustNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the trust namespace: %w", err)
	}
	ca, err := newSampleCA(time.Now())
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: trustNamespace, Name: sampleSource},
		Data:       map[string]string{sampleKey: ca},
	}
	if err := c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the sample CA: %w", err)
	}
	return nil
}

// newSampleCA returns the PEM of a new self-signed CA certificate, valid
// for a year from now.
func newSampleCA(now time.Time) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("making the sample CA's key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return "", fmt.Errorf("making the sample CA's serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "bosun trust demo CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", fmt.Errorf("making the sample CA: %w", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), nil
}
