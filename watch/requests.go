package watch

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// newObject returns a new, empty object of type T, which must be a pointer
// to a struct.
func newObject[T client.Object]() (T, error) {
	var zero T
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return zero, fmt.Errorf("type %s is not a pointer to a struct", t)
	}
	return reflect.New(t.Elem()).Interface().(T), nil
}

// requestsOf returns a request for each item of list that keep accepts (nil
// keeps them all), sorted by namespace and name.
func requestsOf(list client.ObjectList, keep func(runtime.Object) bool) ([]reconcile.Request, error) {
	var reqs []reconcile.Request
	err := meta.EachListItem(list, func(item runtime.Object) error {
		if keep != nil && !keep(item) {
			return nil
		}
		m, err := meta.Accessor(item)
		if err != nil {
			return err
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: m.GetNamespace(), Name: m.GetName()}})
		return nil
	})
	sortRequests(reqs)
	return reqs, err
}

// sortRequests sorts reqs by namespace and name, so that handlers enqueue
// in a stable order.
func sortRequests(reqs []reconcile.Request) {
	slices.SortFunc(reqs, func(a, b reconcile.Request) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
}

// checkItems reports whether list holds items of type T, when its type says
// so: a struct with an Items slice of T's element type (or of T). Lists of
// another shape pass.
func checkItems[T client.Object](list client.ObjectList) error {
	want := reflect.TypeFor[T]()
	v := reflect.ValueOf(list)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	items := v.Elem().FieldByName("Items")
	if !items.IsValid() || items.Kind() != reflect.Slice {
		return nil
	}
	elem := items.Type().Elem()
	if elem == want || reflect.PointerTo(elem) == want {
		return nil
	}
	return fmt.Errorf("list %T holds %s, not %s", list, elem, want)
}
