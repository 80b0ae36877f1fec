package trust

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// errSourceNotFound marks a source that is missing: an object, a key in
// it, the default CA package, or any certificate at all. The Bundle waits
// for the source to appear.
var errSourceNotFound = errors.New("bundle source was not found")

// errSourceInvalid marks a source whose data is not a bundle of valid
// certificates.
var errSourceInvalid = errors.New("bundle source is invalid")

// bundleData is what a Bundle's sources make.
type bundleData struct {
	pool *certPool
	// pem is the bundle, as every target holds it.
	pem string
	// defaultCAVersion is the version of the default CA package in it, if
	// a source asks for it.
	defaultCAVersion string
}

// buildBundle reads the Bundle's sources and joins their certificates. A
// ConfigMap or Secret is read from the trust namespace through r. The
// error wraps errSourceNotFound or errSourceInvalid, and names the source.
func buildBundle(ctx context.Context, r client.Reader, opts Options, sources []trustv1alpha1.BundleSource) (*bundleData, error) {
	pool := newCertPool(opts.FilterExpiredCertificates, opts.FilterNonCACerts)
	data := &bundleData{pool: pool}
	for i, src := range sources {
		var err error
		switch {
		case src.ConfigMap != nil:
			err = addConfigMaps(ctx, r, opts.TrustNamespace, src.ConfigMap, pool)
		case src.Secret != nil:
			err = addSecrets(ctx, r, opts.TrustNamespace, src.Secret, pool)
		case src.InLine != "":
			if err = pool.addPEM([]byte(src.InLine)); err != nil {
				err = fmt.Errorf("%w: source %d, inLine: %w", errSourceInvalid, i, err)
			}
		case ptr.Deref(src.UseDefaultCAs, false):
			if opts.DefaultPackage == nil {
				return nil, fmt.Errorf("%w: source %d asks for the default CAs, and the operator runs without a default CA package (--default-package-location)", errSourceNotFound, i)
			}
			if err = pool.addPEM([]byte(opts.DefaultPackage.Bundle)); err != nil {
				err = fmt.Errorf("%w: the default CA package: %w", errSourceInvalid, err)
			}
			data.defaultCAVersion = opts.DefaultPackage.versionID()
		}
		if err != nil {
			return nil, err
		}
	}
	if pool.len() == 0 {
		return nil, fmt.Errorf("%w: the sources hold no valid certificate", errSourceNotFound)
	}
	data.pem = pool.pem()
	return data, nil
}

// addConfigMaps adds the certificates of the ConfigMaps sel selects in
// namespace ns: the value of its key, or of every key (data and
// binaryData), in the order of the keys.
func addConfigMaps(ctx context.Context, r client.Reader, ns string, sel *trustv1alpha1.SourceObjectKeySelector, pool *certPool) error {
	var cms []corev1.ConfigMap
	if sel.Name != "" {
		cm := corev1.ConfigMap{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: sel.Name}, &cm); err != nil {
			return readError("ConfigMap", ns, sel.Name, err)
		}
		cms = append(cms, cm)
	} else {
		selector, err := metav1.LabelSelectorAsSelector(sel.Selector)
		if err != nil {
			return fmt.Errorf("%w: the ConfigMap selector: %w", errSourceInvalid, err)
		}
		list := &corev1.ConfigMapList{}
		if err := r.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return fmt.Errorf("listing the ConfigMaps of %s: %w", ns, err)
		}
		cms = list.Items
	}
	for _, cm := range cms {
		values := map[string][]byte{}
		for k, v := range cm.BinaryData {
			values[k] = v
		}
		for k, v := range cm.Data {
			values[k] = []byte(v)
		}
		if err := addKeys("ConfigMap", &cm.ObjectMeta, values, sel, pool); err != nil {
			return err
		}
	}
	return nil
}

// addSecrets adds the certificates of the Secrets sel selects in namespace
// ns: the value of its key, or of every key. All keys of a TLS Secret are
// refused: its private key is no certificate.
func addSecrets(ctx context.Context, r client.Reader, ns string, sel *trustv1alpha1.SourceObjectKeySelector, pool *certPool) error {
	var secrets []corev1.Secret
	if sel.Name != "" {
		s := corev1.Secret{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: sel.Name}, &s); err != nil {
			return readError("Secret", ns, sel.Name, err)
		}
		secrets = append(secrets, s)
	} else {
		selector, err := metav1.LabelSelectorAsSelector(sel.Selector)
		if err != nil {
			return fmt.Errorf("%w: the Secret selector: %w", errSourceInvalid, err)
		}
		list := &corev1.SecretList{}
		if err := r.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return fmt.Errorf("listing the Secrets of %s: %w", ns, err)
		}
		secrets = list.Items
	}
	for _, s := range secrets {
		if ptr.Deref(sel.IncludeAllKeys, false) && s.Type == corev1.SecretTypeTLS {
			return fmt.Errorf("%w: Secret %s/%s is of type %s, whose keys are not all certificates: name its key instead of includeAllKeys", errSourceInvalid, s.Namespace, s.Name, s.Type)
		}
		if err := addKeys("Secret", &s.ObjectMeta, s.Data, sel, pool); err != nil {
			return err
		}
	}
	return nil
}

// addKeys adds the certificates of an object's values: the one under
// sel's key, which must be there, or all of them.
func addKeys(kind string, obj *metav1.ObjectMeta, values map[string][]byte, sel *trustv1alpha1.SourceObjectKeySelector, pool *certPool) error {
	keys := []string{sel.Key}
	if sel.Key == "" {
		keys = slices.Sorted(maps.Keys(values))
	}
	for _, k := range keys {
		v, ok := values[k]
		if !ok {
			return fmt.Errorf("%w: %s %s/%s has no key %q", errSourceNotFound, kind, obj.Namespace, obj.Name, k)
		}
		if err := pool.addPEM(v); err != nil {
			return fmt.Errorf("%w: %s %s/%s, key %q: %w", errSourceInvalid, kind, obj.Namespace, obj.Name, k, err)
		}
	}
	return nil
}

// readError is the error of reading a source object.
func readError(kind, ns, name string, err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: %s %s/%s", errSourceNotFound, kind, ns, name)
	}
	return fmt.Errorf("reading %s %s/%s: %w", kind, ns, name, err)
}
