package faults

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

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

// journal is the passes a process's reconcilers ran.
type journal struct {
	mu     sync.Mutex
	passes []passRecord
}

// observe records a pass of a bosun reconciler (a bosun.PassObserver).
func (j *journal) observe(_ context.Context, r bosun.PassReport) {
	j.add(passRecord{
		controller: r.Controller, object: r.Object,
		start: r.Start, end: r.Start.Add(r.Duration),
		acted: len(r.Steps) > 0, trace: r.TraceID,
	})
}

// add records a pass.
func (j *journal) add(r passRecord) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.passes = append(j.passes, r)
}

// list returns the passes recorded so far.
func (j *journal) list() []passRecord {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.passes)
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
		for _, r := range p.journal.list() {
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

// newMember makes the member of Options.Shard for a process of a
// scenario in namespace whose cluster-scoped kinds are clusterScoped
// (Options.ClusterScoped).
func newMember(o shard.Options, name, namespace string, clusterScoped []client.Object) (*shard.Member, error) {
	o = memberOptions(o, name, namespace, clusterScoped)
	m, err := shard.New(o)
	if err != nil {
		return nil, fmt.Errorf("faults: %w", err)
	}
	return m, nil
}

// memberOptions fills in the defaults of Options.Shard: the ring's
// objects are those of the scenario's namespace, or, for a cluster-scoped
// kind, those labelled ScenarioLabel with it.
func memberOptions(o shard.Options, name, namespace string, clusterScoped []client.Object) shard.Options {
	if o.Identity == "" {
		o.Identity = name
	}
	if o.Namespace == "" {
		o.Namespace = namespace
	}
	scoped := slices.ContainsFunc(clusterScoped, func(k client.Object) bool { return reflect.TypeOf(k) == reflect.TypeOf(o.Object) })
	switch {
	case namespace == "":
	case scoped:
		o.ObjectSelector = andSelector(o.ObjectSelector, scenarioSelector(namespace))
	case len(o.ObjectNamespaces) == 0:
		o.ObjectNamespaces = []string{namespace}
	}
	if o.LeaseDuration == 0 {
		o.LeaseDuration = defaultLeaseDuration
	}
	return o
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
