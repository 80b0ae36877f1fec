package children

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// drifted reports whether the live child differs from the applied form
// desired of a child (see upToDate), which calls for applying it again.
func drifted(desired *unstructured.Unstructured, live client.Object) (bool, error) {
	lu, err := liveUnstructured(live)
	if err != nil {
		return false, err
	}
	return !upToDate(desired, lu), nil
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

// liveUnstructured returns the live object in unstructured form, for
// comparison.
func liveUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}
