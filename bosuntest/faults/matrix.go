package faults

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/operator"
	"github.com/bosunkit/bosun/shard"
)

// rowMatrix is the figures' name of the matrix's rows: "matrix: <feature>
// x <fault>".
const rowMatrix = "matrix"

// feature is a configuration of the operator's processes that the matrix
// runs each fault under.
type feature string

// The features of the matrix.
const (
	// oneReplica is one process with the defaults: controller-runtime's
	// priority queue and plumbing, a full cache, one worker.
	oneReplica feature = "1 replica"
	// fourWorkers is one process with 4 workers per controller.
	fourWorkers feature = "4 workers"
	// leanCache is one process whose cache drops managedFields
	// (tuning.LeanCache).
	leanCache feature = "lean cache"
	// tuned is one process with bosun's tuning on, as the operator's
	// --tuning turns it on (tuning.Enable, over a lean cache): answers
	// trimmed on the wire, workers that start before the informers have
	// listed, log keys encoded only when a line is logged.
	tuned feature = "tuning on"
	// plainQueue is one process with client-go's FIFO queue in place of
	// controller-runtime's priority queue.
	plainQueue feature = "plain queue"
	// tracingOn is one process with an OpenTelemetry tracer provider: every
	// pass that acts must carry a trace.
	tracingOn feature = "tracing"
	// leaderFailover is two processes electing a leader; the leader is killed
	// right after the spec change, and the other must carry it out.
	leaderFailover feature = "leader failover"
	// twoShards is two members of a shard ring, every one active on its
	// share.
	twoShards feature = "2 shard members"
	// threeShards is a ring that changes: two members, a third joins once
	// the objects converged, and one leaves before they are deleted.
	threeShards feature = "3 shard members, joins and leaves"
	// kstatusOn is one process whose bosun reconcilers keep the kstatus
	// conditions (bosun.Options.KStatus) and hold Ready through retried
	// errors (bosun.Options.ReadyGrace): every version of the objects
	// the API server stores is judged with cli-utils' kstatus, which must
	// never call an object Current unless it is Ready for its generation,
	// never Failed, and Current once converged. A kind whose schema has no
	// status.observedGeneration, which KStatus needs, skips it.
	kstatusOn feature = "kstatus conditions, Ready grace"
	// planned is two shard members that are stopped once the objects
	// converged; the spec change is then made while none runs, and the
	// operator is run under --plan (package operator) before the members
	// start again: the plan must cover every object, foretell a change of
	// each, and change nothing, on the API server or outside.
	planned feature = "--plan of the change, 2 shard members"
	// canaryRollout is two shard members of version v1; once the objects
	// converged, a canary (shard.Canary) gives half of them to v2 and a
	// member of v2 starts; the canary is promoted to all the objects
	// right after the spec change, then aborted and the spec changed
	// again: no object is reconciled by two versions at once, no change
	// is lost, and the objects end on the members of v1.
	canaryRollout feature = "canary rollout, promoted and aborted"
	// formerFinalizer is one process whose bosun reconcilers list
	// formerName in bosun.Options.FormerFinalizers, and objects made
	// carrying it, as the release before left them: the name must be gone
	// from every converged object (replaced in the claim's write by an
	// operator with a finalizer, dropped by one without), at no more cost
	// than one write per object, and no object may be stranded.
	formerFinalizer feature = "objects of an earlier release's finalizer"
	// migrated is one process, on a control plane of the cell's own
	// (Migration.ControlPlane), that runs a migrate.Migrator of
	// Migration.CRD beside the operator; the CRD's storage version moves
	// to the next version it serves, the spec of half the objects changes
	// once the migration's first rewrite is seen, and the objects must
	// come out of the migration, and of the operator's
	// writes meanwhile, with nothing lost (see Migration). Operators
	// without a Migration skip it.
	migrated feature = "storage migration while the operator writes"
	// rolled is one process set up by Rolling.Setup, whose children of
	// Rolling's kind roll out a change a few at a time: no object may
	// have more than Rolling.MaxUnavailable of them not ready at once
	// (see Rolling). Operators without a Rolling skip it.
	rolled feature = "rolling children"
)

// readyGrace is the bosun.Options.ReadyGrace of kstatusOn: longer than
// any fault of the matrix lasts.
const readyGrace = time.Minute

// formerName is the finalizer of the earlier release of formerFinalizer.
const formerName = "faults.bosun.dev/earlier-release"

// features are every feature, in the matrix's order.
var features = []feature{oneReplica, fourWorkers, leanCache, tuned, plainQueue, tracingOn, leaderFailover, twoShards, threeShards, kstatusOn, planned, canaryRollout, formerFinalizer, migrated, rolled}

// matrixFault is a fault the matrix runs under each feature.
type matrixFault string

// The faults of the matrix.
const (
	// noFault is the fault-free run every other cell's time is compared
	// with; under oneReplica it also measures the operator's costs.
	noFault matrixFault = "no fault"
	// crashMidWrite kills the first process during its third write (or,
	// if it makes fewer, once the objects converged) and starts a fresh
	// one in its place.
	crashMidWrite matrixFault = "crash mid-write"
	// apiErrors answers writes with 409 (15%), 429 (3%), 500 (5%), a
	// timeout (2%) and a lost answer (2%).
	apiErrors matrixFault = "API errors"
	// watchEvents drops 20% of watch events, delays all by 200ms and ends
	// watches every 5s (30s at full size).
	watchEvents matrixFault = "dropped and delayed events"
	// staleCache holds the cache 3 versions behind, for at most a second.
	staleCache matrixFault = "stale reads"
	// networkPartition cuts the first live process off from the API
	// server (requests fail, watches hang) just before the spec change,
	// until, alone, two of its requests failed or a watch lost an event,
	// or, with other processes, the others carried the change out; then
	// heals it.
	networkPartition matrixFault = "network partition"
	// slowExternal holds every external call for half a second (5s at
	// full size). Operators without managed steps skip it.
	slowExternal matrixFault = "slow external system"
	// foreignWrite has another actor set an annotation on an object
	// before 30% of the operator's writes of it; the annotation must
	// survive.
	foreignWrite matrixFault = "foreign writes"
	// blockedCleanup fails every delete of the operator's processes (API
	// and external) from the objects' deletion until each object a
	// finalizer holds shows DeletionBlocked (bosun.Options.DeletionDeadline
	// set to Deadline) and stayed unwritten for Quiet; then lets deletes
	// through and releases half the objects with
	// bosun.dev/release-finalizer "true". Operators whose Setup does not
	// call Process.Configure skip it.
	blockedCleanup matrixFault = "cleanup blocked past the deadline"
	// massHeld runs the processes' bosun reconcilers with a mass-deletion
	// breaker that takes every deletion for a mass one
	// (bosun.MassDeletion.Count negative): each object a finalizer holds
	// must show DeletionBlocked with conditions.ReasonDeletionHeld, for
	// at most one write each and no external change, and stay unwritten
	// for Quiet; once annotated bosun.dev/allow-mass-deletion "true",
	// nothing of it may be left. Operators whose Setup does not call
	// Process.Configure skip it.
	massHeld matrixFault = "mass deletion held"
)

// matrixFaults are every fault, in the matrix's order.
var matrixFaults = []matrixFault{noFault, crashMidWrite, apiErrors, watchEvents, staleCache, networkPartition, slowExternal, foreignWrite, blockedCleanup, massHeld}

// Cost is what an operation may cost per object: API writes (Events and
// Leases aside) and calls that change an external system.
type Cost struct {
	Writes, External int
}

// String formats c as "3 writes, 1 external".
func (c Cost) String() string {
	return fmt.Sprintf("%d writes, %d external", c.Writes, c.External)
}

// within reports whether n objects' total stays within c per object.
func (c Cost) within(total Cost, n int) bool {
	return total.Writes <= c.Writes*n && total.External <= c.External*n
}

// Budget is what an operator may spend, per object, on each operation.
// An idle operator's budget is always zero writes and zero external
// changes; its polls are what Poll bounds.
type Budget struct {
	// Create is the cost from an object's creation to Ready; Change from
	// a spec change to Ready for it; Delete from the deletion to the
	// object's end (finalizers, fences, external deletes).
	Create, Change, Delete Cost
	// Poll is the most external reads (Observe and the connector's calls)
	// per object for every PollEvery while the objects are Ready and
	// nothing changes. Zero PollEvery means the operator must not read
	// its external systems at all while idle.
	Poll      int
	PollEvery time.Duration
}

// matrixSizes are the sizes of the matrix.
type matrixSizes struct {
	// Objects is the number of objects of each cell.
	Objects int
	// Quiet is how long the quiet check watches each cell.
	Quiet time.Duration
	// Relist is how long an event watchEvents dropped may stay lost
	// (WatchFaults.Relist); Slow the delay of slowExternal.
	Relist, Slow time.Duration
	// Deadline is the deletion deadline of blockedCleanup, and Margin
	// how late after it DeletionBlocked may show on a busy machine.
	Deadline, Margin time.Duration
	// All runs every cell; otherwise each feature runs without a fault,
	// each fault runs on one replica, and one more fault per feature
	// (varying with the operator's name) runs under it.
	All bool
}

// shortMatrix is what `make test` runs; fullMatrix what `make
// reliability` runs.
var (
	shortMatrix = matrixSizes{Objects: 2, Quiet: time.Second, Relist: 5 * time.Second, Slow: 500 * time.Millisecond,
		Deadline: 2 * time.Second, Margin: 5 * time.Second}
	fullMatrix = matrixSizes{Objects: 10, Quiet: 10 * time.Second, Relist: 30 * time.Second, Slow: 5 * time.Second,
		Deadline: 10 * time.Second, Margin: 5 * time.Second, All: true}
)

// cells returns the cells the sizes run for the operator called name.
func (s matrixSizes) cells(name string) [][2]int {
	var out [][2]int
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	shift := int(h.Sum32() % uint32(len(matrixFaults)-1))
	for f := range features {
		for x := range matrixFaults {
			diagonal := x > 0 && (f+shift)%(len(matrixFaults)-1) == x-1
			if s.All || f == 0 || x == 0 || diagonal {
				out = append(out, [2]int{f, x})
			}
		}
	}
	return out
}

// cellResult is what a cell measured.
type cellResult struct {
	took     time.Duration // from the creation to the end of the change
	oracles  int
	injected string
	costs    map[string]Cost
	reads    float64  // external reads per object per poll period
	extra    []string // figures of the operations features: name, value, goal
}

// perObject formats a total cost per object.
func perObject(c Cost, n int) string {
	return fmt.Sprintf("%.1f writes, %.1f external", float64(c.Writes)/float64(n), float64(c.External)/float64(n))
}

// cell is one run of the matrix.
type cell struct {
	b      *battery
	t      *testing.T
	sizes  matrixSizes
	f      feature
	x      matrixFault
	ns     string
	logs   *bosuntest.LogRecorder
	procs  []*Process // every process started, in order
	spans  *spanCount
	result cellResult
	// version is the version of the processes the canary feature starts
	// next, versions the version of each process by name.
	version  string
	versions map[string]string
	// crashPending is set while the first process of crashMidWrite may
	// still crash and need replacing.
	crashPending bool
	// names are the names of the cell's objects, which, of a
	// cluster-scoped kind, are the cell's to write outside its namespace.
	names map[string]bool
	// planner is the process of the last --plan run (planned).
	planner *Process
}

// ours reports whether call wrote in the cell's namespace, or one of the
// cell's own objects of a cluster-scoped kind.
func (c *cell) ours(call Call) bool {
	return call.Namespace == c.ns || c.b.scenarioObject(call, c.names)
}

// startReplicas starts the cell's processes.
func (c *cell) startReplicas() {
	replicas := 1
	switch c.f {
	case leaderFailover, twoShards, threeShards, planned, canaryRollout:
		replicas = 2
	}
	for i := range replicas {
		p := c.start(i == 0)
		if i == 0 && replicas > 1 {
			if err := waitChan(c.t.Context(), p.Elected(), c.b.bound()); err != nil {
				c.t.Fatalf("%s was not elected: %v", p.Name(), err)
			}
		}
	}
}

// plan returns the plan of a process of the cell: the fault's, except for
// the faults aimed at the first process alone.
func (c *cell) plan(first bool) Plan {
	switch c.x {
	case crashMidWrite:
		if first {
			return Plan{Crash: CrashPoint{After: 3, During: true}}
		}
	case apiErrors:
		return Plan{Seed: 7, TimeoutDelay: 200 * time.Millisecond, Rules: []Rule{
			{Fault: Conflict, Rate: 0.15},
			{Fault: TooManyRequests, Rate: 0.03},
			{Fault: InternalError, Rate: 0.05},
			{Fault: Timeout, Rate: 0.02},
			{Fault: ResponseLost, Rate: 0.02},
		}}
	case watchEvents:
		return Plan{Seed: 3, Watch: WatchFaults{Drop: 0.2, Delay: 200 * time.Millisecond, Relist: c.sizes.Relist}}
	case staleCache:
		return Plan{Stale: StaleReads{Lag: 3, MaxAge: time.Second}}
	case slowExternal:
		return Plan{SlowExternal: c.sizes.Slow}
	case foreignWrite:
		return Plan{Seed: 5, Foreign: ForeignWrites{Rate: 0.3}}
	}
	return Plan{}
}

// start starts a process of the cell with its feature's options.
func (c *cell) start(first bool) *Process {
	name := "r" + strconv.Itoa(len(c.procs))
	opts := c.b.options(Options{Name: name, Namespace: c.ns, Plan: c.plan(first), Logs: c.logs, Manager: c.manager(), Engine: c.engineOptions()})
	switch c.f {
	case leaderFailover:
		opts.LeaderElection = &LeaderElection{ID: "matrix", Namespace: c.ns}
	case twoShards, threeShards, planned, canaryRollout:
		opts.LeaderElection = &LeaderElection{ID: "matrix", Namespace: c.ns}
		opts.Shard = c.rings()
		if c.f == canaryRollout {
			for i := range opts.Shard {
				opts.Shard[i].Version = c.version
			}
			c.versions[name] = c.version
		}
	}
	setup := c.b.op.Setup
	switch c.f {
	case migrated:
		setup = withMigrator(setup, c.b.op.Migration.CRD)
	case rolled:
		setup = c.b.op.Rolling.Setup
	}
	logger, quiet := bosuntest.TestLogger(c.t)
	p, err := run(context.Background(), c.b.cp, opts, logger, quiet, setup)
	if err != nil {
		c.t.Fatalf("starting %s: %v", name, err)
	}
	c.t.Cleanup(func() {
		p.Stop()
		// A process cut off from its leader election's Lease stops, as
		// it must; any other error is the operator's.
		lostLease := p.Stats().Partitions > 0 && strings.Contains(fmt.Sprint(p.Err()), "leader election lost")
		if err := p.Err(); err != nil && !lostLease {
			c.t.Errorf("faults: manager %s stopped with an error: %v", p.Name(), err)
		}
	})
	c.procs = append(c.procs, p)
	return p
}

// manager returns the manager options of the cell's feature.
func (c *cell) manager() func(*ctrl.Options) {
	switch c.f {
	case fourWorkers:
		return func(o *ctrl.Options) { o.Controller.MaxConcurrentReconciles = 4 }
	case leanCache, tuned:
		return func(o *ctrl.Options) {
			// As package operator makes it, with --tuning for tuned.
			f := operator.Flags{Tuning: c.f == tuned}
			m := f.ManagerOptions("faults")
			o.NewCache, o.NewClient = m.NewCache, m.NewClient
		}
	case plainQueue:
		return func(o *ctrl.Options) { o.Controller.UsePriorityQueue = ptr.To(false) }
	}
	return func(o *ctrl.Options) {
		o.Controller = config.Controller{SkipNameValidation: o.Controller.SkipNameValidation}
	}
}

// alive returns the processes still running.
func (c *cell) alive() []*Process {
	var out []*Process
	for _, p := range c.procs {
		select {
		case <-p.done:
		default:
			if !p.dead() {
				out = append(out, p)
			}
		}
	}
	return out
}

// lossChain is how many watch streams an object's convergence may wait on
// in turn under watchEvents: the object's and its children's at its
// process; under the features that shard, the sharder's before them; and
// under the canary, whose promotion and abort drain objects from one
// member to another, the old member's too (it must see the drain); under
// rolling children, the object's and one for each child the roll-out
// waits for in turn (three, as the kit's own operator rolls; an operator
// that rolls more one by one sets Operator.Bound).
func (c *cell) lossChain() int {
	switch c.f {
	case rolled:
		return 4
	case canaryRollout:
		return 4
	case twoShards, threeShards, planned:
		return 3
	}
	return 2
}

// converge waits for objs to converge. With measure, it records the cost
// of the operation op: the writes and external changes from since (or
// the start of the wait) until the processes are quiet again.
func (c *cell) converge(objs []client.Object, what string, measure bool, op string, since *Cost) {
	c.t.Helper()
	ctx := c.t.Context()
	before := c.counts()
	if since != nil {
		before = *since
	}
	bound := c.b.bound() + time.Duration(len(objs))*c.b.perObject()
	if c.x == slowExternal {
		// Every external call of every pass is held, reads too: allow
		// each object a few passes' worth of held calls, one worker
		// taking the objects in turn.
		bound += time.Duration(10+6*len(objs)) * c.sizes.Slow
	}
	if c.x == watchEvents {
		// A lost event is made good only by its stream's relist, and the
		// losses may chain: the object's event at the sharder, then at
		// its member, then its child's at the member.
		bound += time.Duration(c.lossChain()) * c.sizes.Relist
	}
	err := poll(ctx, bound, func(ctx context.Context) error {
		if c.crashPending && c.procs[0].dead() {
			c.replaceCrashed()
		}
		if err := c.b.converged(ctx, c.b.cp.Client, c.ns, objs); err != nil || c.f != kstatusOn {
			return err
		}
		return c.kstatusCurrent(ctx, objs)
	})
	if err != nil {
		c.t.Fatalf("not converged %s within %s: %v", what, bound, err)
	}
	c.result.oracles++
	if measure {
		c.waitIdle()
		c.measured(op, before)
	}
}

// measured records the cost of op, from the counts before it to now, and
// logs the calls it made.
func (c *cell) measured(op string, before Cost) {
	c.result.costs[op] = c.counts().minus(before)
	var lines []string
	skip := before.Writes + before.External
	for _, call := range c.procs[0].Calls() {
		if !call.TookEffect() {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		lines = append(lines, call.String())
	}
	c.t.Logf("%s: %s:\n\t%s", op, c.result.costs[op], strings.Join(lines, "\n\t"))
}

// replaceCrashed starts a fresh process in place of the one that crashed.
func (c *cell) replaceCrashed() {
	c.crashPending = false
	c.t.Logf("%s crashed; starting a fresh process", c.procs[0].Name())
	c.start(false)
}

// afterChange injects the faults that strike right after the spec change.
func (c *cell) afterChange(objs []client.Object) {
	if c.f == leaderFailover {
		c.failover()
	}
	if c.f == canaryRollout {
		c.writeCanary(shard.Canary{Version: "v2", Percent: 100})
	}
	if c.x == networkPartition {
		c.heal(objs)
	}
}

// failover kills the leader and waits for the other process to lead.
func (c *cell) failover() {
	ctx := c.t.Context()
	var leader *Process
	for _, p := range c.alive() {
		select {
		case <-p.Elected():
			leader = p
		default:
		}
		if leader != nil {
			break
		}
	}
	if leader == nil {
		c.t.Fatal("no process leads")
	}
	leader.Crash()
	for _, p := range c.alive() {
		if err := waitChan(ctx, p.Elected(), 4*defaultLeaseDuration); err != nil {
			c.t.Fatalf("%s did not take over from %s: %v", p.Name(), leader.Name(), err)
		}
	}
}

// heal heals the process cut off before the spec change, once the cut
// has cost it something: with other processes, once they carried the
// change out without it (its Leases expired); alone, once its requests
// failed twice or a watch event was lost in a hung watch.
func (c *cell) heal(objs []client.Object) {
	ctx := c.t.Context()
	var p *Process
	for _, q := range c.procs {
		if q.Stats().Partitions > 0 {
			p = q
		}
	}
	others := len(c.alive()) > 1
	bound := c.b.bound() + time.Duration(len(objs))*c.b.perObject() + 4*defaultLeaseDuration
	err := poll(ctx, bound, func(ctx context.Context) error {
		if others {
			return c.b.converged(ctx, c.b.cp.Client, c.ns, objs)
		}
		failed, hung := 0, p.net.hungReads()
		for _, call := range p.Calls() {
			if strings.Contains(call.Err, errPartitioned.Error()) {
				failed++
			}
		}
		if failed >= 2 || hung > 0 {
			return nil
		}
		return fmt.Errorf("%d requests failed and %d watch events were lost so far", failed, hung)
	})
	p.Heal()
	if err != nil {
		c.t.Fatalf("while %s was cut off: %v", p.Name(), err)
	}
}

// join starts a third member and waits for the ring to settle.
func (c *cell) join() {
	c.start(false)
	c.waitAssigned()
}

// leave stops a member that is not the leader cleanly and waits for its
// objects to move.
func (c *cell) leave() {
	alive := c.alive()
	p := alive[len(alive)-1]
	p.Stop()
	c.waitAssigned()
}

// rings returns the shard rings of the cell.
func (c *cell) rings() []shard.Options {
	if c.b.op.Shard != nil {
		return c.b.op.Shard(c.ns)
	}
	return []shard.Options{{Ring: "matrix", Object: c.b.op.Object(c.ns, 0)}}
}

// waitAssigned waits until every object of every ring is labelled for
// the member the ring of the live members gives it, and none is draining.
func (c *cell) waitAssigned() {
	var members []string
	for _, p := range c.alive() {
		members = append(members, p.Name())
	}
	for _, r := range c.rings() {
		ring := shard.NewRing(members, r.Tokens)
		key := r.Key
		if key == nil {
			key = shard.ByName
		}
		c.waitRing(r, fmt.Sprint(members), func(o metav1.PartialObjectMetadata, member string) error {
			if want := ring.Owner(key(o.GetNamespace(), o.GetName())); member != want {
				return fmt.Errorf("%s is labelled %q, want %q", o.GetName(), member, want)
			}
			return nil
		})
	}
}

// waitOnVersion waits until every object of every ring is held by a live
// member of version, none draining: where a canary's promotion (v2) or
// abort (v1) puts them.
func (c *cell) waitOnVersion(version string) {
	alive := map[string]bool{}
	for _, p := range c.alive() {
		alive[p.Name()] = c.versions[p.Name()] == version
	}
	for _, r := range c.rings() {
		c.waitRing(r, "the members of "+version, func(o metav1.PartialObjectMetadata, member string) error {
			if !alive[member] {
				return fmt.Errorf("%s is labelled %q, not a live member of %s", o.GetName(), member, version)
			}
			return nil
		})
	}
}

// waitRing waits until no object of one ring is draining and want
// accepts the member each is labelled for; where names the wanted
// members in the failure.
func (c *cell) waitRing(r shard.Options, where string, want func(o metav1.PartialObjectMetadata, member string) error) {
	ctx := c.t.Context()
	label := shard.LabelPrefix + r.Ring
	drain := shard.DrainPrefix + r.Ring
	gvk, err := apiutil.GVKForObject(r.Object, c.b.cp.Scheme)
	if err != nil {
		c.t.Fatal(err)
	}
	// A member's Lease may take its duration to expire, and a sharder
	// whose watch events are dropped may wait for a relist to see it.
	bound := c.b.bound() + 4*defaultLeaseDuration + 2*c.sizes.Relist
	in, err := c.b.inScenario(gvk, c.ns)
	if err != nil {
		c.t.Fatal(err)
	}
	err = poll(ctx, bound, func(ctx context.Context) error {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.b.cp.Client.List(ctx, list, in...); err != nil {
			return err
		}
		for _, o := range list.Items {
			l := o.GetLabels()
			if l[drain] != "" {
				return fmt.Errorf("%s is draining from %q", o.GetName(), l[drain])
			}
			if err := want(o, l[label]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		c.t.Fatalf("the ring did not settle on %s: %v", where, err)
	}
}

// bystander makes an object of another owner in the cell's namespace,
// which the operator must never write.
func (c *cell) bystander(ctx context.Context) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.ns, Name: "matrix-bystander", Labels: map[string]string{"owner": "another-team"}},
		Data:       map[string]string{"owner": "another team"},
	}
	if err := c.b.cp.Client.Create(ctx, cm); err != nil {
		c.t.Fatal(err)
	}
	return cm
}

// checkBystander checks that the bystander is as it was made, and that no
// process wrote it.
func (c *cell) checkBystander(ctx context.Context, want *corev1.ConfigMap) {
	got := &corev1.ConfigMap{}
	if err := c.b.cp.Client.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
		c.t.Errorf("another owner's ConfigMap: %v", err)
	} else if got.ResourceVersion != want.ResourceVersion {
		c.t.Errorf("another owner's ConfigMap was changed: resourceVersion %s, made as %s", got.ResourceVersion, want.ResourceVersion)
	}
	for _, p := range c.procs {
		for _, call := range p.Calls() {
			if !call.External && call.Name == want.Name && call.Resource == "configmaps" {
				c.t.Errorf("%s wrote another owner's ConfigMap: %s", p.Name(), call)
			}
		}
	}
	c.result.oracles++
}

// checkSettled checks the promises of converged objects: no duplicates,
// no foreign change undone, no object reconciled by two processes at
// once, nothing written outside the cell's namespace, quiet, traces, and
// no secret where it must not be.
func (c *cell) checkSettled(ctx context.Context, objs []client.Object) {
	t := c.t
	dups, err := c.b.duplicates(ctx, c.b.cp.Client, c.ns, objs)
	if err != nil {
		t.Fatal(err)
	}
	if dups > 0 {
		t.Errorf("%d objects with duplicates", dups)
	}
	c.result.oracles++
	if c.x == foreignWrite {
		reported := map[string]bool{}
		for _, p := range c.procs {
			lost, err := p.ForeignLost(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range lost {
				if !reported[l] {
					reported[l] = true
					t.Errorf("another actor's change was undone: %s", l)
				}
			}
		}
		c.result.oracles++
	}
	for _, o := range overlaps(c.procs) {
		t.Errorf("two processes at once: %s", o)
	}
	c.result.oracles++
	for _, p := range c.procs {
		for _, call := range p.Calls() {
			if !call.External && call.TookEffect() && !c.ours(call) && !c.migrationOf(call) {
				t.Errorf("%s wrote outside its namespace: %s", p.Name(), call)
			}
		}
	}
	c.result.oracles++
	switch c.f {
	case canaryRollout:
		c.waitOnVersion("v1")
	case twoShards, threeShards, planned:
		// A member that became alive after the objects were made takes
		// its share through drains, whose acknowledgements are writes of
		// the ring, not of the converged objects: quiet is counted once
		// the ring has settled.
		c.waitAssigned()
	}
	c.checkQuiet(ctx, len(objs))
	if c.spans != nil {
		if err := c.spans.check(c.procs); err != nil {
			t.Error(err)
		}
		c.result.oracles++
	}
	if err := oracle.NoConflictErrors(c.logs.Entries()); err != nil && c.x != networkPartition && c.x != crashMidWrite {
		t.Errorf("conflicts logged as errors: %v", err)
	}
	c.result.oracles++
	if c.b.op.Secrets != nil {
		c.b.checkSecrets(t, c.ns, c.logs)
		c.result.oracles++
	}
}

// checkQuiet checks that the live processes write nothing and change
// nothing outside while the objects stay converged, and counts their
// polls.
func (c *cell) checkQuiet(ctx context.Context, n int) {
	c.waitIdle()
	before := c.counts()
	reads := c.reads()
	timer := time.NewTimer(c.sizes.Quiet)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		c.t.Fatal(ctx.Err())
	case <-timer.C:
	}
	idle := c.counts().minus(before)
	if idle != (Cost{}) {
		c.t.Errorf("not quiet once converged: %s in %s: %s", idle, c.sizes.Quiet, c.callsSince(time.Now().Add(-c.sizes.Quiet)))
	}
	c.result.oracles++
	polls := c.reads() - reads
	every := c.b.op.Budget.PollEvery
	periods := 1.0
	if every > 0 {
		periods = max(1, c.sizes.Quiet.Seconds()/every.Seconds())
	}
	c.result.reads = float64(polls) / float64(n) / periods
	if c.result.costs != nil {
		c.result.costs["idle"] = idle
		// One period more than the window holds: a poll may fall on
		// either edge.
		if limit := c.b.op.Budget.Poll * n * (int(periods) + 1); c.x == noFault && polls > limit {
			c.t.Errorf("%d external reads of %d objects in %s, budget %d per object every %s", polls, n, c.sizes.Quiet, c.b.op.Budget.Poll, every)
		}
	}
}

// deleteAll deletes the objects and waits until nothing of them is left.
func (c *cell) deleteAll(objs []client.Object, measure bool) {
	t := c.t
	ctx := t.Context()
	before := c.counts()
	if err := deleteAll(ctx, c.b.cp.Client, objs); err != nil {
		t.Fatal(err)
	}
	bound := c.b.bound() + time.Duration(len(objs))*250*time.Millisecond
	if c.x == slowExternal {
		// Every external call of every pass is held, reads too: allow
		// each object a few passes' worth of held calls, one worker
		// taking the objects in turn.
		bound += time.Duration(10+6*len(objs)) * c.sizes.Slow
	}
	if err := poll(ctx, bound, func(ctx context.Context) error { return c.b.cleaned(ctx, c.b.cp.Client, c.ns, objs) }); err != nil {
		t.Fatalf("not cleaned up within %s: %v", bound, err)
	}
	c.result.oracles++
	if measure {
		c.waitIdle()
		c.measured("delete", before)
		for _, op := range []string{"create", "change", "delete"} {
			got, budget := c.result.costs[op], c.b.budgetIn(c.f, op)
			if c.x == slowExternal {
				got.Writes, budget.Writes = 0, 0
			}
			if !budget.within(got, len(objs)) {
				t.Errorf("%s of %d objects cost %s, budget %s per object", op, len(objs), got, budget)
			}
		}
		c.result.oracles++
	}
}

// waitIdle waits until no live process has written for half a second.
func (c *cell) waitIdle() {
	ctx := c.t.Context()
	err := poll(ctx, c.b.bound(), func(context.Context) error {
		for _, p := range c.alive() {
			if idle := time.Since(lastCall(p)); idle < 500*time.Millisecond {
				return fmt.Errorf("%s wrote %s ago", p.Name(), idle.Round(time.Millisecond))
			}
		}
		return nil
	})
	if err != nil {
		c.t.Fatalf("the processes did not go idle: %v", err)
	}
}

// counts returns the writes and external changes of every process so far
// that took effect.
func (c *cell) counts() Cost {
	var total Cost
	for _, p := range c.procs {
		for _, call := range p.Calls() {
			switch {
			case !call.TookEffect():
			case c.migrationOf(call):
				// The migration's, which storageMove.check counts apart.
			case call.External:
				total.External++
			default:
				total.Writes++
			}
		}
	}
	return total
}

// minus returns c less d.
func (c Cost) minus(d Cost) Cost {
	return Cost{Writes: c.Writes - d.Writes, External: c.External - d.External}
}

// reads returns the external reads of every process so far.
func (c *cell) reads() int {
	n := 0
	for _, p := range c.procs {
		n += p.Stats().ExternalReads
	}
	return n
}

// injected describes the faults the cell's processes met.
func (c *cell) injected() string {
	var s Stats
	s.Faults = map[Fault]int{}
	crashes := 0
	for _, p := range c.procs {
		ps := p.Stats()
		for f, n := range ps.Faults {
			s.Faults[f] += n
		}
		s.Dropped += ps.Dropped
		s.StaleReads += ps.StaleReads
		s.Foreign += ps.Foreign
		s.Partitions += ps.Partitions
		s.WatchesCut += ps.WatchesCut
		s.Relists += ps.Relists
		if !p.CrashedAt().IsZero() {
			crashes++
		}
	}
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(crashes, "crashes")
	for _, f := range []Fault{Conflict, TooManyRequests, InternalError, Timeout, ResponseLost} {
		add(s.Faults[f], string(f))
	}
	add(s.Dropped, "dropped events")
	add(s.Relists, "relists")
	add(s.StaleReads, "stale reads")
	add(s.Foreign, "foreign writes")
	add(s.Partitions, "partitions")
	add(s.WatchesCut, "watches cut")
	if c.x == slowExternal {
		parts = append(parts, "external calls "+c.sizes.Slow.String()+" late")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// spanCount is a tracer provider, set as OpenTelemetry's global one for a
// cell, that counts the traces it sees.
type spanCount struct {
	rec *tracetest.SpanRecorder
}

// traceFor sets a tracer provider for the rest of the test.
func traceFor(t *testing.T) *spanCount {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() {
		otel.SetTracerProvider(prev)
		_ = tp.Shutdown(context.Background())
	})
	return &spanCount{rec: rec}
}

// check reports passes that acted without a trace, and a trace of no
// pass.
func (s *spanCount) check(procs []*Process) error {
	traced, untraced := 0, 0
	for _, p := range procs {
		for _, r := range p.journal.list() {
			switch {
			case !r.acted || r.plain:
			case r.trace == "":
				untraced++
			default:
				traced++
			}
		}
	}
	switch {
	case traced+untraced == 0 && plainOnly(procs):
		// A plain controller-runtime reconciler makes no spans.
		return nil
	case untraced > 0:
		return fmt.Errorf("tracing on: %d passes acted without a trace (%d with one)", untraced, traced)
	case traced == 0 || len(s.rec.Ended()) == 0:
		return fmt.Errorf("tracing on: no pass traced (%d spans ended)", len(s.rec.Ended()))
	}
	return nil
}

// plainOnly reports whether every pass the processes journaled was a
// plain reconciler's.
func plainOnly(procs []*Process) bool {
	for _, p := range procs {
		for _, r := range p.journal.list() {
			if !r.plain {
				return false
			}
		}
	}
	return true
}

// engineOptions returns the engine options of the cell's feature and
// fault, or nil when they are the engine's defaults.
func (c *cell) engineOptions() func(*bosun.Options) {
	if c.f != kstatusOn && c.f != formerFinalizer && c.x != blockedCleanup && c.x != massHeld {
		return nil
	}
	return func(o *bosun.Options) {
		if c.f == kstatusOn {
			o.KStatus = true
			o.ReadyGrace = readyGrace
		}
		if c.x == blockedCleanup {
			o.DeletionDeadline = c.sizes.Deadline
		}
		if c.x == massHeld {
			o.MassDeletion.Count = -1
		}
		if c.f == formerFinalizer {
			o.FormerFinalizers = append(o.FormerFinalizers, formerName)
		}
	}
}

// configured reports whether a process's Setup passed its reconcilers'
// options to Process.Configure.
func (c *cell) configured() bool {
	for _, p := range c.procs {
		if p.configured.Load() {
			return true
		}
	}
	return false
}

// watchKStatus starts judging every version of the cell's objects.
func (c *cell) watchKStatus() *kstatusWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &kstatusWatch{stops: []func(){cancel}}
	c.t.Cleanup(w.stop)
	wc, err := client.NewWithWatch(c.b.cp.Config, client.Options{Scheme: c.b.cp.Scheme})
	if err != nil {
		c.t.Fatal(err)
	}
	kinds, err := c.b.kinds(c.ns)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, gvk := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		in, err := c.b.inScenario(gvk, c.ns)
		if err != nil {
			c.t.Fatal(err)
		}
		wi, err := wc.Watch(ctx, list, in...)
		if err != nil {
			c.t.Fatalf("watching %s: %v", gvk.Kind, err)
		}
		w.stops = append(w.stops, wi.Stop)
		go w.judge(wi.ResultChan())
	}
	return w
}

// kstatusCurrent checks that kstatus calls every object Current now.
func (c *cell) kstatusCurrent(ctx context.Context, objs []client.Object) error {
	var errs []error
	for _, o := range objs {
		gvk, err := apiutil.GVKForObject(o, c.b.cp.Scheme)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := c.b.cp.Client.Get(ctx, client.ObjectKeyFromObject(o), u); err != nil {
			return err
		}
		res, err := status.Compute(u)
		if err != nil {
			return err
		}
		if res.Status != status.CurrentStatus {
			errs = append(errs, fmt.Errorf("%s: kstatus %s (%s)", o.GetName(), res.Status, res.Message))
		}
	}
	return errors.Join(errs...)
}

// blockedDelete deletes the objects while every delete of the operator
// fails, and checks the deletion deadline's promises: each object that a
// finalizer holds shows DeletionBlocked by the deadline (with a margin for
// a busy machine), is not written while blocked but for what each refused
// external delete costs, and, once
// the deletes go through again, is cleaned up: half of them released by
// the annotation bosun.dev/release-finalizer "true", whose one more
// cleanup must delete what the object had, the others by the retried
// cleanup.
func (c *cell) blockedDelete(objs []client.Object) {
	t := c.t
	ctx := t.Context()
	for _, p := range c.alive() {
		p.FailDeletes(true)
	}
	if err := deleteAll(ctx, c.b.cp.Client, objs); err != nil {
		t.Fatal(err)
	}
	held := c.waitBlocked(objs)
	if len(held) == 0 {
		// Nothing held them: their children go with the garbage collector.
		c.waitCleaned(objs)
		return
	}

	// Blocked: DeletionBlocked is not written again, and nothing else is
	// but what a refused delete costs. A managed step records each delete
	// it asks for (its pending mark and its change log: two writes), paced
	// by its short interval and the queue's backoff; a failing delete of a
	// child costs nothing.
	written, since := c.quiet()
	refused := c.refusedDeletesSince(since)
	if written.External > 0 || written.Writes > 2*refused {
		t.Errorf("blocked deletions written while nothing changed but %d refused external deletes: %s in %s: %s",
			refused, written, c.sizes.Quiet, c.callsSince(since))
	}
	c.result.extra = append(c.result.extra, "writes while blocked", fmt.Sprintf("%s, %d refused external deletes", written, refused), "2 writes per refused external delete")
	c.result.oracles++

	// The deletes go through again; half the objects are released by
	// the annotation, whose one more cleanup must still delete.
	for _, p := range c.alive() {
		p.FailDeletes(false)
	}
	released := 0
	for i, o := range held {
		if i%2 == 1 {
			continue
		}
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, bosun.AnnotationReleaseFinalizer)
		if err := c.b.cp.Client.Patch(ctx, o, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		released++
	}
	c.result.extra = append(c.result.extra, "released by the annotation", fmt.Sprintf("%d/%d", released, len(held)), "")
	c.waitCleaned(objs)
}

// waitLeft waits, at most bound, until every deleted object of objs is
// gone or its DeletionBlocked condition (nil when not True) is as shown
// wants, and returns those left.
func (c *cell) waitLeft(objs []client.Object, bound time.Duration, shown func(*metav1.Condition) bool) ([]client.Object, error) {
	var left []client.Object
	err := poll(c.t.Context(), bound, func(ctx context.Context) error {
		left = left[:0]
		var waiting []string
		for _, o := range objs {
			cur, _ := o.DeepCopyObject().(client.Object)
			if err := c.b.cp.Client.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
				if client.IgnoreNotFound(err) != nil {
					return err
				}
				continue
			}
			left = append(left, cur)
			if !shown(blocked(cur)) {
				waiting = append(waiting, o.GetName())
			}
		}
		if len(waiting) > 0 {
			return fmt.Errorf("not shown by %v", waiting)
		}
		return nil
	})
	return left, err
}

// quiet waits for the quiet period and returns what the processes wrote
// meanwhile, and since when.
func (c *cell) quiet() (Cost, time.Time) {
	before, since := c.counts(), time.Now()
	timer := time.NewTimer(c.sizes.Quiet)
	select {
	case <-c.t.Context().Done():
		timer.Stop()
		c.t.Fatal(c.t.Context().Err())
	case <-timer.C:
	}
	return c.counts().minus(before), since
}

// waitBlocked waits until every deleted object is gone or shows
// DeletionBlocked, checks that each showed it on time with a message
// naming the deadline, and returns those still there.
func (c *cell) waitBlocked(objs []client.Object) []client.Object {
	t := c.t
	deadline := c.sizes.Deadline
	bound := deadline + c.b.bound()
	held, err := c.waitLeft(objs, bound, func(b *metav1.Condition) bool { return b != nil })
	if err != nil {
		t.Fatalf("DeletionBlocked not shown within %s of a deadline of %s: %v", bound, deadline, err)
	}
	c.result.oracles++
	late := time.Duration(0)
	for _, o := range held {
		cond := blocked(o)
		after := cond.LastTransitionTime.Sub(o.GetDeletionTimestamp().Time)
		late = max(late, after)
		// Both times are stored to the second.
		if after > deadline+c.sizes.Margin {
			t.Errorf("%s: DeletionBlocked shown %s after the deletion, deadline %s", o.GetName(), after, deadline)
		}
		if !strings.Contains(cond.Message, "within") {
			t.Errorf("%s: DeletionBlocked says %q, which does not name the deadline", o.GetName(), cond.Message)
		}
	}
	c.result.extra = append(c.result.extra,
		"objects held by a finalizer", fmt.Sprintf("%d/%d", len(held), len(objs)), "",
		"DeletionBlocked shown after the deletion", late.String(), fmt.Sprintf("deadline %s", deadline))
	if len(held) > 0 {
		c.result.oracles++
	}
	return held
}

// heldDelete deletes the objects under a mass-deletion breaker that holds
// every cleanup, and checks its promises: each object that a finalizer
// holds shows DeletionBlocked with conditions.ReasonDeletionHeld, nothing
// external changes, holding costs at most one write per held object (on
// one replica, where nothing else writes), and nothing is written once
// they are held; then an administrator lets their cleanups go on with
// bosun.dev/allow-mass-deletion "true", and nothing of them is left.
func (c *cell) heldDelete(objs []client.Object) {
	t := c.t
	ctx := t.Context()
	before := c.counts()
	if err := deleteAll(ctx, c.b.cp.Client, objs); err != nil {
		t.Fatal(err)
	}
	held, err := c.waitLeft(objs, c.b.bound(), func(b *metav1.Condition) bool {
		return b != nil && b.Reason == string(conditions.ReasonDeletionHeld)
	})
	if err != nil {
		t.Fatalf("DeletionBlocked %s not shown within %s: %v", conditions.ReasonDeletionHeld, c.b.bound(), err)
	}
	c.result.oracles++
	// The passes that the holding writes brought settle first: they are
	// part of what holding costs.
	c.waitIdle()
	spent := c.counts().minus(before)
	c.result.extra = append(c.result.extra, "objects held by the breaker", fmt.Sprintf("%d/%d", len(held), len(objs)), "",
		"cost of holding them", spent.String(), "1 write per held object, 0 external")
	if len(held) == 0 {
		// Nothing held them: their children go with the garbage collector.
		c.waitCleaned(objs)
		return
	}
	if spent.External > 0 || (c.f == oneReplica && spent.Writes > len(held)) {
		t.Errorf("holding %d objects cost %s, budget 1 write per held object and no external change", len(held), spent)
	}
	c.result.oracles++

	// Held, and settled: nothing more is written.
	if written, since := c.quiet(); written != (Cost{}) {
		t.Errorf("held deletions written while nothing changed: %s in %s: %s", written, c.sizes.Quiet, c.callsSince(since))
	}
	c.result.oracles++

	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, bosun.AnnotationAllowMassDeletion)
	for _, o := range held {
		if err := c.b.cp.Client.Patch(ctx, o, client.RawPatch(types.MergePatchType, patch)); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
	}
	c.waitCleaned(objs)
}

// waitCleaned waits until nothing of the deleted objects is left.
func (c *cell) waitCleaned(objs []client.Object) {
	ctx := c.t.Context()
	bound := c.b.bound() + time.Duration(len(objs))*250*time.Millisecond
	if err := poll(ctx, bound, func(ctx context.Context) error { return c.b.cleaned(ctx, c.b.cp.Client, c.ns, objs) }); err != nil {
		c.t.Fatalf("not cleaned up within %s: %v", bound, err)
	}
	c.result.oracles++
}

// planChange stops the cell's processes, changes the objects' specs and
// runs the operator under --plan (package operator, as its command runs
// it) beside what the stopped members left (their shard labels): the plan
// must cover every object of the operator's kinds, foretell a change of
// each changed object, make no real write to the API server or the
// external system, and leave every object of the namespace as it was.
// Then it starts the processes again.
func (c *cell) planChange(objs []client.Object) {
	t := c.t
	ctx := t.Context()
	for _, p := range c.alive() {
		p.Stop()
	}
	kubeconfig := t.TempDir() + "/kubeconfig"
	if err := c.b.cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	c.planEdit(objs)

	gens := make([]int64, len(objs))
	for i, o := range objs {
		gens[i] = o.GetGeneration()
	}
	if err := c.b.change(ctx, objs); err != nil {
		t.Fatal(err)
	}
	before, beforeBy, err := c.snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	report := c.runPlan("")
	for i, o := range objs {
		if err := plannedChange(report, o.GetNamespace(), o.GetName(), o.GetGeneration() != gens[i]); err != nil {
			t.Errorf("--plan: %v\n%s", err, report)
		}
	}
	c.result.oracles++
	c.checkPlanChangedNothing("", before, beforeBy, len(objs))
	summary, _, _ := strings.Cut(report, "\n")
	c.result.extra = append(c.result.extra,
		"plan of the change", summary, fmt.Sprintf("every one of %d objects would change", len(objs)))
	c.startReplicas()
}

// planEdit plans the operator's change of the objects as a proposed edit
// (--plan-edit, before the change is made): the plan must cover each
// object, say what the edit changes, foretell a change of each object
// whose spec the edit changes, and change nothing, on the API server or
// outside.
func (c *cell) planEdit(objs []client.Object) {
	t := c.t
	ctx := t.Context()
	if c.b.op.Change == nil {
		return
	}
	var docs []string
	changed := make([]bool, len(objs))
	for i, o := range objs {
		cur, _ := o.DeepCopyObject().(client.Object)
		if err := c.b.cp.Client.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
			t.Fatal(err)
		}
		live, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cur)
		if err != nil {
			t.Fatal(err)
		}
		c.b.op.Change(cur)
		gvk, err := apiutil.GVKForObject(cur, c.b.cp.Scheme)
		if err != nil {
			t.Fatal(err)
		}
		cur.GetObjectKind().SetGroupVersionKind(gvk)
		edited, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cur)
		if err != nil {
			t.Fatal(err)
		}
		changed[i] = !equality.Semantic.DeepEqual(live["spec"], edited["spec"])
		doc, err := yaml.Marshal(edited)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(doc))
	}
	file := t.TempDir() + "/edited.yaml"
	if err := os.WriteFile(file, []byte(strings.Join(docs, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	before, beforeBy, err := c.snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	report := c.runPlan(file)
	for i, o := range objs {
		if err := plannedChange(report, o.GetNamespace(), o.GetName(), changed[i]); err != nil {
			t.Errorf("--plan-edit: %v\n%s", err, report)
		}
		if changed[i] && !strings.Contains(report, "  edit: spec.") {
			t.Errorf("--plan-edit: %s: the report does not say what the edit changes\n%s", o.GetName(), report)
		}
	}
	c.result.oracles++
	c.checkPlanChangedNothing(" of the edit", before, beforeBy, len(objs))
	summary, _, _ := strings.Cut(report, "\n")
	c.result.extra = append(c.result.extra, "plan of the edit", summary, fmt.Sprintf("every one of %d objects would change", len(objs)))
}

// runPlan runs the operator under --plan (with --plan-edit of the file
// edit, when set) beside the stopped processes and returns its report.
func (c *cell) runPlan(edit string) string {
	t := c.t
	c.planner = &Process{name: "plan", now: time.Now, deadCh: make(chan struct{}), done: make(chan struct{})}
	scheme := c.b.cp.Scheme
	flags := operator.DefaultFlags()
	flags.Plan = true
	flags.PlanEdit = edit
	flags.Zap.DestWriter = io.Discard
	var out strings.Builder
	err := operator.Run(t.Context(), operator.Options{
		Name: "faults-plan",
		AddToScheme: func(s *runtime.Scheme) error {
			for gvk, typ := range scheme.AllKnownTypes() {
				if !s.Recognizes(gvk) {
					s.AddKnownTypeWithName(gvk, reflect.New(typ).Interface().(runtime.Object))
				}
			}
			return nil
		},
		Manager: c.planManager,
		Setup:   func(mgr ctrl.Manager) error { return c.b.op.Setup(mgr, c.planner) },
	}, flags, &out)
	report := out.String()
	if err != nil {
		t.Fatalf("--plan: %v\n%s", err, report)
	}
	c.result.oracles++
	return report
}

// checkPlanChangedNothing checks that the plan just run left every object
// of the namespace as the snapshot before it found it, made no real
// external change, and that the snapshot holds the n objects made.
func (c *cell) checkPlanChangedNothing(what string, before map[string]string, beforeBy map[string]map[string]string, n int) {
	t := c.t
	after, afterBy, err := c.snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	forgiveCluster(before, after, beforeBy, afterBy)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("--plan changed objects on the server (-before +after):\n%s", diff)
	}
	for _, call := range c.planner.Calls() {
		if call.TookEffect() {
			t.Errorf("--plan made a real external change: %s", call)
		}
	}
	c.result.oracles++
	if len(before) < n {
		t.Errorf("--plan: the snapshot of the namespace holds %d objects, fewer than the %d made", len(before), n)
	}
	c.result.extra = append(c.result.extra,
		"objects of the namespace unchanged by the plan"+what, fmt.Sprintf("%d/%d", unchanged(before, after), len(before)), "all")
}

// planManager adjusts the options of the manager of the --plan run: the
// cell's namespace, the operator's own options (Operator.Manager), and
// the cell's objects of a cluster-scoped kind.
func (c *cell) planManager(o *ctrl.Options) {
	o.Cache.DefaultNamespaces = map[string]cache.Config{c.ns: {}}
	o.Controller.SkipNameValidation = ptr.To(true)
	if c.b.op.Manager != nil {
		c.b.op.Manager(o)
	}
	for _, kind := range c.b.clusterScoped() {
		scopeCache(&o.Cache, kind, c.ns)
	}
}

// snapshot returns the resourceVersion of every object in the cell's
// namespace, of every kind the API server lists there, Events aside, and
// of the cell's own objects of a cluster-scoped kind.
func (c *cell) snapshot(ctx context.Context) (rvs map[string]string, by map[string]map[string]string, err error) {
	dc, err := discovery.NewDiscoveryClientForConfig(c.b.cp.Config)
	if err != nil {
		return nil, nil, err
	}
	lists, err := dc.ServerPreferredNamespacedResources()
	if err != nil {
		return nil, nil, err
	}
	out, by := map[string]string{}, map[string]map[string]string{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range l.APIResources {
			if r.Name == "events" || !slices.Contains(r.Verbs, "list") || strings.Contains(r.Name, "/") {
				continue
			}
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(gv.WithKind(r.Kind + "List"))
			if err := c.b.cp.Client.List(ctx, list, client.InNamespace(c.ns)); err != nil {
				return nil, nil, fmt.Errorf("listing %s: %w", r.Name, err)
			}
			for _, o := range list.Items {
				k := r.Kind + " " + o.Name
				out[k] = o.ResourceVersion
				by[k] = managedEntries(o.ManagedFields)
			}
		}
	}
	if c.b.scoped != nil {
		gvk, err := apiutil.GVKForObject(c.b.scoped, c.b.cp.Scheme)
		if err != nil {
			return nil, nil, err
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.b.cp.Client.List(ctx, list, client.MatchingLabels{ScenarioLabel: c.ns}); err != nil {
			return nil, nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		for _, o := range list.Items {
			k := gvk.Kind + " " + o.Name
			out[k] = o.ResourceVersion
			by[k] = managedEntries(o.ManagedFields)
		}
	}
	return out, by, nil
}

// clusterManagers are the field managers of the dev cluster's own
// components (controlplane.Options.Nodes), which change the objects of a
// namespace by themselves: its controller manager (EndpointSlices,
// ReplicaSets, Deployments' status), its scheduler and kwok (Pods).
var clusterManagers = []string{"kube-controller-manager", "kube-scheduler", "kwok"}

// managedEntries keys each of fields' entries by its manager, operation
// and subresource, with what it holds (its time and fields).
func managedEntries(fields []metav1.ManagedFieldsEntry) map[string]string {
	m := make(map[string]string, len(fields))
	for _, f := range fields {
		var at, set string
		if f.Time != nil {
			at = f.Time.UTC().Format(time.RFC3339)
		}
		if f.FieldsV1 != nil {
			set = f.FieldsV1.GetRawString()
		}
		m[f.Manager+"\x00"+string(f.Operation)+"\x00"+f.Subresource] = at + "\x00" + set
	}
	return m
}

// forgiveCluster sets in after the resourceVersion before had of each
// object that only the dev cluster's own components changed between the
// snapshots (by: their managed entries): they go on while the plan runs
// (a Pod coming up changes its EndpointSlice), and what they do is not
// the plan's.
func forgiveCluster(before, after map[string]string, beforeBy, afterBy map[string]map[string]string) {
	for k, rv := range after {
		if before[k] != rv && clusterOnly(beforeBy[k], afterBy[k]) {
			after[k] = before[k]
		}
	}
}

// clusterOnly reports whether an object's managed fields before and
// after a change say that only the dev cluster's components made it: an
// entry changed, was added or went, and each such entry is one of
// clusterManagers'. A change that moved no entry is not known to be
// theirs.
func clusterOnly(before, after map[string]string) bool {
	moved := false
	for _, m := range []map[string]string{before, after} {
		for k := range m {
			if before[k] == after[k] {
				_, inBefore := before[k]
				_, inAfter := after[k]
				if inBefore == inAfter {
					continue
				}
			}
			moved = true
			manager, _, _ := strings.Cut(k, "\x00")
			if !slices.Contains(clusterManagers, manager) {
				return false
			}
		}
	}
	return moved
}

// startCanary gives half the objects to a canary of version v2 and starts
// a member of it.
func (c *cell) startCanary() {
	c.writeCanary(shard.Canary{Version: "v2", Percent: 50})
	c.version = "v2"
	c.start(false)
}

// writeCanary records the rollout of every ring of the cell.
func (c *cell) writeCanary(cn shard.Canary) {
	for _, r := range c.rings() {
		if err := cn.Write(c.t.Context(), c.b.cp.Client, c.ns, r.Ring); err != nil {
			c.t.Fatal(err)
		}
	}
}

// abortCanary hands every object back to v1 and changes the specs again
// while they move.
func (c *cell) abortCanary(objs []client.Object) {
	c.writeCanary(shard.Canary{Version: "v2", Percent: 0})
	if err := c.b.change(c.t.Context(), objs); err != nil {
		c.t.Fatal(err)
	}
	c.converge(objs, "after the abort and a second spec change", false, "", nil)
	c.waitOnVersion("v1")
}

// callsSince lists the calls of the live processes that took effect
// since t.
func (c *cell) callsSince(t time.Time) string {
	var calls []string
	for _, p := range c.alive() {
		for _, call := range p.Calls() {
			if call.At.After(t) && call.TookEffect() {
				calls = append(calls, p.Name()+": "+call.String())
			}
		}
	}
	return strings.Join(calls, "; ")
}

// checkFormerGone checks that no converged object still carries the
// earlier release's finalizer.
func (c *cell) checkFormerGone(objs []client.Object) {
	ctx := c.t.Context()
	for _, o := range objs {
		cur, _ := o.DeepCopyObject().(client.Object)
		if err := c.b.cp.Client.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
			c.t.Fatal(err)
		}
		if controllerutil.ContainsFinalizer(cur, formerName) {
			c.t.Errorf("%s converged still carrying the earlier release's finalizer: %v", o.GetName(), cur.GetFinalizers())
		}
	}
	c.result.oracles++
}

// createAll makes the cell's objects and waits for them to converge (with
// measure, counting the cost), then brings in what the feature adds once
// they have: a third member, a canary.
func (c *cell) createAll(measure bool) []client.Object {
	var tweaks []func(client.Object)
	if c.f == formerFinalizer {
		// As the release before left them.
		tweaks = append(tweaks, func(o client.Object) { controllerutil.AddFinalizer(o, formerName) })
	}
	objs, err := c.b.create(c.t.Context(), c.b.cp.Client, c.ns, c.sizes.Objects, tweaks...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.names = map[string]bool{}
	for _, o := range objs {
		c.names[o.GetName()] = true
	}
	c.converge(objs, "created", measure, "create", nil)
	if c.f == formerFinalizer {
		c.checkFormerGone(objs)
	}
	if c.crashPending {
		// The first process made fewer than three writes: kill it now.
		c.procs[0].Crash()
		c.replaceCrashed()
	}
	if c.f == threeShards {
		c.join()
		c.converge(objs, "after a member joined", false, "", nil)
	}
	if c.f == canaryRollout {
		c.startCanary()
	}
	return objs
}

// changeAll changes the objects' specs (under --plan, through the plan),
// with the faults that strike around the change, and waits for them to
// converge again (with measure, counting the cost).
func (c *cell) changeAll(objs []client.Object, measure bool) {
	before := c.counts()
	if c.x == networkPartition {
		c.alive()[0].Partition()
	}
	var move *storageMove
	if c.f == migrated {
		moved := time.Now()
		move = moveStorage(c)
		move.waitRewriting(moved)
	}
	var rw *rollWatch
	if c.f == rolled {
		rw = watchRollout(c)
	}
	switch c.f {
	case planned:
		c.planChange(objs)
	case migrated:
		// Half the objects: the others are left to the migration to
		// rewrite at the new storage version.
		half := make([]client.Object, 0, len(objs)/2)
		for i := 0; i < len(objs); i += 2 {
			half = append(half, objs[i])
		}
		if err := c.b.change(c.t.Context(), half); err != nil {
			c.t.Fatal(err)
		}
		for i, o := range half {
			objs[2*i] = o
		}
	default:
		if err := c.b.change(c.t.Context(), objs); err != nil {
			c.t.Fatal(err)
		}
	}
	c.afterChange(objs)
	if rw != nil {
		rw.changeMidRollout(c, objs)
	}
	c.converge(objs, "after the spec change", measure, "change", &before)
	if move != nil {
		move.check(objs)
	}
	if rw != nil {
		rw.check(c)
	}
}

// refusedDeletesSince counts the external deletes the live processes asked
// for since t that FailDeletes refused.
func (c *cell) refusedDeletesSince(t time.Time) int {
	n := 0
	for _, p := range c.alive() {
		for _, call := range p.Calls() {
			if call.At.After(t) && call.External && call.Verb == "delete" && call.Err == ErrDeleteRefused.Error() {
				n++
			}
		}
	}
	return n
}

// migrationOf reports whether call is a write of the migrated feature's
// migration to the CRD, the one write of the cell's processes outside
// the cell's namespace that is theirs to make.
func (c *cell) migrationOf(call Call) bool {
	return c.f == migrated && call.Group == apiextensionsv1.GroupName && call.Name == c.b.op.Migration.CRD
}
