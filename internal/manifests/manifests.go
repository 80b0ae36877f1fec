package manifests

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// Build renders the kustomization in dir, as `kubectl kustomize dir` does,
// and returns the YAML, documents separated by "---", and the objects.
func Build(dir string) ([]byte, []*unstructured.Unstructured, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, nil, fmt.Errorf("manifests: rendering %s: %w", dir, err)
	}
	out, err := res.AsYaml()
	if err != nil {
		return nil, nil, fmt.Errorf("manifests: rendering %s: %w", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range res.Resources() {
		data, err := r.MarshalJSON()
		if err != nil {
			return nil, nil, fmt.Errorf("manifests: %s: %w", dir, err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, nil, fmt.Errorf("manifests: %s: %w", dir, err)
		}
		objs = append(objs, u)
	}
	return out, objs, nil
}

// order is the rank of a kind in Apply's order.
func order(kind string) int {
	switch kind {
	case "Namespace":
		return 0
	case "CustomResourceDefinition":
		return 1
	case "ServiceAccount", "ClusterRole", "Role":
		return 2
	case "ClusterRoleBinding", "RoleBinding":
		return 3
	}
	return 4
}

// Apply applies objs to the cluster of c with server-side apply as
// fieldOwner, forcing ownership of the fields it sets: Namespaces, then
// CRDs (waiting until they are Established), then RBAC, then the rest.
func Apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, fieldOwner string) error {
	sorted := slices.Clone(objs)
	slices.SortStableFunc(sorted, func(a, b *unstructured.Unstructured) int { return order(a.GetKind()) - order(b.GetKind()) })
	var crds []string
	for i, o := range sorted {
		if i > 0 && order(sorted[i-1].GetKind()) <= 1 && order(o.GetKind()) > 1 {
			if err := waitEstablished(ctx, c, crds); err != nil {
				return err
			}
		}
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return fmt.Errorf("manifests: %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		obj := o.DeepCopy()
		if err := c.Patch(ctx, obj, client.RawPatch("application/apply-patch+yaml", data), client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("manifests: applying %s %s: %w", o.GetKind(), client.ObjectKeyFromObject(o), err)
		}
		if o.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, o.GetName())
		}
	}
	return waitEstablished(ctx, c, crds)
}

// waitEstablished waits until each named CRD is Established, and its kind
// served.
func waitEstablished(ctx context.Context, c client.Client, names []string) error {
	for _, name := range names {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			// Unstructured, so that the client's scheme need not know CRDs.
			crd := &unstructured.Unstructured{}
			crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
			if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return false, nil //nolint:nilerr // not visible yet: poll again
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, cond := range conds {
				if m, ok := cond.(map[string]any); ok && m["type"] == string(apiextensionsv1.Established) && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("manifests: CRD %s not Established: %w", name, errors.Join(err, ctx.Err()))
		}
	}
	return nil
}
