package shard

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/internal/rollout"
)

// standby takes over, for a member with Options.Standby, the objects it is
// the standby of, the moment the Lease of their member is closed (the
// annotationClosed the sharder, the member itself or a standby writes):
// it lists them from the API server,
// counts them as its own under its right in force (gate.takeOver) and
// hands their requests to the controllers' queues (Takeovers). Once the
// sharder has closed a tenure of a member, it neither changes the standby
// of that member's objects of the tenure nor gives them to anyone else
// than their standby, so the list says for good which are this member's.
type standby struct {
	m *Member

	mu     sync.Mutex
	queues []workqueue.TypedRateLimitingInterface[reconcile.Request]
	// right is the right the takeovers in taken were made under; taken
	// holds, by member, the closed tenure already taken over.
	right context.Context
	taken map[string]string
}

var _ manager.LeaderElectionRunnable = (*standby)(nil)

// NeedLeaderElection implements manager.LeaderElectionRunnable: every
// member is a standby.
func (*standby) NeedLeaderElection() bool { return false }

// addQueue adds a controller's queue, which receives the requests of the
// objects taken over from now until ctx ends.
func (sb *standby) addQueue(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	sb.mu.Lock()
	sb.queues = append(sb.queues, q)
	sb.mu.Unlock()
	go func() {
		<-ctx.Done()
		sb.mu.Lock()
		defer sb.mu.Unlock()
		for i, o := range sb.queues {
			if o == q {
				sb.queues = append(sb.queues[:i], sb.queues[i+1:]...)
				break
			}
		}
	}()
}

// Start implements manager.Runnable: it watches the ring's Leases, in a
// cache of its own, and looks for closed tenures at each change and every
// renew period (a right that begins anew takes over again).
func (sb *standby) Start(ctx context.Context) error {
	m := sb.m
	c, err := cache.New(m.mgr.GetConfig(), cache.Options{
		Scheme:           m.mgr.GetScheme(),
		Mapper:           m.mgr.GetRESTMapper(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         map[client.Object]cache.ByObject{&coordinationv1.Lease{}: m.leases()},
	})
	if err != nil {
		return fmt.Errorf("shard: ring %q: the standby's cache: %w", m.opts.Ring, err)
	}
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	inf, err := c.GetInformer(ctx, &coordinationv1.Lease{})
	if err != nil {
		return fmt.Errorf("shard: ring %q: watching the ring's leases: %w", m.opts.Ring, err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, o any) { poke(o) },
	}); err != nil {
		return fmt.Errorf("shard: ring %q: watching the ring's leases: %w", m.opts.Ring, err)
	}
	go func() {
		if err := c.Start(ctx); err != nil {
			m.mgr.GetLogger().Error(err, "running the standby's cache", "ring", m.opts.Ring)
		}
	}()
	c.WaitForCacheSync(ctx)
	log := m.mgr.GetLogger().WithValues("ring", m.opts.Ring, "member", m.opts.Identity)
	wake := time.NewTimer(m.opts.RenewPeriod)
	defer wake.Stop()
	for {
		next, err := sb.scan(ctx, c)
		if err != nil && ctx.Err() == nil {
			log.Error(err, "taking over the objects of a closed member")
		}
		// Look again when a Lease is due to expire or a fence to end, and
		// at least every renew period.
		wait := m.opts.RenewPeriod
		if !next.IsZero() {
			wait = min(wait, max(time.Until(next)+time.Millisecond, 0))
		}
		wake.Reset(wait)
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-wake.C:
		}
	}
}

// scan takes over the objects of every tenure of another member that is
// closed and that this member has not taken over under its right in
// force. It closes the Lease of a member that has expired itself, as the
// sharder does, so that the takeover does not wait for the sharder, which
// the member that died may have run. It returns when to look again: the
// first expiry of a live member's Lease, or the end of a fence.
//
// The sharder changes the standby of a member's object only while the
// member's Lease is alive, with a patch that must land before the Lease
// expires and within Options.standbyFence of the member's renewal
// (keepStandby). A Lease closed after it expired therefore names the
// objects' standbys for good, and one that its member closed as it
// stopped does so once the fence has passed since its last renewal: the
// list of the objects is taken only then (takeoverFrom).
func (sb *standby) scan(ctx context.Context, c cache.Cache) (next time.Time, err error) {
	m := sb.m
	right := m.gate.currentRight()
	if right == nil {
		return next, nil
	}
	sb.mu.Lock()
	if sb.right != right {
		sb.right, sb.taken = right, map[string]string{}
	}
	sb.mu.Unlock()
	var leases coordinationv1.LeaseList
	if err := c.List(ctx, &leases, client.InNamespace(m.opts.Namespace)); err != nil {
		return next, fmt.Errorf("listing the leases: %w", err)
	}
	later := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	prefix := LeaseName(m.opts.Ring, "")
	now := time.Now()
	for i := range leases.Items {
		l := &leases.Items[i]
		member, ok := strings.CutPrefix(l.Name, prefix)
		if !ok || member == m.opts.Identity || l.Name == rollout.LeaseName(m.opts.Ring) {
			continue
		}
		closed := l.Annotations[annotationClosed]
		if closed == "" {
			switch {
			case ptr.Deref(l.Spec.HolderIdentity, "") == "":
				continue
			case rollout.Alive(l, now):
				later(leaseExpiry(l))
				continue
			}
			if closed, err = sb.closeExpired(ctx, l); err != nil {
				return next, err
			}
			if closed == "" {
				continue
			}
		} else if from := takeoverFrom(l, m.opts.standbyFence()); now.Before(from) {
			later(from)
			continue
		}
		sb.mu.Lock()
		done := sb.taken[member] == closed
		sb.mu.Unlock()
		if done {
			continue
		}
		n, err := sb.takeOver(ctx, right, member, closed)
		if err != nil {
			return next, err
		}
		sb.mu.Lock()
		if sb.right == right {
			sb.taken[member] = closed
		}
		sb.mu.Unlock()
		if n > 0 {
			m.mgr.GetLogger().Info("took over the objects of a closed member as their standby", "ring", m.opts.Ring, "member", m.opts.Identity,
				"closedMember", member, "objects", n)
		}
	}
	return next, nil
}

// takeoverFrom returns when the standbys may list the objects of lease, a
// closed Lease: the fence (Options.standbyFence) after its renew time,
// the member's last renewal, by when every patch of the sharder that
// changed a standby of its objects has landed or failed (keepStandby);
// long past for a Lease closed once it had expired, at most a fence away
// for one its member closed as it stopped. When the member has come back
// since, the fence after its acquire time, in a tenure that began after
// the closing. Zero when the Lease has neither.
func takeoverFrom(lease *coordinationv1.Lease, fence time.Duration) time.Time {
	since := lease.Spec.RenewTime
	if ptr.Deref(lease.Spec.HolderIdentity, "") != "" {
		since = lease.Spec.AcquireTime
	}
	if since == nil {
		return time.Time{}
	}
	return since.Add(fence)
}

// closeExpired closes lease, a member's that has expired, as the sharder
// does (closeLease), guarded by the resourceVersion read: a renewal or a
// closing by another since then makes it return no tenure and leaves the
// Lease to the next look. It returns the tenure it closed.
func (sb *standby) closeExpired(ctx context.Context, lease *coordinationv1.Lease) (string, error) {
	m := sb.m
	lease = lease.DeepCopy()
	tenure := closeTenure(lease)
	switch err := m.mgr.GetClient().Update(ctx, lease); {
	case apierrors.IsConflict(err), apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("closing the expired lease %s: %w", lease.Name, err)
	}
	m.mgr.GetLogger().Info("closed the expired lease of a member", "ring", m.opts.Ring, "member", m.opts.Identity, "lease", lease.Name)
	return tenure, nil
}

// takeOver lists, from the API server, the objects labelled for member
// with this member as their standby, assigned in member's closed tenure or
// before, takes them over under right (but those this member let go since
// the list began) and queues their requests. It returns how many it took
// over.
func (sb *standby) takeOver(ctx context.Context, right context.Context, member, closed string) (int, error) {
	m := sb.m
	selector := labels.SelectorFromSet(labels.Set{m.shardLabel: member, m.standbyLabel: m.opts.Identity})
	var keys []types.NamespacedName
	listed := time.Now()
	err := m.listFromServer(ctx, selector, func(o *metav1.PartialObjectMetadata) {
		if tenureEnded(o.Annotations[m.tenureKey], closed) {
			keys = append(keys, client.ObjectKeyFromObject(o))
		}
	})
	if err != nil {
		return 0, fmt.Errorf("listing the objects of member %s: %w", member, err)
	}
	if len(keys) == 0 {
		return 0, nil
	}
	if keys = m.gate.takeOver(right, keys, listed); len(keys) == 0 {
		return 0, nil
	}
	sb.mu.Lock()
	queues := append([]workqueue.TypedRateLimitingInterface[reconcile.Request](nil), sb.queues...)
	sb.mu.Unlock()
	for _, q := range queues {
		for _, k := range keys {
			q.Add(reconcile.Request{NamespacedName: k})
		}
	}
	return len(keys), nil
}
