package trust

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
			err = addObjects(ctx, r, opts.TrustNamespace, src.ConfigMap, false, pool)
		case src.Secret != nil:
			err = addObjects(ctx, r, opts.TrustNamespace, src.Secret, true, pool)
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

// addObjects adds the certificates of the ConfigMaps (or, with secret,
// the Secrets) sel selects in namespace ns: the value of its key, or of
// every key (a ConfigMap's data and binaryData), in the order of the keys.
// All keys of a TLS Secret are refused: its private key is no certificate.
func addObjects(ctx context.Context, r client.Reader, ns string, sel *trustv1alpha1.SourceObjectKeySelector, secret bool, pool *certPool) error {
	kind, obj, list := "ConfigMap", client.Object(&corev1.ConfigMap{}), client.ObjectList(&corev1.ConfigMapList{})
	if secret {
		kind, obj, list = "Secret", &corev1.Secret{}, &corev1.SecretList{}
	}
	objs, err := readSelected(ctx, r, kind, ns, sel, obj, list)
	if err != nil {
		return err
	}
	for _, o := range objs {
		var values map[string][]byte
		var meta *metav1.ObjectMeta
		switch o := o.(type) {
		case *corev1.ConfigMap:
			values, meta = map[string][]byte{}, &o.ObjectMeta
			maps.Copy(values, o.BinaryData)
			for k, v := range o.Data {
				values[k] = []byte(v)
			}
		case *corev1.Secret:
			if ptr.Deref(sel.IncludeAllKeys, false) && o.Type == corev1.SecretTypeTLS {
				return fmt.Errorf("%w: Secret %s/%s is of type %s, whose keys are not all certificates: name its key instead of includeAllKeys", errSourceInvalid, o.Namespace, o.Name, o.Type)
			}
			values, meta = o.Data, &o.ObjectMeta
		default:
			return fmt.Errorf("read %T for a %s", o, kind)
		}
		if err := addKeys(kind, meta, values, sel, pool); err != nil {
			return err
		}
	}
	return nil
}

// readSelected reads the objects of obj's kind, named kind in errors,
// that sel selects in namespace ns: the one it names, into obj, or those
// its label selector matches, through list.
func readSelected(ctx context.Context, r client.Reader, kind, ns string, sel *trustv1alpha1.SourceObjectKeySelector, obj client.Object, list client.ObjectList) ([]runtime.Object, error) {
	if sel.Name != "" {
		switch err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: sel.Name}, obj); {
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("%w: %s %s/%s", errSourceNotFound, kind, ns, sel.Name)
		case err != nil:
			return nil, fmt.Errorf("reading %s %s/%s: %w", kind, ns, sel.Name, err)
		}
		return []runtime.Object{obj}, nil
	}
	selector, err := metav1.LabelSelectorAsSelector(sel.Selector)
	if err != nil {
		return nil, fmt.Errorf("%w: the %s selector: %w", errSourceInvalid, kind, err)
	}
	if err := r.List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, fmt.Errorf("listing the %ss of %s: %w", kind, ns, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("listing the %ss of %s: %w", kind, ns, err)
	}
	return items, nil
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
