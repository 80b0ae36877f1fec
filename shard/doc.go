// Package shard lets more than one active replica of an operator reconcile
// the objects of one kind, each a disjoint share, coordinated only through
// the Kubernetes API.
//
// # Members
//
// The replicas of a ring are its members. Each holds a Lease named
// LeaseName(ring, identity) in a namespace, labelled shard.bosun.dev/ring=ring, and
// renews it every Options.RenewPeriod. A member is alive while its Lease
// is. A member that stops cleanly waits for its running passes,
// then deletes its Lease (closes it, with Options.Standby), so that its
// objects move at once; one that
// crashes keeps them until its Lease expires (Options.LeaseDuration).
//
// # Assignment
//
// One replica, the winner of the manager's leader election, also runs the
// sharder. It watches the ring's Leases and the metadata of every object
// of the kind, in a cache of its own, hashes each object (Options.Key:
// ByName, or ByNamespace to keep a namespace together) onto a
// consistent-hash Ring of the live members, and labels the object
// LabelPrefix+ring=member. An object created without the label gets it as
// soon as the sharder sees it; a member not alive yet gets nothing.
//
// # Handover
//
// An object moves between two live members through a drain: the sharder
// adds the label DrainPrefix+ring, whose value is the time the drain
// began in Unix seconds; the old member starts no more passes of the
// object, waits for the one running to end, and removes both labels;
// only then does the sharder label it for the new member. So no object is
// reconciled by two members at once. An object whose member is gone (no
// Lease, or an expired one) is relabelled directly. Before that the
// sharder closes the expired Lease: it clears its holder, guarded by its
// resourceVersion, so that a renewal already on its way fails with 409
// Conflict, and the member's next renewal starts a new tenure (see
// Leases and passes), and records the tenure it closed on the Lease (the
// annotation shard.bosun.dev/closed). It reads the Lease again before
// each such object, and leaves the object to a drain if the member came
// back meanwhile. A label patch decided just before the member came back
// may still be on its way when the member, back, lists its objects: so
// the member takes none of the objects assigned in the closed tenure (its
// list of its objects, its reads and its cache leave them out), and the
// sharder labels those still its own in its new tenure.
//
// The sharder wakes at the moment the first Lease of a live member is due
// to expire, not at its next periodic look, and relabels the objects of
// members that are gone before it moves any other, 64 at once: a crashed
// member's share is back in work after its Lease expired and one label
// patch per object. No member can be declared gone sooner without the
// risk of a second replica reconciling the objects of one that is only
// slow. If the member that crashed was also the leader, the sharder starts
// on the next leader once the manager's leader election has moved.
//
// # Standbys
//
// Relabelling a crashed member's objects costs one label patch each, which
// on a busy API server takes seconds for a thousand objects. With
// Options.Standby the sharder also gives every object a standby: the
// member the object would belong to if its member were gone (the next
// member on the ring, or of the canary's side), named in the label
// standby.shard.bosun.dev/<ring>. The object carries a presence label
// <ring>.in.shard.bosun.dev/<member> for its member and for its standby,
// and each member caches the objects that carry its own: about twice its
// share. When the sharder closes the expired Lease of a member (see
// Handover), it records the tenure it closed on the Lease (the annotation
// shard.bosun.dev/closed). Each standby watches the ring's Leases and
// closes an expired one itself, the same way, without waiting for the
// sharder, which the member that died may have run. When it reads a
// closed tenure, it lists from the API server the objects labelled
// for that member with itself as standby, assigned in that tenure or
// before, counts them as its own and hands their requests to the ring's
// controllers through the source Takeovers, which the controllers must
// watch (with bosun's Builder, WatchesRawSource). The standbys reconcile
// them from the moment the Lease is closed, before any label has moved;
// the sharder then labels them for their standbys, which keep them. While
// standbys take a dead member's objects over, the sharder holds its label
// patches back a renew period, so that they do not queue the standbys'
// lists and first passes at the API server. A
// member that stops cleanly closes its own Lease, instead of deleting it,
// so its standbys take over within two renew periods.
//
// Why no object is reconciled twice: the sharder changes the standby of a
// member's object only while the member is alive, holding a lock per member
// that its own closing of the member's Lease takes too, and with a patch
// that must land, or not at all, before the Lease expires and within a
// fence from the renewal its cache shows (two renew periods, or one and
// half a second if that is longer); a standby closes a Lease only once it
// has expired, and lists the objects of a Lease its member closed as it
// stopped only once the fence has passed since the member's last renewal.
// So once a tenure is closed no standby of its objects changes, and the
// standby's list names exactly the objects it may take. Like the Leases
// themselves, this counts on clocks that agree to well within the fence. A
// member that comes back after its tenure was closed finds the closed
// tenure on its Lease and takes none of the objects assigned in it (its
// list of its objects, its reads and its cache leave them out), and the
// sharder labels them for their standby, if alive, or back for the member
// in its new tenure. A standby that is gone as well has its own Lease
// closed before the object moves on. The takeover does not wait for the
// sharder: when the crashed member also led, its standbys take its
// objects over at its Lease's expiry, and the next leader's sharder
// moves the labels once it runs.
//
// Set Standby alike on every member of a ring: the members' caches select
// their objects by the presence labels that only a sharder with Standby
// writes.
//
// # Drains not acknowledged
//
// A member that does not let an object go within Options.DrainTimeout
// (two minutes by default) of the drain's start (or of the
// member's return, if it came back since) is evicted: the sharder counts
// the object in bosun_shard_drain_timeouts_total, logs it, and writes
// the annotation shard.bosun.dev/evicted on the member's Lease. The member reads it at its
// next renewal, which it does not make: it stops starting passes and
// cancels those it runs (see Leases and passes), and lets its Lease
// expire. Only then, the member gone, does the sharder relabel its
// objects, the one it did not let go among them, as it would a crashed
// member's. A renew period after the expiry the member renews its Lease
// again, without the annotation, and comes back for a share of its own,
// starting a new right as after any lapse.
//
// The sharder never relabels an object of a live member without its
// acknowledgement: a member that still renews may still run a pass of
// the object (the drain may be waiting on that very pass), and the
// timeout alone says nothing of it. Waiting for the Lease to expire gives
// the eviction the guarantee of a crash. The cost is that the whole share
// of the evicted member moves, for one object it held on to; a member
// that keeps failing to let objects go is evicted again after each
// return, which bosun_shard_drain_timeouts_total shows. A member that cannot read its
// Lease cannot renew it either, and loses its objects when it expires.
//
// # Leases and passes
//
// A member has the right to run passes from a renewal of its Lease until
// Options.RenewDeadline after it, shorter than the Lease's duration; each
// renewal in time extends the right. When the right lapses, the member
// starts no pass, and the context of every pass that runs behind Wrap is
// cancelled, with cause ErrLeaseLost. The margin between the two,
// LeaseDuration - RenewDeadline (5s by default), is what a pass has to
// notice the cancellation and end before the sharder may give its object
// away, and what the clocks of the replicas may differ by: a member cut
// off from the API server stops working before its objects move. The
// guarantee assumes both. After a Lease expired it does not depend on how
// fast the sharder's label patches reach the API server (the closed
// tenure covers those on their way). A member that stops cleanly deletes
// its Lease, which then records no tenure: started again while patches
// of the sharder moving its objects were still on their way, its list
// could name some of them. It counts on a restart taking longer than
// those patches; with Options.Standby the member closes its Lease
// instead, and the closed tenure covers this too.
// A controller queue made by ControllerOptions cannot reach the context
// of the passes it hands out: there a lapse stops new passes only, and a
// running pass must bound its own work within the margin. So wire Wrap:
// around a controller-runtime reconciler, or, with bosun's Builder,
// through Builder.WrapReconciler(member.Wrap).
//
// After a lapse (and at the start) the member's cache may still show it
// objects the sharder gave away in the meantime: a watch that was cut
// reconnects on client-go's backoff, seconds after the API server can be
// reached again. So the renewal that ends a lapse starts a new right only
// once the member has listed, from the API server, the objects labelled
// for it. Under the new right, an object the cache shows as the member's
// gets its first pass at once if it was in that list, or if the sharder
// assigned it in the member's current tenure (the annotation
// tenure.shard.bosun.dev/<ring>, the acquire time of the member's Lease, which starts
// anew whenever the member renews a Lease that had expired: the sharder
// moves a member's objects without it only then, once it has closed the
// tenure they were assigned in, and the member leaves those out until the
// sharder labels them again; see Handover). Any other gets its
// first pass only once a read of it from the API server says it is the
// member's, and its request is dropped otherwise. From the renewal on,
// the member's objects leave it only through a drain it acknowledges, so
// what the list, the tenure and the reads say stays true. Requests of
// objects the cache does not hold pass: the pass finds nothing (package
// handlers' Set reads the API server before it takes an object for
// deleted). So the cost of a lapse is one list, and one read for each
// object of an earlier tenure that the list missed.
//
// # Wiring
//
// Make the Member before the manager: ConfigureCache limits the manager's
// cache of the kind to this member's objects (CacheOptions), so each
// replica holds its share, not the cluster (with Options.Standby, the
// objects it is the standby of as well). SetupWithManager adds the
// Lease, the drain and the sharder; the manager needs leader election for
// the sharder (every replica with the same LeaderElectionID). The ring's
// controllers run on every replica, with the member's Predicate on their
// For, and either ControllerOptions (a controller queue that hands out
// only what the member may work on, for bosun's builder and
// controller-runtime's alike) or Wrap around the reconciler, and, with
// Options.Standby, Takeovers among their sources.
//
// A member's cache holds only its share of the ring's kind, and every
// controller of the manager reads that cache: a controller that reads
// objects of a sharded kind it does not reconcile (a Database looking up
// its owner Role) sees only the member's share of them. Shard kinds whose
// objects refer to each other in rings of their own keyed by namespace
// (ByNamespace): with the same members, every ring gives a namespace to
// the same member.
//
// # Canaries
//
// A new version of an operator can run beside the current one in the same
// ring and take a chosen share of the objects first. Each member names its
// build in Options.Version (its Lease carries the label
// shard.bosun.dev/version). A Canary, written with Canary.Write or `bosun
// canary set`, names the new version and its share: a percent of the
// objects, chosen by a hash of their ring key into a hundred buckets that
// does not depend on the members (raising the percent only adds objects),
// and the objects a label selector matches. The sharder then hashes the
// objects the canary chooses onto the live members of its version only,
// and the rest onto the other members; when one side has no live member,
// the other takes its objects, so that every object has a member while any
// lives. Objects move between the versions as between any two members,
// through a drain, so no object is ever reconciled by two versions at
// once. Promoting the canary is a percent of 100; aborting is a percent of
// 0 and no selector, which hands every object back while the canary's
// replicas still run; the zero Canary deletes the record, after which
// every member takes an even share, whatever its version. Write the canary
// before the new version's replicas start: without one they take an even
// share at once.
//
// The record is a Lease named <ring>.canary in the members' namespace,
// labelled with the ring, so that the role that keeps the members' Leases
// reads it; its annotations canary.shard.bosun.dev/version, percent and
// selector may be edited by hand as well. A record that cannot be read
// (a percent that is no number, a selector that does not parse) is logged
// and ignored: the sharder keeps the rollout it had.
//
// To compare the versions, every member counts its passes (how many, how
// many failed, their total duration; a pass failed when it returned an
// error, or, behind ControllerOptions' queue, when the controller retried
// it with backoff) in the metrics bosun_shard_passes_total and
// bosun_shard_pass_duration_seconds, labelled with its version, and on its
// Lease at each renewal (the annotation shard.bosun.dev/passes), which
// `bosun canary status` sums by version without Prometheus.
//
// # Labels, annotations and metrics
//
// The sharder and the members write these; an operator may select objects
// by the first two.
//
//	| key                                 | on                | value                                          |
//	|-------------------------------------|-------------------|------------------------------------------------|
//	| shard.bosun.dev/<ring> (LabelPrefix) | an object, label  | the member that reconciles it                  |
//	| drain.shard.bosun.dev/<ring> (DrainPrefix) | an object, label | Unix seconds at which its drain began    |
//	| tenure.shard.bosun.dev/<ring>       | an object         | acquire time of its member's Lease (RFC 3339)  |
//	| standby.shard.bosun.dev/<ring>      | an object, label  | its standby (Options.Standby)                  |
//	| <ring>.in.shard.bosun.dev/<member>  | an object, label  | "true": member caches it (Options.Standby)     |
//	| shard.bosun.dev/closed              | a Lease           | the member's last tenure the sharder closed    |
//	| shard.bosun.dev/ring                | a Lease, label    | the ring's name                                |
//	| shard.bosun.dev/evicted             | a Lease           | when the sharder evicted the member (RFC 3339) |
//	| shard.bosun.dev/version             | a Lease, label    | the member's Options.Version                   |
//	| shard.bosun.dev/passes              | a Lease           | the member's passes, errors and seconds (JSON) |
//	| canary.shard.bosun.dev/version, percent, selector | the Lease <ring>.canary | the Canary in force |
//
// The metrics are registered with controller-runtime's metrics.Registry,
// which the manager serves:
//
//	| metric                           | type    | labels       | what                                              |
//	|----------------------------------|---------|--------------|---------------------------------------------------|
//	| bosun_shard_members              | gauge   | ring         | live members of a ring, as its sharder sees them  |
//	| bosun_shard_objects              | gauge   | ring, member | objects labelled for each member                  |
//	| bosun_shard_moves_total          | counter | ring, kind   | the sharder's changes of an object's member, by kind: "assign" (it had none), "drain" (a live member is asked to let it go), "takeover" (its member is gone) |
//	| bosun_shard_drains_total         | counter | ring, member | objects a member let go when asked                |
//	| bosun_shard_drain_timeouts_total | counter | ring, member | objects a member did not let go within Options.DrainTimeout, for which the sharder evicted it |
//	| bosun_shard_passes_total         | counter | ring, version, result | passes a member ran, by its version and "success" or "error" |
//	| bosun_shard_pass_duration_seconds | histogram | ring, version | duration of a member's passes, by its version |
//
// # Prior art
//
// The design follows timebertt/kubernetes-controller-sharding: a Lease per
// member of a ring, a consistent hash of each object onto the live members
// recorded in a label per ring, and a drain label through which a member
// acknowledges that it let an object go before the object moves. bosun's
// sharder runs inside the operator's leader rather than as a separate
// deployment, and adds the pass cancellation and eviction above.
//
// Maturity: experimental. Its handover rests on Lease timing, not yet proven in production.
package shard
