package shard

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Label keys. An object's shard label names the member that reconciles
// it; its drain label asks that member to let it go.
const (
	// LabelPrefix, followed by the ring's name, is the shard label.
	LabelPrefix = "shard.bosun.dev/"
	// DrainPrefix, followed by the ring's name, is the drain label.
	DrainPrefix = "drain.shard.bosun.dev/"
	// LabelRing is the label of the members' Leases: the ring's name.
	LabelRing = "shard.bosun.dev/ring"
)

// Defaults of Options.
const (
	DefaultLeaseDuration = 15 * time.Second
)

// Options configure a member of a ring.
type Options struct {
	// Ring names the set of replicas that share the objects, a DNS label
	// ("widgets"). Required.
	Ring string
	// Identity names this replica among them, such as its Pod's name.
	// Required.
	Identity string
	// Namespace holds the members' Leases. Required.
	Namespace string
	// Object is the kind whose objects the ring shares, such as
	// &v1.Widget{}. Required; its kind must be in the manager's scheme.
	Object client.Object
	// LeaseDuration is how long a member that stops renewing its Lease
	// keeps its objects. Zero means DefaultLeaseDuration.
	LeaseDuration time.Duration
	// RenewPeriod is how often a member renews its Lease. Zero means a
	// third of LeaseDuration.
	RenewPeriod time.Duration
	// Key is what an object is hashed by; nil means its namespace and
	// name. Return the namespace to keep a namespace's objects together.
	Key func(namespace, name string) string
	// Tokens is the number of points per member on the ring (see Ring).
	Tokens int
	// ObjectNamespaces limit the objects the sharder assigns to these
	// namespaces, as the manager's cache of an operator that watches only
	// them. Empty means every namespace.
	ObjectNamespaces []string
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func (o *Options) validate() error {
	var errs []error
	if !dnsLabel.MatchString(o.Ring) || len(o.Ring) > 40 {
		errs = append(errs, fmt.Errorf("the Ring %q is not a DNS label of at most 40 characters", o.Ring))
	}
	if o.Identity == "" {
		errs = append(errs, errors.New("the Identity is empty"))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("the Namespace is empty"))
	}
	if o.Object == nil {
		errs = append(errs, errors.New("the Object is nil"))
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = DefaultLeaseDuration
	}
	if o.RenewPeriod == 0 {
		o.RenewPeriod = o.LeaseDuration / 3
	}
	if o.RenewPeriod >= o.LeaseDuration {
		errs = append(errs, fmt.Errorf("the RenewPeriod %s is not shorter than LeaseDuration %s", o.RenewPeriod, o.LeaseDuration))
	}
	if o.Key == nil {
		o.Key = func(namespace, name string) string { return namespace + "/" + name }
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	return nil
}

// Member is one replica of a ring. Make it with New before the manager
// (its cache options come from it), then SetupWithManager, and give its
// controller Predicate and Wrap:
//
//	m, err := shard.New(shard.Options{Ring: "widgets", Identity: pod, Namespace: ns, Object: &v1.Widget{}})
//	opts := ctrl.Options{LeaderElection: true, LeaderElectionID: "widgets-sharder", ...}
//	m.ConfigureCache(&opts.Cache)
//	mgr, err := ctrl.NewManager(cfg, opts)
//	err = m.SetupWithManager(mgr)
//	err = ctrl.NewControllerManagedBy(mgr).For(&v1.Widget{}, builder.WithPredicates(m.Predicate())).
//		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
//		Complete(m.Wrap(r))
//
// Every replica reconciles its own share; the one that wins the manager's
// leader election also runs the sharder, which labels the objects.
type Member struct {
	opts       Options
	shardLabel string
	drainLabel string
	gvk        schema.GroupVersionKind

	mgr ctrl.Manager
	// renewed is when this member last renewed its Lease (Unix nanos).
	renewed atomic.Int64

	mu sync.Mutex
	// inflight counts the passes running per object; draining marks the
	// objects asked to leave, which start no pass.
	inflight map[types.NamespacedName]int
	draining map[types.NamespacedName]bool
}

// New returns a member of a ring.
func New(opts Options) (*Member, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Member{
		opts:       opts,
		shardLabel: LabelPrefix + opts.Ring,
		drainLabel: DrainPrefix + opts.Ring,
		inflight:   map[types.NamespacedName]int{},
		draining:   map[types.NamespacedName]bool{},
	}, nil
}

// ShardLabel is the label that names the member of an object.
func (m *Member) ShardLabel() string { return m.shardLabel }

// DrainLabel is the label that asks a member to let an object go.
func (m *Member) DrainLabel() string { return m.drainLabel }

// ConfigureCache limits the cache of the ring's kind to this member's
// objects: the manager's cache then holds its share only.
func (m *Member) ConfigureCache(o *cache.Options) {
	if o.ByObject == nil {
		o.ByObject = map[client.Object]cache.ByObject{}
	}
	by := o.ByObject[m.opts.Object]
	by.Label = labels.SelectorFromSet(labels.Set{m.shardLabel: m.opts.Identity})
	o.ByObject[m.opts.Object] = by
}

// SetupWithManager adds the member's Lease, the drain of the objects it
// is asked to let go, and the sharder (run by the leader only) to mgr.
func (m *Member) SetupWithManager(mgr ctrl.Manager) error {
	gvk, err := apiutil.GVKForObject(m.opts.Object, mgr.GetScheme())
	if err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	m.gvk, m.mgr = gvk, mgr
	if err := mgr.Add(&membership{m: m}); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	if err := mgr.Add(&drainer{m: m}); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	if err := mgr.Add(&sharder{m: m}); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	return nil
}

// Predicate passes the events of this member's objects that it has not
// been asked to let go.
func (m *Member) Predicate() predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		l := o.GetLabels()
		return l[m.shardLabel] == m.opts.Identity && l[m.drainLabel] == ""
	})
}

// Wrap returns r restricted to this member: a pass runs only while the
// member's Lease is current and the object has not been asked to leave,
// and the member lets an object go only once its running pass ends.
func (m *Member) Wrap(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if !m.current() {
			// Without a current Lease the sharder may be giving the
			// objects away: do nothing until it is renewed.
			return reconcile.Result{RequeueAfter: m.opts.RenewPeriod}, nil
		}
		if !m.begin(req.NamespacedName) {
			// Marked as leaving: unless the cache shows the object back
			// (its informer may tell the drainer after this pass began).
			if !m.back(ctx, req.NamespacedName) || !m.begin(req.NamespacedName) {
				return reconcile.Result{}, nil
			}
		}
		defer m.end(req.NamespacedName)
		return r.Reconcile(ctx, req)
	})
}

// current reports whether this member's Lease was renewed within the
// lease duration.
func (m *Member) current() bool {
	at := m.renewed.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < m.opts.LeaseDuration-m.opts.RenewPeriod/2
}

func (m *Member) begin(key types.NamespacedName) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.draining[key] {
		return false
	}
	m.inflight[key]++
	return true
}

func (m *Member) end(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.inflight[key]--; m.inflight[key] <= 0 {
		delete(m.inflight, key)
	}
}

// drain marks key as leaving and reports whether no pass of it runs.
func (m *Member) drain(key types.NamespacedName) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.draining[key] = true
	return m.inflight[key] == 0
}

// back reports whether key, marked as leaving, is this member's again in
// the cache (labelled for it, no drain), and then forgets the mark. The
// mark was set after the cache showed the drain, so a cache that shows
// the object without one shows it back.
func (m *Member) back(ctx context.Context, key types.NamespacedName) bool {
	obj, ok := m.opts.Object.DeepCopyObject().(client.Object)
	if !ok {
		return false
	}
	if err := m.mgr.GetCache().Get(ctx, key, obj); err != nil {
		return false
	}
	l := obj.GetLabels()
	if l[m.shardLabel] != m.opts.Identity || l[m.drainLabel] != "" {
		return false
	}
	m.undrain(key)
	return true
}

// undrain forgets that key was leaving: it is back, or gone.
func (m *Member) undrain(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.draining, key)
}

// leaseName is the name of identity's Lease in the ring.
func (m *Member) leaseName() string { return m.opts.Ring + "-" + m.opts.Identity }

// alive reports whether l, a member's Lease, is current at now.
func alive(l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil || l.Spec.HolderIdentity == nil || l.DeletionTimestamp != nil {
		return false
	}
	return now.Before(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}

// membership keeps this member's Lease and releases it on stop.
type membership struct{ m *Member }

func (ms *membership) NeedLeaderElection() bool { return false }

func (ms *membership) Start(ctx context.Context) error {
	m := ms.m
	c := m.mgr.GetClient()
	log := m.mgr.GetLogger().WithValues("ring", m.opts.Ring, "member", m.opts.Identity)
	tick := time.NewTicker(m.opts.RenewPeriod)
	defer tick.Stop()
	for {
		if err := ms.renew(ctx, c); err != nil && ctx.Err() == nil {
			log.Error(err, "renewing the member's lease")
		}
		select {
		case <-ctx.Done():
			m.renewed.Store(0)
			release, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: m.opts.Namespace, Name: m.leaseName()}}
			if err := c.Delete(release, lease); err != nil && !apierrors.IsNotFound(err) {
				log.Error(err, "releasing the member's lease")
			}
			return nil
		case <-tick.C:
		}
	}
}

// renew creates or renews the member's Lease.
func (ms *membership) renew(ctx context.Context, c client.Client) error {
	m := ms.m
	now := metav1.NewMicroTime(time.Now())
	seconds := int32(max(m.opts.LeaseDuration.Round(time.Second)/time.Second, 1))
	var lease coordinationv1.Lease
	err := c.Get(ctx, types.NamespacedName{Namespace: m.opts.Namespace, Name: m.leaseName()}, &lease)
	switch {
	case apierrors.IsNotFound(err):
		lease = coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: m.opts.Namespace, Name: m.leaseName(), Labels: map[string]string{LabelRing: m.opts.Ring}},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(m.opts.Identity), LeaseDurationSeconds: ptr.To(seconds),
				AcquireTime: &now, RenewTime: &now,
			},
		}
		if err := c.Create(ctx, &lease); err != nil {
			return fmt.Errorf("creating lease %s: %w", m.leaseName(), err)
		}
	case err != nil:
		return fmt.Errorf("reading lease %s: %w", m.leaseName(), err)
	default:
		lease.Spec.RenewTime = &now
		lease.Spec.HolderIdentity = ptr.To(m.opts.Identity)
		lease.Spec.LeaseDurationSeconds = ptr.To(seconds)
		if err := c.Update(ctx, &lease); err != nil {
			return fmt.Errorf("renewing lease %s: %w", m.leaseName(), err)
		}
	}
	m.renewed.Store(now.UnixNano())
	return nil
}

// isDrain reports whether e is an event of an object of this member that
// it is asked to let go.
func (m *Member) isDrain(o client.Object) bool {
	l := o.GetLabels()
	return l[m.shardLabel] == m.opts.Identity && l[m.drainLabel] != ""
}
