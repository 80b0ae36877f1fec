package operator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

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
		items := []*unstructured.Unstructured{u}
		if u.IsList() {
			// kubectl get -o yaml of several objects writes a List.
			list, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("--plan-edit %s: document %d: %w", path, i, err)
			}
			items = items[:0]
			for j := range list.Items {
				items = append(items, &list.Items[j])
			}
		}
		for _, it := range items {
			if it.GetKind() == "" || it.GetAPIVersion() == "" || it.GetName() == "" {
				return nil, fmt.Errorf("--plan-edit %s: document %d: an object needs apiVersion, kind and metadata.name", path, i)
			}
			objs = append(objs, it)
		}
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("--plan-edit %s: no object", path)
	}
	return objs, nil
}

// planEdits reads the proposed edit of the file path and makes each of
// its objects stand in for the live one in the reads of rec
// (plan.Recorder.Edit), as a dry run of its server-side apply through cfg
// (which changes nothing) says the API server would store it, and returns
// the keys of their passes, one per reconciler of the kind, which the plan
// covers alone. Each must be of a kind a reconciler of mgr reconciles, at
// the version it reconciles, exist, and come once.
func planEdits(ctx context.Context, path string, cfg *rest.Config, mgr ctrl.Manager, rec *plan.Recorder) ([]plan.Key, error) {
	objs, err := readEdits(path)
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("--plan-edit: %w", err)
	}
	reconcilers := bosun.ObservationOf(mgr).Reconcilers()
	var keys []plan.Key
	seen := map[string]bool{}
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		name := gvk.Kind + " " + u.GetName()
		if u.GetNamespace() != "" {
			name = gvk.Kind + " " + u.GetNamespace() + "/" + u.GetName()
		}
		if seen[gvk.GroupKind().String()+" "+name] {
			return nil, fmt.Errorf("--plan-edit: %s comes twice in %s: write one edit of it", name, path)
		}
		seen[gvk.GroupKind().String()+" "+name] = true
		var controllers []string
		for _, r := range reconcilers {
			if r.GVK.GroupKind() != gvk.GroupKind() {
				continue
			}
			if r.GVK.Version != gvk.Version {
				return nil, fmt.Errorf("--plan-edit: %s is of %s: the operator reconciles %s; write the edit at that version", name, gvk.GroupVersion(), r.GVK.GroupVersion())
			}
			controllers = append(controllers, r.Name)
		}
		if len(controllers) == 0 {
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
		for _, f := range []string{"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds"} {
			unstructured.RemoveNestedField(edited.Object, "metadata", f)
		}
		// An apply patch answers into edited, which the plan reads.
		//nolint:staticcheck // SA1019: client.Apply, for an object read from a file, whose answer is needed here.
		if err := c.Patch(ctx, edited, client.Apply, client.ForceOwnership, client.FieldOwner(editFieldManager), client.DryRunAll); err != nil {
			return nil, fmt.Errorf("--plan-edit: the API server refuses the edit of %s: %w", name, refusal(err, rec.Sensitive(gvk.GroupKind())))
		}
		// The status is the live one: an edit does not write it.
		if st, ok := live.Object["status"]; ok {
			edited.Object["status"] = st
		}
		rec.Edit(live, edited)
		for _, ctrlName := range controllers {
			keys = append(keys, plan.Key{Controller: ctrlName, Kind: gvk.Kind, Object: types.NamespacedName{Namespace: live.GetNamespace(), Name: live.GetName()}})
		}
	}
	return keys, nil
}

// editFieldManager is the field manager of the dry-run apply of an edit:
// kubectl's, as kubectl apply --server-side applies it.
const editFieldManager = "kubectl"

// refusal is the API server's refusal err of an edit, told without the
// values it quotes when the kind has sensitive fields: each field it
// names, with why.
func refusal(err error, sensitive bool) error {
	var status apierrors.APIStatus
	if !sensitive || !errors.As(err, &status) {
		return err
	}
	st := status.Status()
	msg := string(st.Reason)
	if st.Details != nil {
		var causes []string
		for _, c := range st.Details.Causes {
			causes = append(causes, fmt.Sprintf("%s: %s", c.Field, c.Type))
		}
		if len(causes) > 0 {
			msg += " (" + strings.Join(causes, "; ") + ")"
		}
	}
	return fmt.Errorf("%s; the kind has sensitive fields, so the API server's words, which may quote their values, are left out", msg)
}
