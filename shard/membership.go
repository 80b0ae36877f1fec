package shard

import (
	"context"
	"errors"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/bosunkit/bosun/internal/rollout"
)

// idlePoll is how often a stopping member looks whether its passes have
// ended.
const idlePoll = 20 * time.Millisecond

// tenureOf is the tenure of a member's Lease: its acquire time.
func tenureOf(lease *coordinationv1.Lease) string {
	if lease.Spec.AcquireTime == nil {
		return ""
	}
	return lease.Spec.AcquireTime.UTC().Format(time.RFC3339Nano)
}

// leaseExpiry is when lease expires unless renewed: its renew time and
// duration (zero when it has neither).
func leaseExpiry(lease *coordinationv1.Lease) time.Time {
	if lease.Spec.RenewTime == nil || lease.Spec.LeaseDurationSeconds == nil {
		return time.Time{}
	}
	return lease.Spec.RenewTime.Add(time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second)
}

// tenureEnded reports whether tenure, the tenure an object was assigned
// in (tenurePrefix), has ended for good: it is closed, the last tenure of
// the member that the sharder closed (annotationClosed), or an earlier
// one. An object that names no tenure, or one that does not parse, counts
// as assigned before any.
func tenureEnded(tenure, closed string) bool {
	if closed == "" {
		return false
	}
	c, err := time.Parse(time.RFC3339Nano, closed)
	if err != nil {
		return false
	}
	t, err := time.Parse(time.RFC3339Nano, tenure)
	return err != nil || !t.After(c)
}

// LeaseName is the name of the Lease of member identity in ring.
func LeaseName(ring, identity string) string { return ring + "-" + identity }

// errEvicted: the sharder evicted the member, which lets its Lease expire.
var errEvicted = errors.New("the member was evicted")

// membership keeps this member's Lease, renewing it every RenewPeriod,
// and on stop waits for the member's passes to end and releases it.
type membership struct {
	m *Member
	// evicted is set while the member lets its Lease expire.
	evicted bool
}

var _ manager.LeaderElectionRunnable = (*membership)(nil)

// NeedLeaderElection implements manager.LeaderElectionRunnable: every
// replica is a member.
func (*membership) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable.
func (ms *membership) Start(ctx context.Context) error {
	m := ms.m
	c := m.mgr.GetClient()
	log := m.mgr.GetLogger().WithValues("ring", m.opts.Ring, "member", m.opts.Identity)
	// Renew every RenewPeriod, counted from the start of each renewal.
	wait.NonSlidingUntilWithContext(ctx, func(ctx context.Context) {
		switch err := ms.renew(ctx, c); {
		case errors.Is(err, errEvicted):
			if !ms.evicted {
				// No pass runs from now on; the Lease expires, the sharder
				// hands the member's objects over, and the member comes
				// back for a share of its own.
				m.gate.revoke()
				log.Info("evicted for a drain not acknowledged in time; letting the member's lease expire")
			}
			ms.evicted = true
		case err != nil && ctx.Err() == nil:
			log.Error(err, "renewing the member's lease")
		case err == nil:
			if ms.evicted {
				log.Info("back after an eviction")
			}
			ms.evicted = false
		}
	}, m.opts.RenewPeriod)
	ms.release(context.WithoutCancel(ctx), c)
	return nil
}

// release waits, at most RenewDeadline, for the passes running to end,
// and then deletes the Lease, so that the sharder hands the member's
// objects over at once. Passes still running by then keep the Lease,
// which expires.
func (ms *membership) release(ctx context.Context, c client.Client) {
	m := ms.m
	log := m.mgr.GetLogger().WithValues("ring", m.opts.Ring, "member", m.opts.Identity)
	ctx, cancel := context.WithTimeout(ctx, m.opts.RenewDeadline)
	defer cancel()
	if !m.gate.stop() {
		idle := func(context.Context) (bool, error) { return m.gate.idle(), nil }
		if err := wait.PollUntilContextCancel(ctx, idlePoll, false, idle); err != nil {
			log.Info("passes still running at stop; leaving the member's lease to expire")
			return
		}
	}
	m.gate.revoke()
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: m.opts.Namespace, Name: LeaseName(m.opts.Ring, m.opts.Identity)}}
	if m.opts.Standby {
		// Closed rather than deleted: the standbys take the objects over
		// at once, and the member, back, finds the tenure closed.
		if err := ms.close(ctx, c, lease); err != nil {
			log.Error(err, "releasing the member's lease")
			return
		}
	} else if err := c.Delete(ctx, lease); err != nil && !apierrors.IsNotFound(err) {
		log.Error(err, "releasing the member's lease")
		return
	}
	log.Info("released the member's lease")
}

// close closes the member's own Lease, as the sharder closes an expired
// one: no holder, and its tenure recorded as closed. Its renew time stays
// that of the last renewal, from which the standbys wait for the
// sharder's patches of standbys still on their way (takeoverFrom).
func (ms *membership) close(ctx context.Context, c client.Client, lease *coordinationv1.Lease) error {
	if err := ms.m.mgr.GetAPIReader().Get(ctx, client.ObjectKeyFromObject(lease), lease); err != nil {
		return client.IgnoreNotFound(err)
	}
	if ptr.Deref(lease.Spec.HolderIdentity, "") != ms.m.opts.Identity {
		return nil
	}
	closeTenure(lease)
	return c.Update(ctx, lease)
}

// closeTenure closes lease's tenure in place: it clears the holder and
// records the tenure in annotationClosed, which it returns. The caller
// writes the Lease.
func closeTenure(lease *coordinationv1.Lease) string {
	tenure := tenureOf(lease)
	lease.Spec.HolderIdentity = nil
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[annotationClosed] = tenure
	return tenure
}

// renew creates or renews the member's Lease. It reads the Lease from
// the API server: the manager's cache may not watch its namespace. A
// renewal after the member's right lapsed starts a new right once it has
// listed the objects labelled for the member (see gate).
func (ms *membership) renew(ctx context.Context, c client.Client) error {
	m := ms.m
	// A renewal that hangs must not hold up the next one for longer than
	// the Lease lasts; a slow one that lands in time still counts.
	rctx, cancel := context.WithTimeout(ctx, m.opts.LeaseDuration)
	defer cancel()
	name := LeaseName(m.opts.Ring, m.opts.Identity)
	now := time.Now()
	renewTime := metav1.NewMicroTime(now)
	seconds := int32(max((m.opts.LeaseDuration+time.Second-1)/time.Second, 1))
	var lease coordinationv1.Lease
	err := m.mgr.GetAPIReader().Get(rctx, types.NamespacedName{Namespace: m.opts.Namespace, Name: name}, &lease)
	switch {
	case apierrors.IsNotFound(err):
		lease = coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: m.opts.Namespace, Name: name},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(m.opts.Identity), LeaseDurationSeconds: ptr.To(seconds),
				AcquireTime: &renewTime, RenewTime: &renewTime,
			},
		}
		ms.describe(&lease)
		if err := c.Create(rctx, &lease); err != nil {
			return fmt.Errorf("creating lease %s: %w", name, err)
		}
	case err != nil:
		return fmt.Errorf("reading lease %s: %w", name, err)
	default:
		if closed := lease.Annotations[annotationClosed]; closed != "" {
			m.closed.Store(&closed)
		}
		if lease.Annotations[annotationEvicted] != "" {
			// Back once the Lease has expired, and the sharder has had a
			// renew period to move the member's objects.
			if rollout.Alive(&lease, now.Add(-m.opts.RenewPeriod)) {
				return errEvicted
			}
			delete(lease.Annotations, annotationEvicted)
		}
		if !rollout.Alive(&lease, now) {
			lease.Spec.AcquireTime = &renewTime
		}
		ms.describe(&lease)
		lease.Spec.RenewTime = &renewTime
		lease.Spec.HolderIdentity = ptr.To(m.opts.Identity)
		lease.Spec.LeaseDurationSeconds = ptr.To(seconds)
		if err := c.Update(rctx, &lease); err != nil {
			return fmt.Errorf("renewing lease %s: %w", name, err)
		}
	}
	// The renewal counts from before the request: the sharder measures
	// the Lease from the time written in it.
	tenure := tenureOf(&lease)
	if m.gate.extend(now, tenure) {
		return nil
	}
	// Until this renewal the sharder could give the member's objects
	// away, and the cache may not show it yet: from now on it cannot.
	lctx, cancel := context.WithTimeout(ctx, m.opts.LeaseDuration)
	defer cancel()
	owned, err := ms.owned(lctx)
	if err != nil {
		return err
	}
	m.gate.resume(now, owned, tenure)
	return nil
}

// describe labels lease, the member's, with the ring and the member's
// version, and annotates it with the member's pass counts, which `bosun
// canary status` compares by version.
func (ms *membership) describe(lease *coordinationv1.Lease) {
	m := ms.m
	if lease.Labels == nil {
		lease.Labels = map[string]string{}
	}
	lease.Labels[labelRing] = m.opts.Ring
	if m.opts.Version != "" {
		lease.Labels[rollout.LabelVersion] = m.opts.Version
	} else {
		delete(lease.Labels, rollout.LabelVersion)
	}
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[rollout.AnnotationPasses] = m.gate.passes().Encode()
}

// owned lists, from the API server, the objects labelled for this member,
// but for those of a tenure the sharder closed that their standby may
// have taken over (Options.Standby).
func (ms *membership) owned(ctx context.Context) (map[types.NamespacedName]bool, error) {
	m := ms.m
	out := map[types.NamespacedName]bool{}
	err := m.listFromServer(ctx, m.Selector(), func(o *metav1.PartialObjectMetadata) {
		if !m.endedHere(o.Annotations[m.tenureKey]) {
			out[client.ObjectKeyFromObject(o)] = true
		}
	})
	if err != nil {
		return nil, fmt.Errorf("listing the objects of the member: %w", err)
	}
	return out, nil
}
