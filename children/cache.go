package children

import (
	"reflect"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CacheSetsOnly limits a manager's cache of the kinds of objs to the
// objects that belong to a set (labelled LabelSet), so that an operator
// whose children are ConfigMaps, Secrets or Deployments does not cache
// every one of them in the cluster. Call it on the manager's cache
// options before ctrl.NewManager, with the kinds of the steps' Kinds:
//
//	opts := ctrl.Options{Scheme: scheme}
//	tuning.LeanCache(&opts.Cache)
//	children.CacheSetsOnly(&opts.Cache, &corev1.ConfigMap{}, &appsv1.Deployment{})
//
// The steps work the same: an object that is not a child yet (a name
// taken by an object the set did not create, or one WithAdoption takes
// over) is read from the API server, not the cache. A label selector the
// options already have for a kind is kept and narrowed. Other controllers
// of the manager that read these kinds from the cache see only the
// children of sets: do not use it for a kind they need whole.
func CacheSetsOnly(o *cache.Options, objs ...client.Object) {
	inSet, err := labels.NewRequirement(LabelSet, selection.Exists, nil)
	if err != nil {
		// LabelSet is a valid label key.
		panic(err)
	}
	if o.ByObject == nil {
		o.ByObject = map[client.Object]cache.ByObject{}
	}
	for _, obj := range objs {
		key, by := obj, cache.ByObject{}
		for have, h := range o.ByObject {
			if sameKind(have, obj) {
				key, by = have, h
				break
			}
		}
		if by.Label == nil {
			by.Label = labels.NewSelector()
		}
		by.Label = by.Label.Add(*inSet)
		o.ByObject[key] = by
	}
}

// sameKind reports whether a and b are of the same kind: the same Go type
// and, for unstructured objects, the same group, version and kind.
func sameKind(a, b client.Object) bool {
	return reflect.TypeOf(a) == reflect.TypeOf(b) &&
		a.GetObjectKind().GroupVersionKind() == b.GetObjectKind().GroupVersionKind()
}
