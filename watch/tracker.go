package watch

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// defaultLease is how long a tracked reference stays fresh after its last
// Track unless WithLease says otherwise (WithLease states it).
const defaultLease = 10 * time.Minute

// Reference names an object that a parent read: its group and kind, and its
// namespace and name. The version does not matter: every version of a kind
// serves the same objects.
type Reference struct {
	GroupKind schema.GroupKind
	Key       client.ObjectKey
}

// String returns the kind and key, such as "ConfigMap default/settings" or
// "Deployment.apps default/web".
func (r Reference) String() string {
	return r.GroupKind.String() + " " + r.Key.String()
}

// compareReferences orders references by kind, then key.
func compareReferences(a, b Reference) int {
	return cmp.Or(
		cmp.Compare(a.GroupKind.Group, b.GroupKind.Group),
		cmp.Compare(a.GroupKind.Kind, b.GroupKind.Kind),
		cmp.Compare(a.Key.Namespace, b.Key.Namespace),
		cmp.Compare(a.Key.Name, b.Key.Name),
	)
}

// TrackerOption configures a Tracker.
type TrackerOption func(*Tracker)

// WithLease sets how long a reference stays fresh after its last Track. A
// duration that is not positive means the default, ten minutes.
func WithLease(d time.Duration) TrackerOption {
	return func(t *Tracker) {
		if d > 0 {
			t.lease = d
		}
	}
}

// WithClock sets the clock leases are measured with; tests pass a fake
// one. The default is the real clock.
func WithClock(c clock.PassiveClock) TrackerOption {
	return func(t *Tracker) {
		if c != nil {
			t.clock = c
		}
	}
}

// Tracker remembers which objects the parents of one controller read, and
// wakes a parent when an object it read changes. Steps record what they read
// with Track, or read and record in one call with Get; the controller
// watches each kind they read with Handler. A Tracker serves one controller:
// the parents it enqueues are keys of that controller's kind.
//
// Each Track renews the reference's lease. While the lease runs, every
// event on the object enqueues the parent. After it has run out, the next
// event enqueues the parent one last time and drops the reference: a parent
// that still reads the object tracks it again in that reconcile, and one that
// stopped reading it is not woken by it again. So a parent that was merely
// quiet for longer than the lease never misses a change, and one that moved
// on is woken at most once more.
//
// References of a deleted parent go with Forget, or with ForgetOnDelete
// watching the parents' kind.
//
// A Tracker is safe for concurrent use. Make one with NewTracker.
type Tracker struct {
	scheme *runtime.Scheme
	lease  time.Duration
	clock  clock.PassiveClock

	mu sync.Mutex
	// parents holds, for each tracked object, the parents that read it and
	// when each one's lease runs out.
	parents map[Reference]map[client.ObjectKey]time.Time
	// refs holds, for each parent, the objects it tracks: parents the
	// other way round, for Forget and References.
	refs map[client.ObjectKey]map[Reference]struct{}
}

// NewTracker returns a Tracker that finds the kinds of typed objects in
// scheme (the manager's, mgr.GetScheme()). A nil scheme means client-go's
// scheme of the built-in kinds.
func NewTracker(scheme *runtime.Scheme, opts ...TrackerOption) *Tracker {
	if scheme == nil {
		scheme = clientgoscheme.Scheme
	}
	t := &Tracker{
		scheme:  scheme,
		lease:   defaultLease,
		clock:   clock.RealClock{},
		parents: map[Reference]map[client.ObjectKey]time.Time{},
		refs:    map[client.ObjectKey]map[Reference]struct{}{},
	}
	for _, opt := range opts {
		opt(t)
	}
	return t
}

// Track records that parent by read, or looked for, the object of kind gvk
// with key, and renews the reference's lease. Track before reading: an
// event between the read and the Track would otherwise be missed. Track
// also an object that was not found, so that its creation wakes by.
func (t *Tracker) Track(by client.Object, gvk schema.GroupVersionKind, key client.ObjectKey) {
	parent := client.ObjectKeyFromObject(by)
	ref := Reference{GroupKind: gvk.GroupKind(), Key: key}
	expires := t.clock.Now().Add(t.lease)

	t.mu.Lock()
	defer t.mu.Unlock()
	ps := t.parents[ref]
	if ps == nil {
		ps = map[client.ObjectKey]time.Time{}
		t.parents[ref] = ps
	}
	ps[parent] = expires
	rs := t.refs[parent]
	if rs == nil {
		rs = map[Reference]struct{}{}
		t.refs[parent] = rs
	}
	rs[ref] = struct{}{}
}

// Get tracks the object with key for parent by (see Track), with the kind
// of obj from the Tracker's scheme, and then reads it from c into obj. It
// returns c's error as it is, so apierrors.IsNotFound works on it; a missing
// object stays tracked. In a bosun step:
//
//	err := tracker.Get(ctx, req.Client, req.Object, key, secret)
func (t *Tracker) Get(ctx context.Context, c client.Reader, by client.Object, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	gvk, err := apiutil.GVKForObject(obj, t.scheme)
	if err != nil {
		return fmt.Errorf("watch: tracking %s: %w", key, err)
	}
	t.Track(by, gvk, key)
	return c.Get(ctx, key, obj, opts...)
}

// Forget drops every reference of parent by, for a parent that is gone.
func (t *Tracker) Forget(by client.ObjectKey) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for ref := range t.refs[by] {
		t.dropLocked(by, ref)
	}
}

// dropLocked removes the reference ref of parent. t.mu must be held.
func (t *Tracker) dropLocked(parent client.ObjectKey, ref Reference) {
	if ps := t.parents[ref]; ps != nil {
		delete(ps, parent)
		if len(ps) == 0 {
			delete(t.parents, ref)
		}
	}
	if rs := t.refs[parent]; rs != nil {
		delete(rs, ref)
		if len(rs) == 0 {
			delete(t.refs, parent)
		}
	}
}

// References returns the references parent by holds, fresh or waiting for
// their last event, sorted by kind and key.
func (t *Tracker) References(by client.ObjectKey) []Reference {
	t.mu.Lock()
	refs := make([]Reference, 0, len(t.refs[by]))
	for ref := range t.refs[by] {
		refs = append(refs, ref)
	}
	t.mu.Unlock()
	slices.SortFunc(refs, compareReferences)
	return refs
}

// Handler returns the handler that enqueues the parents that tracked the
// object of an event. Watch every kind the steps track with it:
//
//	b.Watches(&corev1.Secret{}, tracker.Handler())
//
// The kind of the event's object comes from the Tracker's scheme (or from
// the object itself, for unstructured and metadata-only objects).
func (t *Tracker) Handler() handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(t.requests)
}

// requests is the mapping of Handler: the parents of obj. Parents whose
// lease has run out are returned one last time and dropped.
func (t *Tracker) requests(ctx context.Context, obj client.Object) []reconcile.Request {
	gvk, err := apiutil.GVKForObject(obj, t.scheme)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "cannot tell the kind of the changed object", "object", klog.KObj(obj))
		return nil
	}
	ref := Reference{GroupKind: gvk.GroupKind(), Key: client.ObjectKeyFromObject(obj)}
	now := t.clock.Now()

	t.mu.Lock()
	var reqs []reconcile.Request
	for parent, expires := range t.parents[ref] {
		reqs = append(reqs, reconcile.Request{NamespacedName: parent})
		if !now.Before(expires) {
			t.dropLocked(parent, ref)
		}
	}
	t.mu.Unlock()
	sortRequests(reqs)
	return reqs
}

// ForgetOnDelete returns a handler for the parents' own kind that forgets
// (see Forget) each parent that is deleted, and enqueues nothing. Add it as
// a second watch on the kind the controller reconciles:
//
//	b.Watches(&v1.Parent{}, tracker.ForgetOnDelete())
func (t *Tracker) ForgetOnDelete() handler.EventHandler {
	return handler.Funcs{
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			if e.Object != nil {
				t.Forget(client.ObjectKeyFromObject(e.Object))
			}
		},
	}
}
