package managed

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// LabelConnectionSecret labels the connection Secrets the step writes
// (WithConnectionSecret), with the value "true". The step sets it when it
// creates a Secret, and adds it, with its next write or at its next pass,
// to a Secret it controls that lacks it (one an older version wrote), so
// that CacheConnectionSecretsOnly can leave every other Secret out of the
// manager's cache.
const LabelConnectionSecret = "bosun.dev/connection-secret"

// CacheConnectionSecretsOnly limits a manager's cache of Secrets to the
// connection Secrets of managed steps (labelled LabelConnectionSecret),
// where WithConnectionSecret's watch of them (Builder.Owns) would
// otherwise cache every Secret of the cluster: service account tokens,
// certificates, the releases of package managers. Call it on the manager's
// cache options before ctrl.NewManager, or from operator.Options.Manager:
//
//	opts := ctrl.Options{Scheme: scheme}
//	tuning.LeanCache(&opts.Cache)
//	managed.CacheConnectionSecretsOnly(&opts.Cache)
//
// The steps work the same: a connection Secret the cache does not hold
// yet (one without the label, written by an older version) is read from
// the API server and labelled by the object's next pass, which the
// missing Secret brings about; a deleted or changed one is written again
// as before. A label selector the options already have for Secrets is
// kept and narrowed: with children.CacheSetsOnly for Secrets as well, the
// cache holds only Secrets that carry both labels, so do not combine the
// two for Secrets. Other controllers of the manager that read Secrets
// from the cache see only connection Secrets: do not use it when they need
// others, or let them read those with the manager's APIReader.
func CacheConnectionSecretsOnly(o *cache.Options) {
	labelled, err := labels.NewRequirement(LabelConnectionSecret, selection.Exists, nil)
	if err != nil {
		// LabelConnectionSecret is a valid label key.
		panic(err)
	}
	if o.ByObject == nil {
		o.ByObject = map[client.Object]cache.ByObject{}
	}
	var key client.Object = &corev1.Secret{}
	by := cache.ByObject{}
	for have, h := range o.ByObject {
		if _, ok := have.(*corev1.Secret); ok {
			key, by = have, h
			break
		}
	}
	if by.Label == nil {
		by.Label = labels.NewSelector()
	}
	by.Label = by.Label.Add(*labelled)
	o.ByObject[key] = by
}

// labelled reports whether sec carries LabelConnectionSecret.
func labelled(sec *corev1.Secret) bool {
	_, ok := sec.Labels[LabelConnectionSecret]
	return ok
}
