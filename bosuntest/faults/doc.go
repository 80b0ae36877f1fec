// Package faults puts a bosun operator, or any controller-runtime manager,
// under the faults that break operators in production: a crash after any
// write, API errors, a cache that lags, watch events that go missing, and
// a leader that dies.
//
// # A process under a plan
//
// Start runs a manager as a Process: every request it makes to the API
// server passes through the kit, and so does every call its managed steps
// make to external systems, once setup hands them External:
//
//	p := faults.Start(t, cp, faults.Options{Plan: plan}, func(mgr ctrl.Manager, p *faults.Process) error {
//		return mypkg.SetupWithManager(mgr, mypkg.Options{
//			Managed: []managed.Option{managed.WithCallHook(p.External())},
//		})
//	})
//
// The process records each write that reaches the API server (Events and
// Leases aside) and each mutating external call, in order (Calls, Writes).
// Its Plan says what goes wrong:
//
//   - Rules answer a share of the requests of chosen resources and verbs
//     with 409 Conflict, 429 Too Many Requests with Retry-After, 500, a
//     timeout, or pass a write on and lose its answer (ResponseLost). The
//     choice is repeatable: it depends on Plan.Seed and the request, not on
//     timing.
//   - StaleReads make the manager's cache lag behind the API server: up to
//     Lag versions of an object while it changes, at most MaxAge, so that an
//     object deleted and made again under its name is seen as its earlier
//     self for a while. The cache stays consistent, only late.
//   - WatchFaults drop, delay and coalesce the events the caches receive,
//     and end with 410 Gone, to force a relist, a watch whose lost event
//     no later event of its object made good.
//   - CrashPoint kills the process right after, or during, its k-th write:
//     its context is cancelled and everything it sends from then on fails,
//     the way a process that died would be cut off. Crash does the same on
//     demand.
//   - Foreign writes annotate an object just before a share of the
//     process's updates and patches of it reach the API server, as
//     another actor would between the operator's read and its write;
//     ForeignLost names the objects whose annotation the operator undid.
//   - SlowExternal holds every external call of the managed steps.
//
// Partition cuts a process off from the API server until Heal: its
// requests fail, its watches hang and lose what arrives meanwhile, its
// Leases go unrenewed.
//
// With LeaderElection, several processes elect a leader through the API
// server's Lease, as replicas of one Deployment do; killing the leader
// shows how long the others take over and what they do with its
// half-finished work.
//
// With Shard, a process is a member of a ring of package shard; the
// operator's Setup builds the ring's controller through Shard. Every
// process journals the passes of its reconcilers, which the matrix reads
// to tell whether two processes ever reconciled one object at once:
// bosun's reconcilers are journaled on their own; a plain
// controller-runtime reconciler is journaled only when Setup wraps it in
// Journal, and a pass of it counts when the cache held its object as the
// pass began. Such a controller takes its ring's member from Member (nil
// when the process is in no ring of the kind) and runs on the member's
// share: the member's Predicate on its For, leader election off for the
// controller, and the member's Wrap around the journaled reconciler:
//
//	r := p.Journal("widgets", &v1.Widget{}, reconciler)
//	b := ctrl.NewControllerManagedBy(mgr).Named("widgets")
//	if m := p.Member(&v1.Widget{}); m != nil {
//		return b.For(&v1.Widget{}, builder.WithPredicates(m.Predicate())).
//			WithOptions(controller.Options{NeedLeaderElection: ptr.To(false)}).
//			Complete(m.Wrap(r))
//	}
//	return b.For(&v1.Widget{}).Complete(r)
//
// # Crash after every write
//
// CrashEveryWrite runs a Scenario once to count its writes, then once per
// write, killing the operator there and starting a fresh one against the
// same API server and external systems, and checks the scenario's oracles
// each time: the objects converge, nothing is duplicated, and deleting
// them leaves nothing behind. Package bosuntest/oracle has checks to build
// them from.
//
// # The battery and its matrix
//
// RunBattery runs every row of the reliability battery on an Operator:
// crashes at every write, API faults, stale reads, dropped events, scale
// and quiescence, leader failover, and a matrix of every fault under every
// feature (one replica, workers, the lean cache, tuning on, the plain queue, tracing,
// leader failover, two and three shard members, the kstatus conditions,
// --plan of the change, a canary rollout, objects of an earlier
// release's finalizer, and, for a kind of several versions
// (Operator.Migration), a storage migration, and for children rolled out
// a few at a time (Operator.Rolling), the roll-out), each cell checking every
// promise: convergence after a creation and a spec change, no duplicate,
// no undone foreign change, no object reconciled by two processes at
// once, nothing written outside the namespace, quiet once converged, no
// secret where it must not be, nothing left once deleted; and the
// operator's cost Budget per create, change, delete and poll. One of its
// faults is a cleanup blocked past the deletion deadline (FailDeletes).
// An operator's Setup passes each bosun reconciler's Options to
// Process.Configure, through which the cells set engine options (the
// kstatus conditions, the deletion deadline); Operator.Manager gives
// every manager the battery starts the operator's own manager options,
// such as its cache's.
//
// The operator's kind may be cluster-scoped, which the battery reads
// from the API server. Its objects have no namespace to keep the
// scenarios apart, so Operator.Object names them after the scenario's
// namespace, and the battery labels each ScenarioLabel with that
// namespace, which stands where the namespace would: a process of the
// scenario caches only the scenario's objects of the kind
// (Options.ClusterScoped), its shard rings assign only those
// (shard.Options.ObjectSelector), the battery lists and watches the kind
// by the label, and the promise of nothing written outside the
// namespace allows the writes of the scenario's own objects. Every row
// and cell runs as for a namespaced kind; the operator's children, and
// Rolling's, stay in the namespace. A kind whose schema has no
// status.observedGeneration (trust-manager's Bundle) skips the kstatus
// feature, whose conditions need it.
//
// The kit reads API traffic in JSON, so a process's clients use JSON, not
// protobuf. Stale reads and watch faults apply to the kinds the manager
// caches.
//
// Maturity: experimental. The battery's rows and the matrix's cells grow
// as new faults and features are covered.
package faults
