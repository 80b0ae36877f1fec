package children

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// blockerPoll is how often the step looks up on the API server the
// blockers that the cache does not hold, and drops the writes it has
// remembered for longer than cacheGrace.
const blockerPoll = 5 * time.Second

// blockerHandler returns the handler, for the watch of the declared kind
// gvk, that enqueues the parents whose children the object of an event
// blocks: its change, its release by its controller or its deletion may
// let their sets converge, which their backoff would otherwise delay (or,
// for a ReasonChildConflict, which is not retried, put off until the
// parent changes).
func blockerHandler[T client.Object](s *Step[T], gvk schema.GroupVersionKind) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		return s.mem.blocked(blocker{gvk: gvk, key: client.ObjectKeyFromObject(obj)})
	})
}

// blockerPoller returns the source that, every blockerPoll, drops the writes
// remembered for longer than cacheGrace and enqueues the parents of the
// blockers the cache does not hold that r, the API server, shows changed
// or gone (see pollBlockers).
func blockerPoller[T client.Object](s *Step[T], r client.Reader) source.Source {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		go func() {
			_ = wait.PollUntilContextCancel(ctx, blockerPoll, false, func(ctx context.Context) (bool, error) {
				s.mem.expire()
				for _, req := range pollBlockers(ctx, s, r) {
					q.Add(req)
				}
				return false, nil
			})
		}()
		return nil
	})
}

// pollBlockers reads from r the metadata of each blocker that the cache
// does not hold (under CacheSetsOnly, an object with no set label), and
// returns the parents of those that changed since their pass saw them or
// are gone, once per change (see memory.polled). A blocker that cannot be
// read is looked up again next time.
func pollBlockers[T client.Object](ctx context.Context, s *Step[T], r client.Reader) []reconcile.Request {
	var reqs []reconcile.Request
	versions := map[blocker]string{}
	for _, u := range s.mem.unseen() {
		rv, read := versions[u.blocker]
		if !read {
			obj := &metav1.PartialObjectMetadata{}
			obj.SetGroupVersionKind(u.gvk)
			switch err := r.Get(ctx, u.key, obj); {
			case apierrors.IsNotFound(err):
				rv = ""
			case err != nil:
				continue
			default:
				rv = obj.GetResourceVersion()
			}
			versions[u.blocker] = rv
		}
		if rv != u.resourceVersion {
			s.mem.polled(u, rv)
			reqs = append(reqs, reconcile.Request{NamespacedName: u.parent})
		}
	}
	return reqs
}
