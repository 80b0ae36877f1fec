package tuning

import (
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/bosunkit/bosun/internal/plumbing"
	"github.com/bosunkit/bosun/internal/trim"
)

// Enable turns on, for the manager made from o, every piece of tuning
// that is off by default (docs/TUNING.md lists them with what each one
// pays):
//
//   - the cache's HTTP client drops managedFields from the JSON of list
//     and watch answers before they are decoded, but for the children of
//     a set (see LeanCache), and the manager's client drops them from the
//     answers to the bosun engine's own writes, and cuts the answer to a
//     status write down to the object's version;
//   - the cache looks up the scope of each kind and version in the
//     RESTMapper once, rather than on every read;
//   - the cache's informers build their namespace index only when asked
//     for one namespace while holding objects of another;
//   - the controllers bosun's builder makes from the manager start their
//     workers before their informers have listed, and hand the keys of a
//     reconcile's logger to the sink only when a line is logged.
//
// Call it after setting o's NewCache and NewClient, whose caches and
// clients it wraps. Without Enable, a bosun operator runs on
// controller-runtime's and client-go's plumbing as they come, but for
// LeanCache where package operator sets it.
func Enable(o *ctrl.Options) {
	newCache := o.NewCache
	if newCache == nil {
		newCache = cache.New
	}
	o.NewCache = func(cfg *rest.Config, co cache.Options) (cache.Cache, error) {
		if co.HTTPClient != nil {
			co.HTTPClient = trim.Reads(co.HTTPClient)
		}
		if co.Mapper != nil {
			co.Mapper = plumbing.RememberMappings(co.Mapper)
		}
		co.NewInformer = plumbing.LazyNamespaces(co.NewInformer)
		c, err := newCache(cfg, co)
		if err != nil {
			return nil, err
		}
		return tunedCache{Cache: c}, nil
	}
	newClient := o.NewClient
	if newClient == nil {
		newClient = client.New
	}
	o.NewClient = func(cfg *rest.Config, co client.Options) (client.Client, error) {
		if co.HTTPClient != nil {
			co.HTTPClient = trim.Marked(co.HTTPClient)
		}
		return newClient(cfg, co)
	}
}

// Enabled reports whether mgr was made from options given to Enable:
// bosun's builder then tunes the controllers it makes from mgr.
func Enabled(mgr manager.Manager) bool {
	if mgr == nil {
		return false
	}
	_, ok := mgr.GetCache().(tunedCache)
	return ok
}

// tunedCache is the cache of a manager made from options given to Enable;
// it is the cache it wraps in all but its type.
type tunedCache struct {
	cache.Cache
}
