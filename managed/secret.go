package managed

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/bosunkit/bosun"
)

// merge returns the details of a with those of b added over them.
func merge(a, b ConnectionDetails) ConnectionDetails {
	if len(b) == 0 {
		return a
	}
	out := make(ConnectionDetails, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// withDetails returns data with details added over it, and whether that
// changes anything.
func withDetails(data map[string][]byte, details ConnectionDetails) (map[string][]byte, bool) {
	changed := false
	out := maps.Clone(data)
	if out == nil {
		out = make(map[string][]byte, len(details))
	}
	for k, v := range details {
		if old, ok := out[k]; !ok || !bytes.Equal(old, v) {
			out[k] = bytes.Clone(v)
			changed = true
		}
	}
	return out, changed
}

// secrets is the stage that writes the connection Secret
// (WithConnectionSecret): it publishes the details, deletes the Secret
// with the object, and tells which credentials it lacks.
type secrets[T client.Object] struct {
	// secretName names the Secret of an object; nil without one.
	secretName func(client.Object) string
	// keys are the credential keys the step's clients name, once a
	// Connect has learned them (see caller.learn).
	keys *atomic.Pointer[[]string]
	rec  *recorder[T]
	// publisher marks the Secrets a step with an annotation prefix of
	// its own publishes: the prefix, in annotationPublishedBy; empty for
	// the default prefix, which marks nothing.
	publisher string
}

// annotationPublishedBy, on a connection Secret, holds the annotation
// prefix (WithAnnotationPrefix) of the managed step that publishes it,
// when that is not the default one. Two steps of one object that name one
// Secret would write their details over each other's at every pass: the
// Secret is one step's, and another that finds it refuses to write it.
const annotationPublishedBy = "bosun.dev/connection-secret-of"

// mine reports whether sec, controlled by the object, is the step's to
// publish: it carries the step's mark (none for the default prefix).
func (s *secrets[T]) mine(sec *corev1.Secret) bool {
	return sec.Annotations[annotationPublishedBy] == s.publisher
}

// notMine is the error of a connection Secret name that another managed
// step of the object publishes.
func (s *secrets[T]) notMine(name string) error {
	return s.rec.fail(ReasonConnectionSecretFailed, fmt.Errorf("connection secret %s is published by another managed step of this object: "+
		"give each step a connection secret of its own (WithConnectionSecret)", name))
}

// newSecrets returns the secrets stage of a step configured by cfg, which
// learns the credential keys in keys.
func newSecrets[T client.Object](cfg *config, keys *atomic.Pointer[[]string], rec *recorder[T]) *secrets[T] {
	return &secrets[T]{secretName: cfg.secretName, keys: keys, rec: rec, publisher: cfg.keys.prefix}
}

// nameOf returns the name of the connection Secret of obj, "" when it has
// none.
func (s *secrets[T]) nameOf(obj T) string {
	if s.secretName == nil {
		return ""
	}
	return s.secretName(obj)
}

// publish writes details to the connection Secret, if one is configured:
// it creates the Secret owned by the object and labelled
// LabelConnectionSecret, or adds the details to it when they change
// something, and the label when it lacks it. The details never reach
// logs, events or conditions; errors name the Secret only. A Secret the
// cache does not hold (CacheConnectionSecretsOnly, and a Secret without
// the label) is found on the API server when creating it fails.
func (s *secrets[T]) publish(ctx context.Context, req *bosun.Pass[T], details ConnectionDetails) error {
	obj := req.Object
	name := s.nameOf(obj)
	if name == "" {
		return nil
	}
	key := client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}
	sec := &corev1.Secret{}
	err := req.Client.Get(ctx, key, sec)
	if apierrors.IsNotFound(err) {
		sec = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{LabelConnectionSecret: "true"}},
			Type:       corev1.SecretTypeOpaque,
		}
		if s.publisher != "" {
			sec.Annotations = map[string]string{annotationPublishedBy: s.publisher}
		}
		sec.Data, _ = withDetails(nil, details)
		if err := controllerutil.SetControllerReference(obj, sec, req.Client.Scheme()); err != nil {
			return s.rec.fail(ReasonConnectionSecretFailed, fmt.Errorf("owning connection secret %s: %w", name, err))
		}
		err = req.Client.Create(ctx, sec)
		if err == nil {
			req.Log.V(1).Info("created connection secret", "secret", name)
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return s.rec.fail(ReasonConnectionSecretFailed, fmt.Errorf("creating connection secret %s: %w", name, err))
		}
		// The cache had not seen it yet: read it from the API server.
		sec = &corev1.Secret{}
		err = req.APIReader.Get(ctx, key, sec)
	}
	if err != nil {
		return s.rec.fail(ReasonConnectionSecretFailed, fmt.Errorf("reading connection secret %s: %w", name, err))
	}
	if !metav1.IsControlledBy(sec, obj) {
		return s.rec.fail(ReasonConnectionSecretFailed, fmt.Errorf("connection secret %s exists and is not controlled by this object", name))
	}
	if !s.mine(sec) {
		return s.notMine(name)
	}
	data, changed := withDetails(sec.Data, details)
	if !changed && labelled(sec) {
		return nil
	}
	sec = sec.DeepCopy()
	sec.Data = data
	if !labelled(sec) {
		if sec.Labels == nil {
			sec.Labels = map[string]string{}
		}
		sec.Labels[LabelConnectionSecret] = "true"
	}
	if err := req.Client.Update(ctx, sec); err != nil {
		return s.rec.fail(ReasonConnectionSecretFailed, fmt.Errorf("updating connection secret %s: %w", name, err))
	}
	req.Log.V(1).Info("updated connection secret", "secret", name)
	return nil
}

// unpublish deletes the connection Secret if it exists and the object
// controls it. It reads from the API server, so a Secret the cache has not
// seen yet is not left behind.
func (s *secrets[T]) unpublish(ctx context.Context, req *bosun.Pass[T]) error {
	obj := req.Object
	name := s.nameOf(obj)
	if name == "" {
		return nil
	}
	sec := &corev1.Secret{}
	if err := req.APIReader.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, sec); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return s.rec.fail(ReasonConnectionSecretFailed, fmt.Errorf("reading connection secret %s: %w", name, err))
	}
	if !metav1.IsControlledBy(sec, obj) || !s.mine(sec) {
		return nil
	}
	err := req.Client.Delete(ctx, sec, client.Preconditions{UID: &sec.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return s.rec.fail(ReasonConnectionSecretFailed, fmt.Errorf("deleting connection secret %s: %w", name, err))
	}
	req.Log.V(1).Info("deleted connection secret", "secret", name)
	return nil
}

// missing returns the keys that neither details nor the connection Secret
// secret hold. The cache may not show the step's own last write of the
// Secret yet: keys missing there are looked for on the API server before
// they count as missing.
func (s *secrets[T]) missing(ctx context.Context, req *bosun.Pass[T], secret string, keys []string, details ConnectionDetails) ([]string, error) {
	missing, err := s.missingIn(ctx, req.Client, req.Object, secret, keys, details)
	if err == nil && len(missing) > 0 {
		missing, err = s.missingIn(ctx, req.APIReader, req.Object, secret, keys, details)
	}
	if err != nil {
		return nil, s.rec.fail(ReasonConnectionSecretFailed, err)
	}
	return missing, nil
}

// missingIn returns the keys that neither details nor the connection
// Secret, read through r, hold. A Secret that the object does not control
// counts as holding everything: publishing to it fails anyway.
func (s *secrets[T]) missingIn(ctx context.Context, r client.Reader, obj T, secret string, keys []string, details ConnectionDetails) ([]string, error) {
	sec := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: secret}, sec)
	switch {
	case apierrors.IsNotFound(err):
		sec = &corev1.Secret{}
	case err != nil:
		return nil, fmt.Errorf("reading connection secret %s: %w", secret, err)
	case !metav1.IsControlledBy(sec, obj):
		return nil, nil
	}
	var missing []string
	for _, k := range keys {
		if len(details[k]) == 0 && len(sec.Data[k]) == 0 {
			missing = append(missing, k)
		}
	}
	return missing, nil
}

// intact reports whether the connection Secret of the pass's object, when
// it has one, is in the manager's cache, controlled by the object and
// labelled LabelConnectionSecret, with every credential key the step's
// clients name (as learned at a Connect): a pass that calls nothing (a
// first observation put off, a batch round's observation taken) would not
// repair it, nor label it.
func (s *secrets[T]) intact(ctx context.Context, req *bosun.Pass[T]) bool {
	obj := req.Object
	name := s.nameOf(obj)
	if name == "" {
		return true
	}
	sec := &corev1.Secret{}
	if err := req.Client.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, sec); err != nil || !metav1.IsControlledBy(sec, obj) || !labelled(sec) {
		return false
	}
	if keys := s.keys.Load(); keys != nil {
		for _, k := range *keys {
			if len(sec.Data[k]) == 0 {
				return false
			}
		}
	}
	return true
}

// checkName reports, as an invalid spec, a connection Secret name that no
// Secret can have: the details could never be published, and each pass
// would make the resource, or set new credentials on it, in vain.
func (s *secrets[T]) checkName(obj T) error {
	name := s.nameOf(obj)
	if name == "" {
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		if len(name) > validation.DNS1123SubdomainMaxLength {
			name = fmt.Sprintf("%.32s... (%d characters)", name, len(name))
		}
		return s.rec.fail(ReasonInvalidSpec, InvalidSpec(fmt.Errorf("the connection secret name %q is not a valid Secret name: %s", name, strings.Join(errs, "; "))))
	}
	return nil
}
