package faults

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/shard"
)

// passRecord is a pass a process's bosun reconcilers ran.
type passRecord struct {
	controller string
	object     types.NamespacedName
	start, end time.Time
	// acted is true when the pass ran a step: it found its object.
	acted bool
	trace string
	// plain is set for the passes of a reconciler that is not bosun's,
	// which carry no trace.
	plain bool
}

// observePass records a pass (a bosun.PassObserver).
func (p *Process) observePass(_ context.Context, r bosun.PassReport) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.passes = append(p.passes, passRecord{
		controller: r.Controller, object: r.Object,
		start: r.Start, end: r.Start.Add(r.Duration),
		acted: len(r.Steps) > 0, trace: r.TraceID,
	})
}

// passList returns the passes recorded so far.
func (p *Process) passList() []passRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.passes)
}

// overlaps returns the pairs of passes of one object by one controller, on
// two different processes, that ran at the same time while both processes
// were alive: what sharding and leader election must never allow. A pass
// of a process that died is taken to end when it died, since nothing it
// did afterwards reached anything.
func overlaps(procs []*Process) []string {
	type run struct {
		proc       string
		start, end time.Time
	}
	runs := map[string][]run{}
	for _, p := range procs {
		died := p.CrashedAt()
		for _, r := range p.passList() {
			if !r.acted {
				continue
			}
			end := r.end
			if !died.IsZero() && died.Before(end) {
				end = died
			}
			key := r.controller + " " + r.object.String()
			runs[key] = append(runs[key], run{proc: p.Name(), start: r.start, end: end})
		}
	}
	var out []string
	for key, rs := range runs {
		slices.SortFunc(rs, func(a, b run) int { return a.start.Compare(b.start) })
		for i := range rs {
			for j := i + 1; j < len(rs) && rs[j].start.Before(rs[i].end); j++ {
				if rs[j].proc != rs[i].proc {
					out = append(out, fmt.Sprintf("%s: a pass on %s from %s overlaps one on %s from %s",
						key, rs[i].proc, rs[i].start.Format("15:04:05.000"), rs[j].proc, rs[j].start.Format("15:04:05.000")))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// Member returns the process's member of the shard ring of obj's kind
// (Options.Shard), or nil.
func (p *Process) Member(obj client.Object) *shard.Member {
	for i, m := range p.members {
		if reflect.TypeOf(p.rings[i].Object) == reflect.TypeOf(obj) {
			return m
		}
	}
	return nil
}

// newMember makes the member of Options.Shard for a process.
func newMember(o shard.Options, name, namespace string) (*shard.Member, error) {
	if o.Identity == "" {
		o.Identity = name
	}
	if o.Namespace == "" {
		o.Namespace = namespace
	}
	if len(o.ObjectNamespaces) == 0 && namespace != "" {
		o.ObjectNamespaces = []string{namespace}
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = DefaultLeaseDuration
	}
	m, err := shard.New(o)
	if err != nil {
		return nil, fmt.Errorf("faults: %w", err)
	}
	return m, nil
}

// Shard wires b, a controller of the process's shard ring, to the
// process's member when it has one (Options.Shard): the controller runs
// on every replica, sees the member's objects only and cancels a pass
// when the member's right to run it lapses. Without a member it returns b
// unchanged. An operator's battery Setup builds its sharded controller
// through it:
//
//	faults.Shard(bosun.ControllerManagedBy[*v1.Widget](mgr), p).Complete(r)
func Shard[T client.Object](b *bosun.Builder[T], p *Process) *bosun.Builder[T] {
	var none T
	m := p.Member(none)
	if m == nil {
		return b
	}
	return b.For(none, builder.WithPredicates(m.Predicate())).
		WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
		WrapReconciler(m.Wrap)
}

// Journal returns r recording its passes in the process's journal, which
// the matrix reads to check that no object is reconciled by two processes
// at once. The passes of bosun's reconcilers are recorded without it;
// wrap a plain controller-runtime reconciler of obj's kind, named
// controller, in it. A pass counts as one that acted when the manager's
// cache holds its object as it starts.
func (p *Process) Journal(controller string, obj client.Object, r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		start := time.Now()
		cur, _ := obj.DeepCopyObject().(client.Object)
		found := cur != nil && p.mgr.GetCache().Get(ctx, req.NamespacedName, cur) == nil
		res, err := r.Reconcile(ctx, req)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.passes = append(p.passes, passRecord{controller: controller, object: req.NamespacedName, start: start, end: time.Now(), acted: found, plain: true})
		return res, err
	})
}
