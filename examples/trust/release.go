package trust

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/children"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// trustManagerFieldManager is the field manager of trust-manager's
// server-side applies of targets.
const trustManagerFieldManager = "trust-manager"

// releaseTrustManager gives up, on trust-manager's behalf, the fields
// trust-manager applied to the targets of the Bundle of req that the
// children step has taken over: server-side apply removes a field only
// when no manager owns it, so without this a target key, format or
// template label trust-manager wrote would stay on the target after the
// Bundle stops asking for it. Each such target costs one write, once: an
// apply of nothing as trust-manager, which removes what trust-manager
// alone owned (the fields the step applies stay, the step owns them too).
// The apply carries the target's UID and resourceVersion, so that it
// lands on the object read and on no other, and creates nothing.
func releaseTrustManager(ctx context.Context, req *bosun.Pass[*trustv1alpha1.Bundle], secrets bool) error {
	b := req.Object
	kinds := []string{"ConfigMap"}
	if secrets {
		kinds = append(kinds, "Secret")
	}
	for _, kind := range kinds {
		// The targets are cached as metadata only, which is all this
		// reads.
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind + "List"))
		if err := req.Client.List(ctx, list, client.MatchingLabels{children.LabelSet: ControllerName, children.LabelOwner: string(b.UID)}); err != nil {
			return fmt.Errorf("listing the targets: %w", err)
		}
		for i := range list.Items {
			t := &list.Items[i]
			if !slices.ContainsFunc(t.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool { return e.Manager == trustManagerFieldManager }) {
				continue
			}
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("v1")
			u.SetKind(kind)
			u.SetNamespace(t.GetNamespace())
			u.SetName(t.GetName())
			u.SetUID(t.GetUID())
			u.SetResourceVersion(t.GetResourceVersion())
			err := req.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(trustManagerFieldManager))
			switch {
			case apierrors.IsNotFound(err), apierrors.IsConflict(err):
				// Gone, or changed since the cache showed it: the watch
				// event of that change brings the next pass, which looks
				// again.
				continue
			case err != nil:
				return fmt.Errorf("releasing trust-manager's fields of %s %s/%s: %w", kind, t.GetNamespace(), t.GetName(), err)
			}
			req.Log.V(1).Info("released trust-manager's fields of a target", "kind", kind, "namespace", t.GetNamespace(), "name", t.GetName())
		}
	}
	return nil
}
