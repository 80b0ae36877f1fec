package shard

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bosunkit/bosun/internal/rollout"
)

// sharderWorkers is how many objects the sharder labels at once. A
// label patch waits mostly on the API server, and the objects of a member
// that died are reconciled by no one until they are labelled again, so
// the sharder keeps many in flight.
const sharderWorkers = 64

// sharder labels every object of the ring's kind with its member, moving
// objects between live members through a drain. Only the leader runs it.
// It has a cache of its own: the metadata of every object of the kind,
// and the Leases of the ring.
type sharder struct {
	m *Member
	c cache.Cache
	q workqueue.TypedRateLimitingInterface[types.NamespacedName]
	// changed is poked by every event of a Lease of the ring.
	changed chan struct{}

	mu      sync.Mutex
	members []string
	ring    Ring
	// versions holds the version of each live member; canary is the
	// rollout in force (nil: none), with the rings of the members of its
	// version and of the others (see owner).
	versions map[string]string
	canary   *rollout.Spec
	chooser  rollout.Chooser
	rings    [2]Ring
	// invalid is the error of the canary record last refused, logged once.
	invalid string
	// drainSeen is when this sharder first saw the drain of an object
	// whose drain label holds no time; timedOut, the drain start of the
	// objects whose drain timed out, counted once each.
	drainSeen map[types.NamespacedName]time.Time
	timedOut  map[types.NamespacedName]time.Time
	// evicted holds, by member, the acquire time of the Lease it was
	// evicted from, so that one eviction is written per tenure.
	evicted map[string]time.Time
	// closed holds, by member, the resourceVersion of the expired Lease
	// the sharder closed (closeLease).
	closed map[string]string
	// locks holds a *sync.RWMutex per member: closeLease holds it, and a
	// change of the standby of the member's objects (Options.Standby)
	// holds it for reading, so that no standby changes once the sharder
	// has closed the member's tenure.
	locks sync.Map
}

// memberLock returns the lock of member (see sharder.locks).
func (s *sharder) memberLock(member string) *sync.RWMutex {
	l, _ := s.locks.LoadOrStore(member, new(sync.RWMutex))
	return l.(*sync.RWMutex)
}

var _ manager.LeaderElectionRunnable = (*sharder)(nil)

// NeedLeaderElection implements manager.LeaderElectionRunnable: one
// replica at a time labels the objects.
func (*sharder) NeedLeaderElection() bool { return true }

// Start implements manager.Runnable.
func (s *sharder) Start(ctx context.Context) error {
	m := s.m
	log := m.mgr.GetLogger().WithValues("ring", m.opts.Ring, "sharder", m.opts.Identity)
	if err := s.startCache(ctx); err != nil {
		return fmt.Errorf("shard: ring %q: %w", m.opts.Ring, err)
	}
	if ctx.Err() != nil {
		return nil
	}
	log.Info("sharder started")
	var wg sync.WaitGroup
	defer wg.Wait()
	for range sharderWorkers {
		wg.Go(func() {
			for s.next(ctx) {
			}
		})
	}
	period := max(m.opts.RenewPeriod/2, 100*time.Millisecond)
	wake := time.NewTimer(period)
	defer wake.Stop()
	for {
		next, err := s.refresh(ctx)
		if err != nil && ctx.Err() == nil {
			log.Error(err, "reading the ring's members")
		}
		// Look again at the first expiry of a live member's Lease, the
		// moment its objects must move, and at least every period.
		wait := period
		if !next.IsZero() {
			wait = min(wait, max(time.Until(next)+time.Millisecond, 0))
		}
		wake.Reset(wait)
		select {
		case <-ctx.Done():
			s.q.ShutDown()
			membersGauge.DeleteLabelValues(m.opts.Ring)
			objectsGauge.DeletePartialMatch(prometheus.Labels{"ring": m.opts.Ring})
			return nil
		case <-s.changed:
		case <-wake.C:
		}
	}
}

// startCache starts the sharder's cache and its event handlers, and waits
// for it to sync.
func (s *sharder) startCache(ctx context.Context) error {
	m := s.m
	opts := cache.Options{
		Scheme: m.mgr.GetScheme(),
		Mapper: m.mgr.GetRESTMapper(),
		// The sharder reads labels and Lease specs only.
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         map[client.Object]cache.ByObject{&coordinationv1.Lease{}: m.leases()},
	}
	objects := &metav1.PartialObjectMetadata{}
	objects.SetGroupVersionKind(m.gvk)
	if m.opts.ObjectSelector != nil {
		opts.ByObject[objects] = cache.ByObject{Label: m.opts.ObjectSelector}
	}
	if len(m.opts.ObjectNamespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range m.opts.ObjectNamespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	c, err := cache.New(m.mgr.GetConfig(), opts)
	if err != nil {
		return fmt.Errorf("making the sharder's cache: %w", err)
	}
	s.c = c
	s.q = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](5*time.Millisecond, 5*time.Second),
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "shard-sharder-" + m.opts.Ring},
	)
	s.changed = make(chan struct{}, 1)
	s.drainSeen = map[types.NamespacedName]time.Time{}
	s.timedOut = map[types.NamespacedName]time.Time{}
	s.evicted = map[string]time.Time{}
	s.closed = map[string]string{}

	inf, err := c.GetInformer(ctx, objects)
	if err != nil {
		return fmt.Errorf("watching %s: %w", m.gvk.Kind, err)
	}
	enqueue := func(obj any) {
		if o, ok := obj.(client.Object); ok {
			s.q.Add(client.ObjectKeyFromObject(o))
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return fmt.Errorf("watching %s: %w", m.gvk.Kind, err)
	}
	leases, err := c.GetInformer(ctx, &coordinationv1.Lease{})
	if err != nil {
		return fmt.Errorf("watching the ring's leases: %w", err)
	}
	poke := func(any) {
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
	if _, err := leases.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, o any) { poke(o) }, DeleteFunc: poke,
	}); err != nil {
		return fmt.Errorf("watching the ring's leases: %w", err)
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			m.mgr.GetLogger().Error(err, "running the sharder's cache", "ring", m.opts.Ring)
		}
	}()
	c.WaitForCacheSync(ctx)
	return nil
}

// next labels the next object of the queue; false when the queue is shut
// down.
func (s *sharder) next(ctx context.Context) bool {
	key, shutdown := s.q.Get()
	if shutdown {
		return false
	}
	defer s.q.Done(key)
	switch err := s.assign(ctx, key); {
	case err == nil:
		s.q.Forget(key)
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		// A newer version is on its way to the cache.
		s.q.AddRateLimited(key)
	default:
		if ctx.Err() == nil {
			s.m.mgr.GetLogger().Error(err, "assigning an object", "ring", s.m.opts.Ring, "object", klog.KRef(key.Namespace, key.Name))
		}
		s.q.AddRateLimited(key)
	}
	return true
}

// refresh reads the live members; when they changed, it reassigns every
// object. It also counts the objects of each member. next is when the
// first Lease of a live member expires, if it is not renewed before.
func (s *sharder) refresh(ctx context.Context) (next time.Time, err error) {
	m := s.m
	var leases coordinationv1.LeaseList
	if err := s.c.List(ctx, &leases, client.InNamespace(m.opts.Namespace)); err != nil {
		return next, fmt.Errorf("listing the leases: %w", err)
	}
	now := time.Now()
	var members []string
	versions := map[string]string{}
	// No record, no canary; a record that cannot be used keeps the one in
	// force.
	var canary *rollout.Spec
	for i := range leases.Items {
		l := &leases.Items[i]
		if l.Name == rollout.LeaseName(m.opts.Ring) {
			s.mu.Lock()
			old := s.canary
			s.mu.Unlock()
			canary = s.readCanary(l, old)
			continue
		}
		if rollout.Alive(l, now) {
			members = append(members, *l.Spec.HolderIdentity)
			versions[*l.Spec.HolderIdentity] = l.Labels[rollout.LabelVersion]
			if end := leaseExpiry(l); next.IsZero() || end.Before(next) {
				next = end
			}
		}
	}
	slices.Sort(members)
	members = slices.Compact(members)
	same := s.reshape(members, versions, canary)
	membersGauge.WithLabelValues(m.opts.Ring).Set(float64(len(members)))

	objects := &metav1.PartialObjectMetadataList{}
	objects.SetGroupVersionKind(m.gvk.GroupVersion().WithKind(m.gvk.Kind + "List"))
	if err := s.c.List(ctx, objects); err != nil {
		return next, fmt.Errorf("listing the %s objects: %w", m.gvk.Kind, err)
	}
	counts := map[string]int{}
	for i := range objects.Items {
		counts[objects.Items[i].Labels[m.shardLabel]]++
	}
	if !same {
		s.reassign(objects.Items, members)
	}
	objectsGauge.DeletePartialMatch(prometheus.Labels{"ring": m.opts.Ring})
	for member, n := range counts {
		if member != "" {
			objectsGauge.WithLabelValues(m.opts.Ring, member).Set(float64(n))
		}
	}
	if !same {
		m.mgr.GetLogger().Info("ring members changed", "ring", m.opts.Ring, "members", members, "objects", len(objects.Items))
	}
	return next, nil
}

// reassign queues every object of objects for assign after a change of
// the live members. The objects of no live member come first: nothing
// reconciles them until they are labelled, unless their standby is alive
// and takes them over (Options.Standby): their labels only catch up. The
// others move through a drain, and their member goes on with them
// meanwhile. While standbys take objects over, the patches wait a renew
// period, so as not to hold up the standbys' lists and first passes at
// the API server: the objects are in work, and the live members' go on.
func (s *sharder) reassign(objects []metav1.PartialObjectMetadata, members []string) {
	m := s.m
	var later, takenOver []types.NamespacedName
	for i := range objects {
		o := &objects[i]
		switch key := client.ObjectKeyFromObject(o); {
		case slices.Contains(members, o.Labels[m.shardLabel]):
			later = append(later, key)
		case m.opts.Standby && o.Labels[m.shardLabel] != "" && slices.Contains(members, o.Labels[m.standbyLabel]):
			takenOver = append(takenOver, key)
		default:
			s.q.Add(key)
		}
	}
	var wait time.Duration
	if len(takenOver) > 0 {
		wait = m.opts.RenewPeriod
	}
	for _, key := range append(later, takenOver...) {
		s.q.AddAfter(key, wait)
	}
}

// readCanary reads the canary record lease; a record it cannot use
// leaves the rollout as it was (old), and is logged once.
func (s *sharder) readCanary(lease *coordinationv1.Lease, old *rollout.Spec) *rollout.Spec {
	spec, err := rollout.Parse(lease.Annotations)
	if err != nil {
		if msg := err.Error(); msg != s.invalid {
			s.invalid = msg
			s.m.mgr.GetLogger().Error(err, "ignoring an invalid canary record; the rollout stays as it was", "ring", s.m.opts.Ring, "lease", lease.Name)
		}
		return old
	}
	s.invalid = ""
	return &spec
}

// reshape makes the rings of the live members, of their versions and of
// the canary in force, and reports whether they were the same already.
func (s *sharder) reshape(members []string, versions map[string]string, canary *rollout.Spec) (same bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sameCanary := (canary == nil) == (s.canary == nil) && (canary == nil || *canary == *s.canary)
	if s.ring.points != nil && slices.Equal(members, s.members) && maps.Equal(versions, s.versions) && sameCanary {
		return true
	}
	s.members, s.versions, s.canary = members, versions, canary
	s.ring = NewRing(members, s.m.opts.Tokens)
	s.rings = [2]Ring{}
	if canary != nil {
		var pools [2][]string
		for _, member := range members {
			in := 0
			if versions[member] == canary.Version {
				in = 1
			}
			pools[in] = append(pools[in], member)
		}
		s.rings = [2]Ring{NewRing(pools[0], s.m.opts.Tokens), NewRing(pools[1], s.m.opts.Tokens)}
		// Parse validated the selector.
		s.chooser, _ = rollout.NewChooser(*canary)
	}
	if canary != nil {
		s.m.mgr.GetLogger().Info("canary in force", "ring", s.m.opts.Ring, "version", canary.Version, "percent", canary.Percent, "selector", canary.Selector)
	}
	return false
}

// ownerLocked returns the member that the object of ring key key and
// labels lbls belongs to; s.mu is held. With a canary in force, the
// members of its version take the objects it chooses, the others the
// rest; when the members of one side are all gone, the other side takes
// their objects, so that every object has a member while any lives.
func (s *sharder) ownerLocked(key string, lbls map[string]string) string {
	if s.canary == nil {
		return s.ring.Owner(key)
	}
	side := 0
	if s.chooser.Takes(key, lbls) {
		side = 1
	}
	if owner := s.rings[side].Owner(key); owner != "" {
		return owner
	}
	return s.rings[1-side].Owner(key)
}

// standbyLocked returns the standby of the object of ring key key and
// labels lbls whose member is owner: the member it would belong to if
// owner were gone (see ownerLocked); s.mu is held.
func (s *sharder) standbyLocked(key string, lbls map[string]string, owner string) string {
	if s.canary == nil {
		return s.ring.ownerExcept(key, owner)
	}
	side := 0
	if s.chooser.Takes(key, lbls) {
		side = 1
	}
	if sb := s.rings[side].ownerExcept(key, owner); sb != "" {
		return sb
	}
	return s.rings[1-side].ownerExcept(key, owner)
}

// awaitDrain looks again at the drain of key, started as its label value
// says, when the drain timeout is due; once it is past, it evicts member,
// the live member that has not let the object go.
func (s *sharder) awaitDrain(ctx context.Context, key types.NamespacedName, value, member string) error {
	m := s.m
	var lease coordinationv1.Lease
	if err := s.c.Get(ctx, types.NamespacedName{Namespace: m.opts.Namespace, Name: LeaseName(m.opts.Ring, member)}, &lease); err != nil {
		// A member without a Lease is gone: the next look at the members
		// moves its objects.
		return client.IgnoreNotFound(err)
	}
	s.mu.Lock()
	start, ok := drainStart(value)
	if !ok {
		if _, seen := s.drainSeen[key]; !seen {
			s.drainSeen[key] = time.Now()
		}
		start = s.drainSeen[key]
	}
	// A member that came back since has had the whole timeout.
	var tenure time.Time
	if acquired := lease.Spec.AcquireTime; acquired != nil {
		tenure = acquired.Time
	}
	if tenure.After(start) {
		start = tenure
	}
	left := m.opts.DrainTimeout - time.Since(start)
	count := left <= 0 && !s.timedOut[key].Equal(start)
	if count {
		s.timedOut[key] = start
	}
	evict := left <= 0 && lease.Annotations[annotationEvicted] == "" && !s.evicted[member].Equal(tenure)
	if evict {
		s.evicted[member] = tenure
	}
	s.mu.Unlock()
	if left > 0 {
		s.q.AddAfter(key, left)
		return nil
	}
	if count {
		drainTimeoutsCounter.WithLabelValues(m.opts.Ring, member).Inc()
	}
	if !evict {
		// Evicted already: the object moves once its Lease expires.
		return nil
	}
	// An update, guarded by the Lease's resourceVersion: the role that
	// renews Leases is enough.
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[annotationEvicted] = time.Now().UTC().Format(time.RFC3339)
	if err := m.mgr.GetClient().Update(ctx, &lease); err != nil {
		s.mu.Lock()
		delete(s.evicted, member)
		s.mu.Unlock()
		return fmt.Errorf("evicting member %s: %w", member, err)
	}
	m.mgr.GetLogger().Info("evicted a member that did not let an object go within the drain timeout", "ring", m.opts.Ring, "member", member,
		"object", klog.KRef(key.Namespace, key.Name), "drainTimeout", m.opts.DrainTimeout)
	return nil
}

// drainStart reads the start of a drain from the drain label's value, in
// Unix seconds; false for a value that holds no time.
func drainStart(value string) (time.Time, bool) {
	sec, err := strconv.ParseInt(value, 10, 64)
	if err != nil || sec <= 0 {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}

// lease returns member's Lease from the sharder's cache, nil when the
// cache has none, and whether it is alive now.
func (s *sharder) lease(ctx context.Context, member string) (*coordinationv1.Lease, bool) {
	var lease coordinationv1.Lease
	key := types.NamespacedName{Namespace: s.m.opts.Namespace, Name: LeaseName(s.m.opts.Ring, member)}
	if err := s.c.Get(ctx, key, &lease); err != nil {
		return nil, false
	}
	return &lease, rollout.Alive(&lease, time.Now())
}

// closeLease makes sure that the expired Lease of member, whose objects
// the sharder is about to take, cannot be renewed by a request already on
// its way: it clears the Lease's holder, guarded by its resourceVersion,
// so that a renewal based on the expired Lease fails with 409 Conflict
// and the member's next renewal starts a new tenure. It records the
// tenure it closed in annotationClosed, on which the standbys take the
// member's objects over (Options.Standby). It reads the Lease
// again for each object, and reports false when it is alive again: a
// member that renewed meanwhile keeps its objects.
func (s *sharder) closeLease(ctx context.Context, member string) (bool, error) {
	lock := s.memberLock(member)
	lock.Lock()
	defer lock.Unlock()
	lease, alive := s.lease(ctx, member)
	switch {
	case lease == nil, ptr.Deref(lease.Spec.HolderIdentity, "") == "":
		return true, nil
	case alive:
		return false, nil
	}
	rv := lease.ResourceVersion
	s.mu.Lock()
	done := s.closed[member] == rv
	s.mu.Unlock()
	if done {
		return true, nil
	}
	// The standbys of the member's objects of this tenure take them over
	// once they read it (Options.Standby).
	closeTenure(lease)
	if err := s.m.mgr.GetClient().Update(ctx, lease); err != nil {
		return false, fmt.Errorf("closing the lease of member %s: %w", member, err)
	}
	s.mu.Lock()
	s.closed[member] = rv
	s.mu.Unlock()
	return true, nil
}

// tenure returns the tenure of member, for the objects assigned to it
// (see tenurePrefix); empty when its Lease is not at hand.
func (s *sharder) tenure(ctx context.Context, member string) string {
	lease, _ := s.lease(ctx, member)
	if lease == nil {
		return ""
	}
	return tenureOf(lease)
}

// assign brings the object key one step closer to its member: a label
// for an object that has none or whose member is gone, a drain for one
// whose live member must let it go, the removal of a drain that is no
// longer wanted.
func (s *sharder) assign(ctx context.Context, key types.NamespacedName) error {
	m := s.m
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(m.gvk)
	if err := s.c.Get(ctx, key, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	have, draining := obj.Labels[m.shardLabel], obj.Labels[m.drainLabel] != ""
	s.mu.Lock()
	want := s.ownerLocked(m.key(key.Namespace, key.Name), obj.Labels)
	live := slices.Contains(s.members, have)
	if !draining {
		delete(s.drainSeen, key)
		delete(s.timedOut, key)
	}
	s.mu.Unlock()
	if want == "" {
		// No live member: the objects stay where they are.
		return nil
	}
	if have != "" && live && s.ended(ctx, have, obj) {
		return s.afterClosed(ctx, key, obj, have)
	}
	var (
		set, annotations map[string]string
		kind             string
	)
	switch {
	case have == want && !draining:
		if m.opts.Standby {
			return s.keepStandby(ctx, key, obj, have)
		}
		return nil
	case have == want:
		set = map[string]string{m.drainLabel: ""}
	case have == "":
		set, kind = map[string]string{m.shardLabel: want, m.drainLabel: ""}, moveAssign
		annotations = map[string]string{m.tenureKey: s.tenure(ctx, want)}
		s.placeStandby(set, key, obj, want)
	case !live:
		switch closed, err := s.closeLease(ctx, have); {
		case err != nil:
			return err
		case !closed:
			// The member came back after the last look at the members:
			// its objects move through a drain once the ring has it.
			return nil
		}
		to := want
		if sb := obj.Labels[m.standbyLabel]; m.opts.Standby && sb != "" && sb != have {
			// The standby took the object over when the Lease was
			// closed, unless it is gone too.
			var err error
			if to, err = s.standbyOr(ctx, sb, want); err != nil || to == "" {
				return err
			}
		}
		set, kind = map[string]string{m.shardLabel: to, m.drainLabel: ""}, moveTakeover
		annotations = map[string]string{m.tenureKey: s.tenure(ctx, to)}
		s.placeStandby(set, key, obj, to)
	case !draining:
		set, kind = map[string]string{m.drainLabel: strconv.FormatInt(time.Now().Unix(), 10)}, moveDrain
	default:
		// The live member lets it go once its pass ends; the removal of
		// its labels brings the object back here. One that does not
		// within the drain timeout is evicted.
		return s.awaitDrain(ctx, key, obj.Labels[m.drainLabel], have)
	}
	if err := m.patchLabels(ctx, key, obj.ResourceVersion, set, annotations); err != nil {
		return err
	}
	if kind != "" {
		movesCounter.WithLabelValues(m.opts.Ring, kind).Inc()
	}
	return nil
}

// ended reports whether the tenure in which obj was assigned to member
// has been closed (see tenureEnded), as member's Lease in the sharder's
// cache says.
func (s *sharder) ended(ctx context.Context, member string, obj client.Object) bool {
	lease, _ := s.lease(ctx, member)
	return lease != nil && tenureEnded(obj.GetAnnotations()[s.m.tenureKey], lease.Annotations[annotationClosed])
}

// standbyOr returns sb, the standby of an object whose member's tenure
// was closed, if it is alive; else it closes sb's Lease in turn and
// returns want. Empty when sb is alive again after the last look.
func (s *sharder) standbyOr(ctx context.Context, sb, want string) (string, error) {
	if _, alive := s.lease(ctx, sb); alive {
		return sb, nil
	}
	switch closed, err := s.closeLease(ctx, sb); {
	case err != nil:
		return "", err
	case !closed:
		return "", nil
	}
	return want, nil
}

// afterClosed labels an object whose member is alive again after the
// sharder closed the tenure it got the object in: with Options.Standby
// its standby may have taken it over meanwhile, so it goes to the standby
// if alive; else back to the member, in its new tenure.
func (s *sharder) afterClosed(ctx context.Context, key types.NamespacedName, obj *metav1.PartialObjectMetadata, have string) error {
	m := s.m
	to, kind := have, ""
	if sb := obj.Labels[m.standbyLabel]; sb != "" && sb != have {
		var err error
		if to, err = s.standbyOr(ctx, sb, have); err != nil || to == "" {
			return err
		}
		if to == sb {
			kind = moveTakeover
		}
	}
	set := map[string]string{m.shardLabel: to, m.drainLabel: ""}
	s.placeStandby(set, key, obj, to)
	if err := m.patchLabels(ctx, key, obj.ResourceVersion, set, map[string]string{m.tenureKey: s.tenure(ctx, to)}); err != nil {
		return err
	}
	if kind != "" {
		movesCounter.WithLabelValues(m.opts.Ring, kind).Inc()
	}
	return nil
}

// placeStandby adds to set, the labels an object assigned to owner gets,
// those of Options.Standby: its standby and the presence labels of the
// two, and the removal of any other presence label.
func (s *sharder) placeStandby(set map[string]string, key types.NamespacedName, obj *metav1.PartialObjectMetadata, owner string) {
	m := s.m
	if !m.opts.Standby {
		return
	}
	s.mu.Lock()
	sb := s.standbyLocked(m.key(key.Namespace, key.Name), obj.Labels, owner)
	s.mu.Unlock()
	set[m.standbyLabel] = sb
	keep := map[string]bool{presenceKey(m.opts.Ring, owner): true}
	if sb != "" {
		keep[presenceKey(m.opts.Ring, sb)] = true
	}
	for k := range obj.Labels {
		if strings.HasPrefix(k, m.opts.Ring+presenceInfix) && !keep[k] {
			set[k] = ""
		}
	}
	for k := range keep {
		set[k] = presenceValue
	}
}

// keepStandby gives an object of the live member owner the standby the
// ring gives it now, with the presence labels, if it has another. It
// changes nothing once the sharder has closed owner's tenure: the
// standby may be taking the object over.
func (s *sharder) keepStandby(ctx context.Context, key types.NamespacedName, obj *metav1.PartialObjectMetadata, owner string) error {
	m := s.m
	set := map[string]string{}
	s.placeStandby(set, key, obj, owner)
	for k, v := range set {
		if cur, ok := obj.Labels[k]; (v == "" && !ok) || (v != "" && cur == v) {
			delete(set, k)
		}
	}
	if len(set) == 0 {
		return nil
	}
	lock := s.memberLock(owner)
	lock.RLock()
	defer lock.RUnlock()
	lease, alive := s.lease(ctx, owner)
	if !alive || s.ended(ctx, owner, obj) {
		// The next look at the object hands it over instead.
		s.q.AddAfter(key, s.m.opts.RenewPeriod)
		return nil
	}
	// The member may close its Lease as it stops, and once the Lease has
	// expired a standby may close it, neither holding the lock, and the
	// cache may not show it yet: the patch lands within the fence from
	// the renewal the cache shows, which is no later than the member's
	// last, and before the Lease expires, or not at all (takeoverFrom).
	deadline := lease.Spec.RenewTime.Add(m.opts.standbyFence())
	if exp := leaseExpiry(lease); exp.Before(deadline) {
		deadline = exp
	}
	pctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	return m.patchLabels(pctx, key, obj.ResourceVersion, set, nil)
}
