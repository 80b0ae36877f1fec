package managed

import (
	"context"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
)

// batcher is the stage that runs batch rounds and hands their
// observations to the passes.
type batcher[T client.Object] struct {
	// polls holds the rounds' observations, and what a round needs to
	// know of the objects: when their polls are due.
	polls *polls
	calls *caller[T]
	names naming[T]
	// window is the batch window (Timing.Batch); syncedType and
	// availableType are the condition types that tell a settled object.
	window                    time.Duration
	syncedType, availableType string
	now                       func() time.Time
}

// newBatcher returns the batcher of a step configured by cfg.
func newBatcher[T client.Object](cfg *config, p *polls, calls *caller[T], names naming[T]) *batcher[T] {
	return &batcher[T]{polls: p, calls: calls, names: names, window: cfg.batch, syncedType: cfg.synced, availableType: cfg.available, now: cfg.now}
}

// observation returns what a batch round observed of the pass's object,
// running a round first when none has lately, or nil when the pass must
// observe on its own: the round failed, or the object the round observed
// is not, in every field, the one the pass holds (it changed since, or an
// earlier step of the pass changed it). The observation is taken: a later
// pass does not use it again.
func (b *batcher[T]) observation(ctx context.Context, req *bosun.Pass[T]) *batched {
	in := b.names.named(req.Object)
	if e := b.take(in); e != nil {
		return e
	}
	b.run(ctx, req)
	return b.take(in)
}

// take takes the batch observation of in's object, and returns it when it
// is younger than twice the batch window and was made of an object equal
// to in.
func (b *batcher[T]) take(in T) *batched {
	ps := b.polls
	st := ps.state(in.GetUID(), client.ObjectKeyFromObject(in))
	ps.mu.Lock()
	var e *batched
	if st != nil {
		e, st.batch = st.batch, nil
	}
	ps.mu.Unlock()
	if e == nil || b.now().Sub(e.at) > 2*b.window || !equality.Semantic.DeepEqual(e.in, client.Object(in)) {
		return nil
	}
	return e
}

// run runs a batch round for the pass req, unless another round observed
// its object meanwhile or the last round failed within a batch window. The
// round observes the pass's object and every other object in line with
// its resource (settled) whose poll is due within the batch window, as the
// manager's cache holds them now, in one call of the BatchObserver. A
// failure is logged: the passes observe one by one until a batch window
// has gone by.
func (b *batcher[T]) run(ctx context.Context, req *bosun.Pass[T]) {
	ps := b.polls
	ps.round.Lock()
	defer ps.round.Unlock()
	now := b.now()
	st := ps.state(req.Object.GetUID(), client.ObjectKeyFromObject(req.Object))
	ps.mu.Lock()
	failed := ps.failed
	fresh := st != nil && st.batch != nil && now.Sub(st.batch.at) <= b.window
	ps.mu.Unlock()
	if fresh || now.Before(failed.Add(b.window)) {
		return
	}
	ins := b.gather(ctx, req, now)
	outs := make([]T, len(ins))
	for i, in := range ins {
		outs[i] = in.DeepCopyObject().(T)
	}
	obs, err := b.calls.observeBatch(ctx, req, outs)
	if err != nil {
		req.Log.Error(err, "observing in a batch failed; each pass observes on its own for a while", "objects", len(ins))
		ps.mu.Lock()
		ps.failed = now
		ps.mu.Unlock()
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	for i, in := range ins {
		if st := ps.state(in.GetUID(), client.ObjectKeyFromObject(in)); st != nil {
			st.batch = &batched{at: now, in: in, out: outs[i], obs: obs[i]}
		}
	}
}

// gather returns, named, the pass's object and the other objects whose
// polls are due by now and the batch window, as the manager's cache holds
// them, leaving out those no longer settled.
func (b *batcher[T]) gather(ctx context.Context, req *bosun.Pass[T], now time.Time) []T {
	ps := b.polls
	own := req.Object.GetUID()
	type due struct {
		uid types.UID
		key types.NamespacedName
	}
	var keys []due
	ps.mu.Lock()
	ps.objs.Range(func(key types.NamespacedName, uid types.UID, r remembered) bool {
		st := r.poll
		if st != nil && uid != own && !st.due.IsZero() && !st.due.After(now.Add(b.window)) &&
			(st.batch == nil || now.Sub(st.batch.at) > b.window) {
			keys = append(keys, due{uid, key})
		}
		return true
	})
	ps.mu.Unlock()
	objs := []T{b.names.named(req.Object)}
	for _, k := range keys {
		obj := reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
		if err := req.Client.Get(ctx, k.key, obj); err != nil || obj.GetUID() != k.uid || !settled(obj, b.names.keys, b.syncedType, b.availableType) {
			continue
		}
		objs = append(objs, b.names.named(obj))
	}
	return objs
}
