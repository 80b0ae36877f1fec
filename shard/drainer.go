package shard

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// errBusy: a pass of an object asked to leave still runs.
var errBusy = errors.New("a pass of the object is running")

// drainer lets go of the objects this member is asked to: it stops their
// passes, and once none runs removes their shard and drain labels, which
// hands them back to the sharder. It watches the manager's cache of the
// ring's kind, which holds this member's objects only.
type drainer struct{ m *Member }

var _ manager.LeaderElectionRunnable = (*drainer)(nil)

// NeedLeaderElection implements manager.LeaderElectionRunnable: every
// member drains its own objects.
func (*drainer) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable.
func (d *drainer) Start(ctx context.Context) error {
	m := d.m
	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](5*time.Millisecond, time.Second),
		workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "shard-drain-" + m.opts.Ring},
	)
	defer q.ShutDown()
	inf, err := m.mgr.GetCache().GetInformer(ctx, m.opts.Object)
	if err != nil {
		return fmt.Errorf("shard: ring %q: watching %s: %w", m.opts.Ring, m.gvk.Kind, err)
	}
	see := func(obj any) {
		o, ok := obj.(client.Object)
		if !ok {
			return
		}
		key := client.ObjectKeyFromObject(o)
		switch {
		case m.isDrain(o):
			q.Add(key)
		case o.GetLabels()[m.shardLabel] == m.opts.Identity:
			m.gate.back(key)
		}
	}
	gone := func(obj any) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if o, ok := obj.(client.Object); ok {
			m.gate.unconfirm(client.ObjectKeyFromObject(o))
		}
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    see,
		UpdateFunc: func(_, obj any) { see(obj) },
		DeleteFunc: gone,
	})
	if err != nil {
		return fmt.Errorf("shard: ring %q: watching %s: %w", m.opts.Ring, m.gvk.Kind, err)
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	go func() {
		_ = wait.PollUntilContextCancel(ctx, m.opts.LeaseDuration, false, func(context.Context) (bool, error) {
			m.gate.forget(m.opts.LeaseDuration, m.leavingInCache)
			return false, nil
		})
	}()
	log := m.mgr.GetLogger().WithValues("ring", m.opts.Ring, "member", m.opts.Identity)
	for {
		key, shutdown := q.Get()
		if shutdown {
			return nil
		}
		switch err := d.letGo(ctx, key); {
		case err == nil:
			q.Forget(key)
		case errors.Is(err, errBusy), apierrors.IsConflict(err):
			q.AddRateLimited(key)
		default:
			log.Error(err, "letting an object go", "object", klog.KRef(key.Namespace, key.Name))
			q.AddRateLimited(key)
		}
		q.Done(key)
	}
}

// letGo removes the labels of key once no pass of it runs.
func (d *drainer) letGo(ctx context.Context, key types.NamespacedName) error {
	m := d.m
	obj := m.newObject()
	if err := m.mgr.GetCache().Get(ctx, key, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !m.isDrain(obj) {
		return nil
	}
	if !m.gate.drain(key) {
		return errBusy
	}
	unset := map[string]string{m.shardLabel: "", m.drainLabel: ""}
	if m.opts.Standby {
		// Out of this member's cache, unless it is the standby too.
		unset[m.presence] = ""
	}
	if err := m.patchLabels(ctx, key, obj.GetResourceVersion(), unset, map[string]string{m.tenureKey: ""}); err != nil {
		return client.IgnoreNotFound(err)
	}
	m.gate.unconfirm(key)
	drainsCounter.WithLabelValues(m.opts.Ring, m.opts.Identity).Inc()
	m.mgr.GetLogger().V(1).Info("let an object go", "ring", m.opts.Ring, "member", m.opts.Identity, "object", klog.KRef(key.Namespace, key.Name))
	return nil
}
