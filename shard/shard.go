package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/bosunkit/bosun/internal/plan"
	"github.com/bosunkit/bosun/internal/rollout"
)

// Label keys. An object's shard label names the member that reconciles
// it; its drain label asks that member to let it go.
const (
	// LabelPrefix, followed by the ring's name, is the shard label.
	LabelPrefix = "shard.bosun.dev/"
	// DrainPrefix, followed by the ring's name, is the drain label.
	DrainPrefix = "drain.shard.bosun.dev/"
	// labelRing is the label of the members' Leases: the ring's name.
	labelRing = rollout.LabelRing
	// tenurePrefix, followed by the ring's name, is an annotation the
	// sharder puts on an object with its member's label: the acquire time
	// of the member's Lease (RFC 3339), which starts anew each time the
	// member comes back after its Lease expired. A member trusts its
	// cache's word that an object is its own, after a lapse of its Lease,
	// only for objects of its current tenure (see the package
	// documentation).
	tenurePrefix = "tenure.shard.bosun.dev/"
	// annotationEvicted, on a member's Lease, is the time (RFC 3339) at
	// which the sharder evicted the member for a drain it did not
	// acknowledge within Options.DrainTimeout.
	annotationEvicted = "shard.bosun.dev/evicted"
	// standbyPrefix, followed by the ring's name, is the label that names
	// the standby of an object (Options.Standby): the member that takes it
	// over the moment the sharder closes its member's expired Lease.
	standbyPrefix = "standby.shard.bosun.dev/"
	// presenceInfix: with Options.Standby, an object carries the label
	// <ring>.in.shard.bosun.dev/<member> for its member and its standby,
	// which select it for their caches.
	presenceInfix = ".in.shard.bosun.dev/"
	// annotationClosed, on a member's Lease, is the last tenure of the
	// member that the sharder closed (see closeLease): the objects assigned
	// in it, or before, are no longer the member's once their standby
	// may have taken them over.
	annotationClosed = "shard.bosun.dev/closed"
	// presenceValue is the value of a presence label, which caches select
	// by its key alone.
	presenceValue = "true"
)

// Defaults of Options, those of controller-runtime's leader election.
const (
	defaultLeaseDuration = 15 * time.Second
	defaultRenewDeadline = 10 * time.Second
	defaultRenewPeriod   = 2 * time.Second
	// defaultDrainTimeout is the default of Options.DrainTimeout: longer
	// than a pass that waits on external calls with their default
	// one-minute deadline.
	defaultDrainTimeout = 2 * time.Minute
)

// ErrInvalidOptions is wrapped by the error of New for options that
// cannot work.
var ErrInvalidOptions = errors.New("invalid shard options")

// KeyFunc returns the key an object is hashed by on the ring: objects
// with the same key always have the same member.
type KeyFunc func(namespace, name string) string

// ByName keys an object by its namespace and name: objects spread evenly
// over the members. It is the default.
func ByName(namespace, name string) string { return namespace + "/" + name }

// ByNamespace keys an object by its namespace: the objects of a namespace
// stay together on one member, for controllers that read across them.
func ByNamespace(namespace, _ string) string { return namespace }

// Options configure a member of a ring.
type Options struct {
	// Ring names the set of replicas that share the objects, a DNS label
	// of at most 40 characters ("widgets"). Required.
	Ring string
	// Identity names this replica among them, such as its Pod's name; it
	// must be unique in the ring and usable as a label value. Required.
	Identity string
	// Namespace holds the members' Leases. Required.
	Namespace string
	// Object is the kind whose objects the ring shares, such as
	// &v1.Widget{}. Required; its kind must be in the manager's scheme.
	Object client.Object
	// LeaseDuration is how long a member that stops renewing its Lease
	// keeps its objects. Zero means 15s.
	LeaseDuration time.Duration
	// RenewDeadline is how long a member goes on starting passes without
	// renewing its Lease, after which it cancels those running behind
	// Wrap: shorter than LeaseDuration, so that it stops before the
	// sharder may give its objects away. Zero means two thirds of
	// LeaseDuration.
	RenewDeadline time.Duration
	// RenewPeriod is how often a member renews its Lease, and retries a
	// renewal that failed. Zero means LeaseDuration / 7.5 (2s for 15s).
	RenewPeriod time.Duration
	// DrainTimeout is how long the sharder waits for a member to let go of
	// an object it was asked to (see Handover) before it evicts the
	// member. Zero means two minutes: longer than a pass that waits on
	// external calls with their default one-minute deadline.
	DrainTimeout time.Duration
	// Key is what an object is hashed by; nil means ByName.
	Key KeyFunc
	// Tokens is the number of points per member on the ring (see Ring);
	// zero means 128.
	Tokens int
	// ObjectNamespaces limit the objects the sharder assigns to these
	// namespaces, as the manager's cache of an operator that watches only
	// them. Empty means every namespace.
	ObjectNamespaces []string
	// ObjectSelector, when set, limits the objects the sharder assigns to
	// those it selects by their labels, and each member's cache of the
	// kind to those of its share it selects: a ring over part of a kind,
	// such as the objects of a cluster-scoped kind, which
	// ObjectNamespaces cannot tell apart. Nil means every object.
	ObjectSelector labels.Selector
	// Version is the build this member runs, such as "v1.4.0", a label
	// value. A Canary chooses its members by it, and the member's pass
	// metrics carry it. Empty is a version as well: that of the members
	// that name none.
	Version string
	// Standby gives every object a standby besides its member: the member
	// that would take it if its member were gone, which caches it too and
	// takes it over the moment the Lease of its member is closed, once
	// expired or by the member as it stops, before any label moves (see
	// Standbys in the package documentation). Each member caches about
	// twice its share. Set it alike on every member of a ring, and wire
	// Takeovers into the ring's controllers.
	Standby bool
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// withDefaults validates o and fills in its defaults.
func (o Options) withDefaults() (Options, error) {
	var errs []error
	if !dnsLabel.MatchString(o.Ring) || len(o.Ring) > 40 {
		errs = append(errs, fmt.Errorf("the Ring %q is not a DNS label of at most 40 characters", o.Ring))
	}
	if o.Identity == "" {
		errs = append(errs, errors.New("the Identity is empty"))
	} else if msgs := append(validation.IsValidLabelValue(o.Identity), validation.IsDNS1123Subdomain(o.Ring+"-"+o.Identity)...); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("the Identity %q is neither a label value nor part of a Lease name: %s", o.Identity, strings.Join(msgs, "; ")))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("the Namespace is empty"))
	}
	if o.Standby && o.Identity != "" {
		if msgs := validation.IsQualifiedName(presenceKey(o.Ring, o.Identity)); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("with Standby, the Identity %q does not make a label key: %s", o.Identity, strings.Join(msgs, "; ")))
		}
	}
	if msgs := validation.IsValidLabelValue(o.Version); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("the Version %q is not a label value: %s", o.Version, strings.Join(msgs, "; ")))
	}
	if o.Object == nil {
		errs = append(errs, errors.New("the Object is nil"))
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = defaultLeaseDuration
	}
	if o.RenewDeadline == 0 {
		o.RenewDeadline = o.LeaseDuration * 2 / 3
	}
	if o.RenewPeriod == 0 {
		o.RenewPeriod = o.LeaseDuration * 2 / 15
	}
	if o.DrainTimeout == 0 {
		o.DrainTimeout = defaultDrainTimeout
	}
	if o.DrainTimeout < 0 {
		errs = append(errs, fmt.Errorf("the DrainTimeout %s is negative", o.DrainTimeout))
	}
	if o.LeaseDuration < time.Second {
		errs = append(errs, fmt.Errorf("the LeaseDuration %s is shorter than a second, the Lease's unit", o.LeaseDuration))
	}
	if o.RenewDeadline >= o.LeaseDuration {
		errs = append(errs, fmt.Errorf("the RenewDeadline %s is not shorter than the LeaseDuration %s", o.RenewDeadline, o.LeaseDuration))
	}
	if o.RenewPeriod <= 0 || o.RenewPeriod >= o.RenewDeadline {
		errs = append(errs, fmt.Errorf("the RenewPeriod %s is not between zero and the RenewDeadline %s", o.RenewPeriod, o.RenewDeadline))
	}
	if o.Key == nil {
		o.Key = ByName
	}
	if err := errors.Join(errs...); err != nil {
		return o, fmt.Errorf("shard: %w: %w", ErrInvalidOptions, err)
	}
	return o, nil
}

// standbyFence bounds, from the renew time of a live member's Lease as
// the sharder's cache shows it, the moment by which a patch of the
// sharder that changes the standby of the member's object must land
// (keepStandby); the standbys of a member that closed its Lease as it
// stopped list its objects only once the fence has passed since its last
// renewal (takeoverFrom). A renew period, so that a copy of the Lease as
// old as that leaves time for a patch, plus another or half a second,
// whichever is longer, and no longer than the Lease lasts.
func (o Options) standbyFence() time.Duration {
	return min(o.RenewPeriod+max(o.RenewPeriod, 500*time.Millisecond), o.LeaseDuration)
}

// Member is one replica of a ring. Make it with New before the manager,
// whose cache options come from it (ConfigureCache), add it to the
// manager (SetupWithManager), and restrict the ring's controller to it
// (Predicate, ControllerOptions or Wrap). See the package documentation.
type Member struct {
	opts       Options
	shardLabel string
	drainLabel string
	tenureKey  string
	gate       *gate
	// standbyLabel and presence are the labels of Options.Standby; closed
	// is the tenure of this member that the sharder closed last, as its
	// Lease said at the last renewal.
	standbyLabel string
	presence     string
	closed       atomic.Pointer[string]
	standby      *standby

	// gvk and mgr are set by SetupWithManager.
	gvk schema.GroupVersionKind
	mgr ctrl.Manager
	// planning is set by SetupWithManager on the manager of a --plan run
	// (package operator): the member then holds no Lease and passes every
	// object, so that the plan covers the whole kind.
	planning atomic.Bool
}

// New returns a member of a ring, or an error wrapping ErrInvalidOptions.
func New(opts Options) (*Member, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Member{
		opts:       opts,
		shardLabel: LabelPrefix + opts.Ring,
		drainLabel: DrainPrefix + opts.Ring,
		tenureKey:  tenurePrefix + opts.Ring,
		gate:       newGate(opts.RenewDeadline),

		standbyLabel: standbyPrefix + opts.Ring,
		presence:     presenceKey(opts.Ring, opts.Identity),
	}
	if opts.Standby {
		m.standby = &standby{m: m}
	}
	m.gate.isBack = m.backInCache
	passes := map[bool]prometheus.Counter{
		false: passesCounter.WithLabelValues(opts.Ring, opts.Version, resultSuccess),
		true:  passesCounter.WithLabelValues(opts.Ring, opts.Version, resultError),
	}
	duration := passDuration.WithLabelValues(opts.Ring, opts.Version)
	m.gate.observe = func(d time.Duration, failed bool) {
		passes[failed].Inc()
		duration.Observe(d.Seconds())
	}
	m.gate.cached = m.inCache
	m.gate.confirm = m.onServer
	if opts.Standby {
		m.gate.foreign = m.foreignInCache
	}
	return m, nil
}

// inCache reports whether the manager's cache holds key labelled for this
// member, and the tenure it was assigned in.
func (m *Member) inCache(key types.NamespacedName) (bool, string) {
	obj, ok := m.cached(key)
	if !ok || obj.GetLabels()[m.shardLabel] != m.opts.Identity {
		return false, ""
	}
	tenure := obj.GetAnnotations()[m.tenureKey]
	if m.endedHere(tenure) {
		// The gate reads it from the API server, which says the same
		// until the sharder labels it again.
		return true, ""
	}
	return true, tenure
}

// onServer reads key from the API server and reports whether it is
// labelled for this member; an object not found is not.
func (m *Member) onServer(key types.NamespacedName) (bool, error) {
	if m.mgr == nil {
		return true, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.opts.RenewDeadline)
	defer cancel()
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(m.gvk)
	if err := m.mgr.GetAPIReader().Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("reading %s %s: %w", m.gvk.Kind, key, err)
	}
	return obj.Labels[m.shardLabel] == m.opts.Identity && !m.endedHere(obj.Annotations[m.tenureKey]), nil
}

// endedHere reports whether the tenure of this member in which an object
// was assigned to it, from its tenure annotation, has been closed by the
// sharder: the object is no longer this member's until the sharder labels
// it again. A label patch of the sharder decided on the closed Lease may
// still be on its way (to another member, or with Options.Standby to the
// standby that took the object over), so the member, back, takes none of
// them.
func (m *Member) endedHere(tenure string) bool {
	closed := m.closed.Load()
	return closed != nil && tenureEnded(tenure, *closed)
}

// presenceKey is the label that puts an object in the cache of member of
// ring, with Options.Standby.
func presenceKey(ring, member string) string { return ring + presenceInfix + member }

// cached returns key from the manager's cache; false when the cache does
// not hold it.
func (m *Member) cached(key types.NamespacedName) (client.Object, bool) {
	if m.mgr == nil {
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	obj := m.newObject()
	if err := m.mgr.GetCache().Get(ctx, key, obj); err != nil {
		return nil, false
	}
	return obj, true
}

// foreignInCache reports whether the manager's cache holds key labelled
// for another member, or for none: an object this member is the standby
// of (Options.Standby).
func (m *Member) foreignInCache(key types.NamespacedName) bool {
	obj, ok := m.cached(key)
	return ok && obj.GetLabels()[m.shardLabel] != m.opts.Identity
}

// backInCache reports whether the manager's cache holds key labelled for
// this member and not asked to leave: an object that left and came back.
func (m *Member) backInCache(key types.NamespacedName) bool {
	obj, ok := m.cached(key)
	if !ok {
		return false
	}
	l := obj.GetLabels()
	return l[m.shardLabel] == m.opts.Identity && l[m.drainLabel] == ""
}

// Identity is this member's name in the ring.
func (m *Member) Identity() string { return m.opts.Identity }

// ShardLabel is the label that names the member of an object.
func (m *Member) ShardLabel() string { return m.shardLabel }

// DrainLabel is the label that asks a member to let an object go.
func (m *Member) DrainLabel() string { return m.drainLabel }

// Selector selects the objects labelled for this member.
func (m *Member) Selector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{m.shardLabel: m.opts.Identity})
}

// CacheOptions returns the cache options of the ring's kind for this
// member: only the objects labelled for it, and with Options.Standby those
// it is the standby of. ConfigureCache puts them in a manager's cache
// options.
func (m *Member) CacheOptions() cache.ByObject {
	return cache.ByObject{Label: m.cacheSelector()}
}

// cacheSelector selects the objects this member caches.
func (m *Member) cacheSelector() labels.Selector {
	if !m.opts.Standby {
		return m.ofRing(m.Selector())
	}
	req, err := labels.NewRequirement(m.presence, selection.Exists, nil)
	if err != nil {
		// New validated the ring and the identity, which make the key.
		panic(fmt.Sprintf("shard: the presence label %q: %v", m.presence, err))
	}
	return m.ofRing(labels.NewSelector().Add(*req))
}

// ofRing narrows selector to the objects of Options.ObjectSelector.
func (m *Member) ofRing(selector labels.Selector) labels.Selector {
	if m.opts.ObjectSelector == nil {
		return selector
	}
	reqs, selectable := m.opts.ObjectSelector.Requirements()
	if !selectable {
		// labels.Nothing(): no object is the ring's.
		return labels.Nothing()
	}
	return selector.Add(reqs...)
}

// ConfigureCache limits the cache of the ring's kind in o to this member's
// objects, keeping the other settings o has for it: the manager's cache
// then holds this member's share only. Call it on the manager's options
// before ctrl.NewManager.
func (m *Member) ConfigureCache(o *cache.Options) {
	if o.ByObject == nil {
		o.ByObject = map[client.Object]cache.ByObject{}
	}
	for obj, by := range o.ByObject {
		if sameType(obj, m.opts.Object) {
			by.Label = m.cacheSelector()
			o.ByObject[obj] = by
			return
		}
	}
	o.ByObject[m.opts.Object] = m.CacheOptions()
}

// sameType reports whether a and b are objects of the same Go type.
func sameType(a, b client.Object) bool { return reflect.TypeOf(a) == reflect.TypeOf(b) }

// SetupWithManager adds to mgr the member's Lease, the drain of the
// objects it is asked to let go, and the sharder, which only the winner
// of mgr's leader election runs. It fails when the ring's kind is not in
// mgr's scheme. On the manager of a --plan run (package operator) it adds
// none of them, and the member's Predicate, Wrap and ControllerOptions
// pass every object: the plan covers the whole kind. Call it before
// ControllerOptions' queue is made (before the controller is built).
func (m *Member) SetupWithManager(mgr ctrl.Manager) error {
	if mgr == nil {
		return fmt.Errorf("shard: ring %q: %w: the manager is nil", m.opts.Ring, ErrInvalidOptions)
	}
	gvk, err := apiutil.GVKForObject(m.opts.Object, mgr.GetScheme())
	if err != nil {
		return fmt.Errorf("shard: ring %q: finding the kind of %T: %w", m.opts.Ring, m.opts.Object, err)
	}
	m.gvk, m.mgr = gvk, mgr
	if plan.Running(mgr) {
		// A plan's Lease would be a dry run, which holds nothing: the
		// member takes every object, and starts no Lease, drain or
		// sharder. Package operator's plan widens the cache to match.
		m.planning.Store(true)
		return nil
	}
	runnables := []manager.Runnable{&membership{m: m}, &drainer{m: m}, &sharder{m: m}}
	if m.standby != nil {
		runnables = append(runnables, m.standby)
	}
	for _, r := range runnables {
		if err := mgr.Add(r); err != nil {
			return fmt.Errorf("shard: ring %q: %w", m.opts.Ring, err)
		}
	}
	return nil
}

// Predicate passes the events of this member's objects that it has not
// been asked to let go, and with Options.Standby those of the objects it
// took over as their standby. Give it to the For of the ring's controller.
//
// With Options.Standby it also drops the updates that only move the
// ring's own labels of an object this member kept through them: a new
// standby, or the label of an object it had taken over catching up.
func (m *Member) Predicate() predicate.Predicate {
	mine := func(o client.Object) bool {
		if m.planning.Load() {
			return true
		}
		l := o.GetLabels()
		if l[m.shardLabel] == m.opts.Identity && l[m.drainLabel] == "" {
			return true
		}
		return m.opts.Standby && m.gate.takenOver(client.ObjectKeyFromObject(o))
	}
	p := predicate.NewPredicateFuncs(mine)
	if !m.opts.Standby {
		return p
	}
	p.UpdateFunc = func(e event.UpdateEvent) bool {
		if !mine(e.ObjectNew) {
			return false
		}
		// Kept through a change of the ring's labels only: nothing to do.
		kept := mine(e.ObjectOld) && m.ringLabelsOnly(e.ObjectOld, e.ObjectNew)
		return !kept
	}
	return p
}

// ringLabelsOnly reports whether before and after, two versions of an
// object, differ in the labels and annotations the ring writes (its shard,
// drain, standby and presence labels, its tenure annotation) and in
// nothing else.
func (m *Member) ringLabelsOnly(before, after client.Object) bool {
	if before.GetGeneration() != after.GetGeneration() {
		return false
	}
	ours := func(k string) bool {
		return k == m.shardLabel || k == m.drainLabel || k == m.standbyLabel || k == m.tenureKey ||
			strings.HasPrefix(k, m.opts.Ring+presenceInfix)
	}
	changed := false
	for _, pair := range [][2]map[string]string{{before.GetLabels(), after.GetLabels()}, {before.GetAnnotations(), after.GetAnnotations()}} {
		for k, v := range pair[0] {
			if w, ok := pair[1][k]; !ok || w != v {
				if !ours(k) {
					return false
				}
				changed = true
			}
		}
		for k := range pair[1] {
			if _, ok := pair[0][k]; !ok {
				if !ours(k) {
					return false
				}
				changed = true
			}
		}
	}
	if !changed {
		// A change elsewhere: status, say.
		return false
	}
	o, n := before.DeepCopyObject().(client.Object), after.DeepCopyObject().(client.Object)
	for _, obj := range []client.Object{o, n} {
		obj.SetLabels(nil)
		obj.SetAnnotations(nil)
		obj.SetResourceVersion("")
		obj.SetManagedFields(nil)
	}
	return equality.Semantic.DeepEqual(o, n)
}

// Takeovers returns the source of the requests of the objects this member
// takes over as their standby (Options.Standby), the moment the sharder
// closes the expired Lease of their member: add it to the ring's
// controller (with bosun's Builder, WatchesRawSource). Without
// Options.Standby it sends nothing.
func (m *Member) Takeovers() source.TypedSource[reconcile.Request] {
	return source.Func(func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		if m.standby != nil {
			m.standby.addQueue(ctx, q)
		}
		return nil
	})
}

// ControllerOptions returns opts for a controller of the ring: run on
// every replica, not only on the leader (NeedLeaderElection false), with
// a queue that hands a worker only the objects this member may work on
// now and tells the member when their pass ends (see Wrap, which does the
// same around a reconciler). The queue is the one opts.NewQueue makes;
// without one, the queue controller-runtime would make: its priority
// queue, or client-go's plain queue when opts.UsePriorityQueue is false,
// or is unset and the manager's controller options
// (Manager.GetControllerOptions, of the manager SetupWithManager was
// given) make it false.
//
// It works with any builder that takes controller.Options, bosun's
// (bosun.Builder.WithOptions) as well as controller-runtime's. The queue
// cannot reach the context of the passes it hands out: unlike Wrap, it
// does not cancel a running pass when the member's right lapses. With
// bosun's Builder, prefer WrapReconciler(member.Wrap) and
// NeedLeaderElection false.
func (m *Member) ControllerOptions(opts controller.Options) controller.Options {
	opts.NeedLeaderElection = ptr.To(false)
	own := opts.UsePriorityQueue
	priority := func() bool {
		if own == nil && m.mgr != nil {
			return ptr.Deref(m.mgr.GetControllerOptions().UsePriorityQueue, true)
		}
		return ptr.Deref(own, true)
	}
	plain, gated := opts.NewQueue, m.gate.newQueue(opts.NewQueue, priority, m.opts.RenewPeriod)
	opts.NewQueue = func(name string, rl workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		if m.planning.Load() && plain != nil {
			return plain(name, rl)
		}
		if m.planning.Load() {
			return workqueue.NewTypedRateLimitingQueueWithConfig(rl, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name})
		}
		return gated(name, rl)
	}
	return opts
}

// Wrap returns r restricted to this member: a pass runs only while the
// member's Lease is current (renewed within RenewDeadline) and the object
// has not been asked to leave, and the member lets an object go only once
// its running pass has ended. The context of a pass is cancelled, with
// cause ErrLeaseLost, when the member's right lapses: RenewDeadline after
// its last renewal, LeaseDuration - RenewDeadline before the sharder may
// give the object away (see the package documentation). A request
// refused for a Lease not current comes back after RenewPeriod; one
// refused because the object is leaving, or is no longer the member's on
// the API server after a lapse, is dropped. Use it, or ControllerOptions,
// in every controller of the ring's kind, with Predicate and
// NeedLeaderElection false; with bosun's Builder, through its
// WrapReconciler.
func (m *Member) Wrap(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if m.planning.Load() {
			return r.Reconcile(ctx, req)
		}
		v, right := m.gate.begin(req.NamespacedName)
		switch v {
		case drop:
			return reconcile.Result{}, nil
		case hold:
			return reconcile.Result{RequeueAfter: m.opts.RenewPeriod}, nil
		}
		defer m.gate.end(req.NamespacedName)
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		defer context.AfterFunc(right, func() { cancel(context.Cause(right)) })()
		res, err := r.Reconcile(ctx, req)
		if err != nil {
			m.gate.fail(req.NamespacedName)
		}
		return res, err
	})
}

// patchLabels sets (or, for an empty value, removes) labels of the object
// key of the ring's kind, and its annotations in annotations, guarded by
// resourceVersion rv: a write based on an older view of the object fails
// with 409 Conflict.
func (m *Member) patchLabels(ctx context.Context, key types.NamespacedName, rv string, set, annotations map[string]string) error {
	meta := map[string]any{"resourceVersion": rv, "labels": nullEmpty(set)}
	if len(annotations) > 0 {
		meta["annotations"] = nullEmpty(annotations)
	}
	body, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return fmt.Errorf("encoding the labels of %s: %w", key, err)
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(m.gvk)
	obj.Namespace, obj.Name = key.Namespace, key.Name
	if err := m.mgr.GetClient().Patch(ctx, obj, client.RawPatch(types.MergePatchType, body)); err != nil {
		return fmt.Errorf("labelling %s %s: %w", m.gvk.Kind, key, err)
	}
	return nil
}

// nullEmpty returns kv for a merge patch: an empty value removes its key.
func nullEmpty(kv map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range kv {
		if v == "" {
			out[k] = nil
		} else {
			out[k] = v
		}
	}
	return out
}

// newObject returns an empty object of the ring's kind, of the type the
// manager's cache holds it as.
func (m *Member) newObject() client.Object {
	obj := m.opts.Object.DeepCopyObject().(client.Object)
	obj.SetNamespace("")
	obj.SetName("")
	return obj
}

// isDrain reports whether o is an object of this member that it is asked
// to let go.
func (m *Member) isDrain(o client.Object) bool {
	l := o.GetLabels()
	return l[m.shardLabel] == m.opts.Identity && l[m.drainLabel] != ""
}

// leavingInCache reports whether the manager's cache holds key as an
// object of this member asked to leave.
func (m *Member) leavingInCache(key types.NamespacedName) bool {
	obj, ok := m.cached(key)
	return ok && m.isDrain(obj)
}

// leases is the cache configuration of the ring's Leases: those of its
// namespace labelled with the ring.
func (m *Member) leases() cache.ByObject {
	return cache.ByObject{
		Namespaces: map[string]cache.Config{m.opts.Namespace: {}},
		Label:      labels.SelectorFromSet(labels.Set{labelRing: m.opts.Ring}),
	}
}

// key returns the ring key of an object.
func (m *Member) key(namespace, name string) string { return m.opts.Key(namespace, name) }

// listFromServer lists, from the API server, the metadata of the objects
// of the ring's kind that selector and Options.ObjectSelector select, in
// Options.ObjectNamespaces (every namespace when empty), a page at a
// time, and calls each with every one.
func (m *Member) listFromServer(ctx context.Context, selector labels.Selector, each func(*metav1.PartialObjectMetadata)) error {
	selector = m.ofRing(selector)
	namespaces := m.opts.ObjectNamespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	for _, ns := range namespaces {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(m.gvk.GroupVersion().WithKind(m.gvk.Kind + "List"))
		for {
			if err := m.mgr.GetAPIReader().List(ctx, list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: selector},
				client.Limit(500), client.Continue(list.Continue)); err != nil {
				return fmt.Errorf("listing %s objects: %w", m.gvk.Kind, err)
			}
			for i := range list.Items {
				each(&list.Items[i])
			}
			if list.Continue == "" {
				break
			}
		}
	}
	return nil
}
