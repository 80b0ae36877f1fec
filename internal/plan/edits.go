package plan

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// editKey names an edited object: its kind, namespace and name.
type editKey struct {
	gk  schema.GroupKind
	obj types.NamespacedName
}

// edit is an object as a proposed edit would leave it, and what the edit
// changes of the live one.
type edit struct {
	obj     *unstructured.Unstructured
	changes []string
}

// withoutStatus returns m without its status and the metadata the API
// server keeps, which an edit does not set.
func withoutStatus(m map[string]any) map[string]any {
	out := runtime.DeepCopyJSON(m)
	delete(out, "status")
	if md, ok := out["metadata"].(map[string]any); ok {
		for _, k := range []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp"} {
			delete(md, k)
		}
		// kubectl's copy of the object it applied: whatever it holds, the
		// edit's own lines say, and it may hold sensitive values.
		if ann, ok := md["annotations"].(map[string]any); ok {
			delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
			if len(ann) == 0 {
				delete(md, "annotations")
			}
		}
	}
	return out
}

// editedReader is the reader of Recorder.Reader.
type editedReader struct {
	client.Reader
	rec    *Recorder
	scheme *runtime.Scheme
}

func (e editedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := e.Reader.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	return e.rec.overlay(obj, e.scheme)
}

func (e editedReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := e.Reader.List(ctx, list, opts...); err != nil {
		return err
	}
	return e.rec.overlayList(list, e.scheme)
}
