package children

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

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

// hashOf returns the hash recorded in AnnotationHash for the applied form u
// of a desired child: SHA-256 of its JSON (map keys sorted by encoding/json),
// without the hash annotation itself, in hexadecimal.
func hashOf(u *unstructured.Unstructured) (string, error) {
	c := u.DeepCopy()
	ann := c.GetAnnotations()
	delete(ann, AnnotationHash)
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

// upToDate reports whether the live child holds what the applied form
// desired of a child asks for: the same hash, and every value desired
// sets (see covers).
func upToDate(desired, live *unstructured.Unstructured) bool {
	if live.GetAnnotations()[AnnotationHash] != desired.GetAnnotations()[AnnotationHash] {
		return false
	}
	for k, v := range desired.Object {
		// The kind is the same by construction, and typed objects read
		// from some clients carry no type information.
		if k == "apiVersion" || k == "kind" {
			continue
		}
		if !covers(v, live.Object[k]) {
			return false
		}
	}
	return true
}

// covers reports whether live holds every value that desired sets. Maps are
// compared key by key (keys missing in desired are free); each element of a
// desired list must be covered by an element of the live list, in any
// order (others may have added elements); scalars must be equal, except that
// a zero scalar in desired (0, false, "") or a null counts as unset, and
// strings that both parse as resource quantities are compared as
// quantities ("1000m" covers "1").
func covers(desired, live any) bool {
	switch d := desired.(type) {
	case nil:
		return true
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			return len(d) == 0
		}
		for k, dv := range d {
			if !covers(dv, l[k]) {
				return false
			}
		}
		return true
	case []any:
		l, ok := live.([]any)
		if !ok {
			return len(d) == 0
		}
		// Each desired element must be in the live list, in any order:
		// server-side apply keeps the elements other managers added.
		for _, de := range d {
			found := false
			for _, le := range l {
				if covers(de, le) {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	case string:
		if d == "" {
			return true
		}
		l, ok := live.(string)
		if !ok {
			return false
		}
		return d == l || sameQuantity(d, l)
	case bool:
		return !d || live == true
	case int64, int32, int, float64:
		dn, _ := number(d)
		ln, ok := number(live)
		return dn == 0 || ok && dn == ln
	}
	return equality.Semantic.DeepEqual(desired, live)
}

// number returns v as a float64 if it is a number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// sameQuantity reports whether a and b parse as equal resource quantities.
func sameQuantity(a, b string) bool {
	qa, err := resource.ParseQuantity(a)
	if err != nil {
		return false
	}
	qb, err := resource.ParseQuantity(b)
	if err != nil {
		return false
	}
	return qa.Cmp(qb) == 0
}
