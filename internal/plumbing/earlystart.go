package plumbing

import (
	"context"
	"errors"
	"fmt"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// defaultCacheSyncTimeout is controller-runtime's default of
// controller.Options.CacheSyncTimeout.
const defaultCacheSyncTimeout = 2 * time.Minute

// EarlyStart returns mgr as the manager of one controller whose workers
// start before its informers have listed. controller-runtime starts a
// controller's workers once the informer of every kind it watches has
// delivered its initial list, and each informer's wait is for the whole
// kind: with a cache over several namespaces, ten objects of a quiet
// namespace wait for the list of ten thousand in a busy one. Through
// EarlyStart the workers start at once and each request waits only for
// what it reads: a read from the cache waits for the informer it reads
// from, which for a cache over several namespaces is that namespace's, and
// requests come only from objects an informer has listed.
//
// What the controller-runtime wait also gives, a controller that fails
// when a kind cannot be listed within its CacheSyncTimeout, stays:
// EarlyStart watches each informer for as long as syncTimeout returns
// when the informer is asked for (zero: the manager's controller option,
// else controller-runtime's default of two minutes), and stops the
// controller with an error when one has not listed by then.
//
// Give the manager it returns to one controller's builder, whose Add it
// wraps: bosun's builder does so when the manager was made with Enable.
func EarlyStart(mgr manager.Manager, syncTimeout func() time.Duration) manager.Manager {
	m := &earlyStart{Manager: mgr}
	m.cache = &earlyCache{Cache: mgr.GetCache(), timeout: func() time.Duration {
		d := time.Duration(0)
		if syncTimeout != nil {
			d = syncTimeout()
		}
		if d == 0 {
			d = mgr.GetControllerOptions().CacheSyncTimeout
		}
		if d == 0 {
			d = defaultCacheSyncTimeout
		}
		return d
	}, failed: make(chan error, 1)}
	return m
}

// earlyStart is the manager of EarlyStart: the manager itself, but for
// the cache its watches are made from and the runnable it adds.
type earlyStart struct {
	manager.Manager
	cache *earlyCache
}

// GetCache returns the cache whose informers do not hold the workers.
func (m *earlyStart) GetCache() cache.Cache { return m.cache }

// Add adds r, the controller, as a runnable that fails when one of the
// informers it watches does not sync in time.
func (m *earlyStart) Add(r manager.Runnable) error {
	return m.Manager.Add(&syncWatched{inner: r, cache: m.cache})
}

// earlyCache is the manager's cache, but that the informers it hands out
// report their handlers synced at once, and that it reports itself synced:
// a read still waits for the informer it reads from.
type earlyCache struct {
	cache.Cache

	// timeout is how long an informer may take to list.
	timeout func() time.Duration
	// failed receives the first informer that did not sync in time.
	failed chan error
}

// GetInformer returns the informer of obj without waiting for it to sync,
// and watches that it does within the timeout.
func (c *earlyCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := c.Cache.GetInformer(ctx, obj, append(opts, cache.BlockUntilSynced(false))...)
	if err != nil {
		return nil, err
	}
	timeout := c.timeout()
	go func() {
		wctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if toolscache.WaitForCacheSync(wctx.Done(), inf.HasSynced) || ctx.Err() != nil {
			return
		}
		select {
		case c.failed <- fmt.Errorf("timed out waiting for the cache of %T to sync within %s", obj, timeout):
		default:
		}
	}()
	return earlyInformer{Informer: inf}, nil
}

// WaitForCacheSync reports the cache synced: each read waits for its own
// informer.
func (c *earlyCache) WaitForCacheSync(context.Context) bool { return true }

// earlyInformer is an informer whose handlers' registrations report
// themselves synced at once: their events still come as the informer
// lists, but nothing waits for all of them.
type earlyInformer struct {
	cache.Informer
}

func (i earlyInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandler(h)
	return wrapRegistration(reg), err
}

func (i earlyInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, d time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandlerWithResyncPeriod(h, d)
	return wrapRegistration(reg), err
}

func (i earlyInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, o toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandlerWithOptions(h, o)
	return wrapRegistration(reg), err
}

func (i earlyInformer) RemoveEventHandler(reg toolscache.ResourceEventHandlerRegistration) error {
	if r, ok := reg.(earlyRegistration); ok {
		reg = r.ResourceEventHandlerRegistration
	}
	return i.Informer.RemoveEventHandler(reg)
}

// earlyRegistration is a handler's registration that reports it synced.
type earlyRegistration struct {
	toolscache.ResourceEventHandlerRegistration
}

func wrapRegistration(reg toolscache.ResourceEventHandlerRegistration) toolscache.ResourceEventHandlerRegistration {
	if reg == nil {
		return nil
	}
	return earlyRegistration{reg}
}

func (earlyRegistration) HasSynced() bool { return true }

func (earlyRegistration) HasSyncedChecker() toolscache.DoneChecker { return syncedChecker{} }

// syncedChecker is done from the start.
type syncedChecker struct{}

var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (syncedChecker) Name() string          { return "synced" }
func (syncedChecker) Done() <-chan struct{} { return closedDone }

// syncWatched runs a controller, and stops it with an error when an
// informer it watches does not sync within the timeout.
type syncWatched struct {
	inner manager.Runnable
	cache *earlyCache
}

func (w *syncWatched) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.inner.Start(ctx) }()
	select {
	case err := <-done:
		return err
	case err := <-w.cache.failed:
		cancel()
		return errors.Join(err, <-done)
	}
}

// NeedLeaderElection is the controller's.
func (w *syncWatched) NeedLeaderElection() bool {
	if le, ok := w.inner.(manager.LeaderElectionRunnable); ok {
		return le.NeedLeaderElection()
	}
	return true
}

// Warmup is the controller's, when it has one.
func (w *syncWatched) Warmup(ctx context.Context) error {
	if wu, ok := w.inner.(interface{ Warmup(context.Context) error }); ok {
		return wu.Warmup(ctx)
	}
	return nil
}

var _ manager.Manager = (*earlyStart)(nil)
