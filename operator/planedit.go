package operator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/plan"
)

// readEdits reads the objects of a proposed edit from path ("-": the
// standard input), YAML or JSON documents.
func readEdits(path string) ([]*unstructured.Unstructured, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("--plan-edit: %w", err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for i := 1; ; i++ {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("--plan-edit %s: document %d: %w", path, i, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "" || u.GetAPIVersion() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("--plan-edit %s: document %d: an object needs apiVersion, kind and metadata.name", path, i)
		}
		objs = append(objs, u)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("--plan-edit %s: no object", path)
	}
	return objs, nil
}

// planEdits reads the proposed edit of the file path and makes each of
// its objects stand in for the live one in the reads of rec
// (plan.Recorder.Edit), as a dry-run update of the live object through
// cfg (which changes nothing) says the API server would store it, and
// returns their keys, which the plan covers alone. Each must be of a kind
// a reconciler of mgr reconciles, at the version it reconciles, and exist.
func planEdits(ctx context.Context, path string, cfg *rest.Config, mgr ctrl.Manager, rec *plan.Recorder) ([]plan.Key, error) {
	objs, err := readEdits(path)
	if err != nil {
		return nil, err
	}
	var keys []plan.Key
	c, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("--plan-edit: %w", err)
	}
	reconcilers := bosun.ObservationOf(mgr).Reconcilers()
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		name := gvk.Kind + " " + u.GetName()
		if u.GetNamespace() != "" {
			name = gvk.Kind + " " + u.GetNamespace() + "/" + u.GetName()
		}
		var controller string
		for _, r := range reconcilers {
			if r.GVK.GroupKind() != gvk.GroupKind() {
				continue
			}
			if r.GVK.Version != gvk.Version {
				return nil, fmt.Errorf("--plan-edit: %s is of %s: the operator reconciles %s; write the edit at that version", name, gvk.GroupVersion(), r.GVK.GroupVersion())
			}
			controller = r.Name
		}
		if controller == "" {
			return nil, fmt.Errorf("--plan-edit: %s: the operator reconciles no %s", name, gvk.GroupKind())
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(gvk)
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), live); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("--plan-edit: %s is not in the cluster: the plan of an edit needs the object it edits", name)
			}
			return nil, fmt.Errorf("--plan-edit: reading %s: %w", name, err)
		}
		edited := u.DeepCopy()
		unstructured.RemoveNestedField(edited.Object, "status")
		unstructured.RemoveNestedField(edited.Object, "metadata", "managedFields")
		edited.SetUID(live.GetUID())
		edited.SetResourceVersion(live.GetResourceVersion())
		if err := c.Update(ctx, edited, client.DryRunAll); err != nil {
			return nil, fmt.Errorf("--plan-edit: the API server refuses the edit of %s: %w", name, err)
		}
		// The status is the live one: an edit does not write it.
		if st, ok := live.Object["status"]; ok {
			edited.Object["status"] = st
		}
		rec.Edit(live, edited)
		keys = append(keys, plan.Key{Controller: controller, Kind: gvk.Kind, Object: types.NamespacedName{Namespace: live.GetNamespace(), Name: live.GetName()}})
	}
	return keys, nil
}
