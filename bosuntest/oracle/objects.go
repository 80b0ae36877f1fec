package oracle

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/bosunkit/bosun/conditions"
)

// items returns the objects of list, typed or unstructured.
func items(list client.ObjectList) ([]client.Object, error) {
	objs, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("reading the list's items: %w", err)
	}
	out := make([]client.Object, 0, len(objs))
	for _, o := range objs {
		co, ok := o.(client.Object)
		if !ok {
			return nil, fmt.Errorf("list item %T is not a client.Object", o)
		}
		out = append(out, co)
	}
	return out, nil
}

// content returns obj as the maps of its JSON form: the object itself when
// it is unstructured, a conversion of it otherwise.
func content(obj client.Object) (map[string]any, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		return u.UnstructuredContent(), nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T to unstructured: %w", obj, err)
	}
	return m, nil
}

// freshList returns an empty list of the same type and kind as list.
func freshList(list client.ObjectList) client.ObjectList {
	l := list.DeepCopyObject().(client.ObjectList)
	// A list with no items field cannot be emptied; the List call that
	// follows refuses it.
	_ = meta.SetList(l, nil)
	return l
}

// kindOf returns obj's kind: from its type information, from c's scheme,
// or its Go type name when neither knows it.
func kindOf(c client.Client, obj runtime.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	if c != nil {
		if gvk, err := apiutil.GVKForObject(obj, c.Scheme()); err == nil {
			return gvk.Kind
		}
	}
	name := fmt.Sprintf("%T", obj)
	name = strings.TrimLeft(name, "*")
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// describe returns "Kind namespace/name", or "Kind name" for a cluster
// scoped object.
func describe(c client.Client, obj client.Object) string {
	if obj.GetNamespace() == "" {
		return kindOf(c, obj) + " " + obj.GetName()
	}
	return kindOf(c, obj) + " " + obj.GetNamespace() + "/" + obj.GetName()
}

// readyOf returns the Ready condition of an object's JSON form, and false
// when it has none.
func readyOf(m map[string]any) (map[string]any, bool) {
	conds, _, _ := unstructured.NestedSlice(m, "status", "conditions")
	for _, c := range conds {
		cm, ok := c.(map[string]any)
		if ok && cm["type"] == conditions.TypeReady {
			return cm, true
		}
	}
	return nil, false
}

// readyText renders the Ready condition of an object's JSON form for an
// error message: `Ready False/Reason "message" (generation 2)`, or "no
// Ready condition".
func readyText(m map[string]any) string {
	ready, ok := readyOf(m)
	if !ok {
		return "no Ready condition"
	}
	status, _, _ := unstructured.NestedString(ready, "status")
	reason, _, _ := unstructured.NestedString(ready, "reason")
	message, _, _ := unstructured.NestedString(ready, "message")
	s := "Ready " + status
	if reason != "" {
		s += "/" + reason
	}
	if message != "" {
		s += fmt.Sprintf(" %q", message)
	}
	if g, ok, _ := unstructured.NestedInt64(ready, "observedGeneration"); ok {
		s += fmt.Sprintf(" (generation %d)", g)
	}
	return s
}

// joinLines renders a list of findings after a heading, one a line,
// sorted.
func joinLines(heading string, lines []string) string {
	return heading + ":" + indent(lines)
}

// joinOrdered renders lines one a line, in the given order.
func joinOrdered(lines []string) string {
	return strings.Join(lines, "\n\t")
}

// count returns "1 line", "2 lines".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
