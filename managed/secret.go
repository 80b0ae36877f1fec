package managed

import (
	"bytes"
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// publish writes details to the connection Secret, if one is configured:
// it creates the Secret owned by the object, or adds the details to it when
// they change something. The details never reach logs, events or
// conditions; errors name the Secret only.
func (s *Step[T]) publish(ctx context.Context, req *bosun.Pass[T], details ConnectionDetails) error {
	if s.cfg.secretName == nil {
		return nil
	}
	obj := req.Object
	name := s.cfg.secretName(obj)
	if name == "" {
		return nil
	}
	key := client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}
	sec := &corev1.Secret{}
	err := req.Client.Get(ctx, key, sec)
	if apierrors.IsNotFound(err) {
		sec = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
			Type:       corev1.SecretTypeOpaque,
		}
		sec.Data, _ = withDetails(nil, details)
		if err := controllerutil.SetControllerReference(obj, sec, req.Client.Scheme()); err != nil {
			return s.fail(ReasonConnectionSecretFailed, fmt.Errorf("owning connection secret %s: %w", name, err))
		}
		err = req.Client.Create(ctx, sec)
		if err == nil {
			req.Log.V(1).Info("created connection secret", "secret", name)
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return s.fail(ReasonConnectionSecretFailed, fmt.Errorf("creating connection secret %s: %w", name, err))
		}
		// The cache had not seen it yet: read it from the API server.
		sec = &corev1.Secret{}
		err = req.APIReader.Get(ctx, key, sec)
	}
	if err != nil {
		return s.fail(ReasonConnectionSecretFailed, fmt.Errorf("reading connection secret %s: %w", name, err))
	}
	if !metav1.IsControlledBy(sec, obj) {
		return s.fail(ReasonConnectionSecretFailed, fmt.Errorf("connection secret %s exists and is not controlled by this object", name))
	}
	data, changed := withDetails(sec.Data, details)
	if !changed {
		return nil
	}
	sec = sec.DeepCopy()
	sec.Data = data
	if err := req.Client.Update(ctx, sec); err != nil {
		return s.fail(ReasonConnectionSecretFailed, fmt.Errorf("updating connection secret %s: %w", name, err))
	}
	req.Log.V(1).Info("updated connection secret", "secret", name)
	return nil
}

// unpublish deletes the connection Secret if it exists and the object
// controls it. It reads from the API server, so a Secret the cache has not
// seen yet is not left behind.
func (s *Step[T]) unpublish(ctx context.Context, req *bosun.Pass[T]) error {
	if s.cfg.secretName == nil {
		return nil
	}
	obj := req.Object
	name := s.cfg.secretName(obj)
	if name == "" {
		return nil
	}
	sec := &corev1.Secret{}
	if err := req.APIReader.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, sec); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return s.fail(ReasonConnectionSecretFailed, fmt.Errorf("reading connection secret %s: %w", name, err))
	}
	if !metav1.IsControlledBy(sec, obj) {
		return nil
	}
	err := req.Client.Delete(ctx, sec, client.Preconditions{UID: &sec.UID})
	if err != nil && !apierrors.IsNotFound(err) {
		return s.fail(ReasonConnectionSecretFailed, fmt.Errorf("deleting connection secret %s: %w", name, err))
	}
	req.Log.V(1).Info("deleted connection secret", "secret", name)
	return nil
}
