package children

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/panics"
)

// callDesired calls the DesiredFunc, recovering a panic into a
// *conditions.PanicError, so that Plan, which runs outside the engine,
// reports it as an error like Do does.
func callDesired[T client.Object](ctx context.Context, s *Step[T], req *bosun.Pass[T]) (objs []client.Object, err error) {
	if s.desired == nil {
		return nil, nil
	}
	if pe := panics.Catch(s.name+" desired", func() { objs, err = s.desired(ctx, req) }); pe != nil {
		return nil, pe
	}
	return objs, err
}

// stampChild checks the desired child obj (the i-th) and returns it in the form
// to apply: its namespace filled in, the set's labels, the owner reference
// or annotations, and the hash.
func stampChild[T client.Object](s *Step[T], req *bosun.Pass[T], obj client.Object, i int, ks []kind, parentGVK schema.GroupVersionKind) (*child, error) {
	invalid := func(format string, args ...any) error {
		return conditions.Terminal(ReasonInvalidChildren, fmt.Errorf(format, args...))
	}
	if obj == nil || reflect.ValueOf(obj).IsNil() {
		return nil, invalid("desired child %d is nil", i)
	}
	scheme := req.Client.Scheme()
	gvk, err := gvkOf(obj, scheme)
	if err != nil {
		return nil, invalid("desired child %d: %w", i, err)
	}
	var k *kind
	for j := range ks {
		if ks[j].gvk == gvk {
			k = &ks[j]
		}
	}
	if k == nil {
		return nil, invalid("desired child %s %q: %w", gvk.Kind, obj.GetName(), ErrUndeclaredKind)
	}
	if obj.GetName() == "" {
		return nil, invalid("desired child %d (%s) has no name", i, gvk.Kind)
	}
	u, err := toUnstructured(obj)
	if err != nil {
		return nil, invalid("desired child %s %q: %w", gvk.Kind, obj.GetName(), err)
	}
	u.SetGroupVersionKind(gvk)
	if gvk == secretGVK {
		if err := foldStringData(u); err != nil {
			return nil, invalid("desired child %s %q: %w", gvk.Kind, u.GetName(), err)
		}
	}
	namespaced, err := req.Client.IsObjectNamespaced(u)
	if err != nil {
		return nil, fmt.Errorf("looking up the scope of %s: %w", gvk.Kind, err)
	}
	parent := req.Object
	switch {
	case !namespaced:
		u.SetNamespace("")
	case u.GetNamespace() == "":
		if parent.GetNamespace() == "" {
			return nil, invalid("desired child %s %q needs a namespace: the parent is cluster-scoped", gvk.Kind, u.GetName())
		}
		u.SetNamespace(parent.GetNamespace())
	}
	ref := Ref{Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
	if err := ownChild(s, u, ref, parent, parentGVK); err != nil {
		return nil, err
	}
	hash, err := hashOf(u)
	if err != nil {
		return nil, err
	}
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[annotationHash] = hash
	u.SetAnnotations(ann)
	return &child{kind: k, ref: ref, applied: u}, nil
}

// secretGVK is the kind of a Secret, whose stringData the API server
// writes into data and never stores.
var secretGVK = schema.GroupVersionKind{Version: "v1", Kind: "Secret"}

// foldStringData moves the stringData of a Secret child u into its data,
// as the API server does (a key in both takes stringData's value): the
// applied form then holds what the API server stores, so that drift
// compares stored values and the step's field manager owns the stored
// fields.
func foldStringData(u *unstructured.Unstructured) error {
	sd, _ := u.Object["stringData"].(map[string]any)
	if len(sd) == 0 {
		delete(u.Object, "stringData")
		return nil
	}
	data, _ := u.Object["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for _, k := range slices.Sorted(maps.Keys(sd)) {
		str, ok := sd[k].(string)
		if !ok {
			return fmt.Errorf("stringData.%s is %T, want a string", k, sd[k])
		}
		data[k] = base64.StdEncoding.EncodeToString([]byte(str))
	}
	delete(u.Object, "stringData")
	u.Object["data"] = data
	return nil
}

// ownChild marks the child u as the set's and the parent's: the set's labels,
// and the owner reference to the parent or, for an unowned step, the
// parent's key in annotations. An owned child outside the parent's
// namespace is refused.
func ownChild[T client.Object](s *Step[T], u *unstructured.Unstructured, ref Ref, parent client.Object, parentGVK schema.GroupVersionKind) error {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelSet] = s.name
	labels[LabelOwner] = string(parent.GetUID())
	u.SetLabels(labels)
	if s.unowned {
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[annotationOwnerNamespace] = parent.GetNamespace()
		ann[annotationOwnerName] = parent.GetName()
		u.SetAnnotations(ann)
		return nil
	}
	if parent.GetNamespace() != "" && ref.Namespace != parent.GetNamespace() {
		where := "cluster-scoped"
		if ref.Namespace != "" {
			where = "in namespace " + ref.Namespace
		}
		return conditions.Terminal(ReasonInvalidChildren, fmt.Errorf("desired child %s is %s, and an owned child must be in the parent's namespace (use NewUnownedStep)", ref, where))
	}
	u.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion:         parentGVK.GroupVersion().String(),
		Kind:               parentGVK.Kind,
		Name:               parent.GetName(),
		UID:                parent.GetUID(),
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}})
	return nil
}

// toUnstructured returns obj as an unstructured object that can be applied:
// a deep copy for an unstructured obj, the converter's output (which leaves
// out omitempty fields at their zero value) for a typed one; without status
// and the server-owned metadata.
func toUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	var m map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		m = u.DeepCopy().Object
	} else {
		var err error
		m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("converting %T: %w", obj, err)
		}
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		for _, k := range []string{"creationTimestamp", "resourceVersion", "uid", "generation", "managedFields", "selfLink"} {
			delete(meta, k)
		}
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// hashOf returns the hash recorded in annotationHash for the applied form u
// of a desired child: SHA-256 of its JSON (map keys sorted by encoding/json),
// without the hash annotation itself, in hexadecimal.
func hashOf(u *unstructured.Unstructured) (string, error) {
	c := u.DeepCopy()
	ann := c.GetAnnotations()
	delete(ann, annotationHash)
	if len(ann) == 0 {
		ann = nil
	}
	c.SetAnnotations(ann)
	data, err := json.Marshal(c.Object)
	if err != nil {
		return "", fmt.Errorf("hashing %s %s: %w", c.GetKind(), c.GetName(), err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]), nil
}
