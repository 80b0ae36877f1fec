// Package shard lets more than one active replica of an operator reconcile
// the objects of one kind, each a disjoint share, coordinated only through
// the Kubernetes API.
//
// # Members
//
// The replicas of a ring are its members. Each holds a Lease named
// LeaseName(ring, identity) in a namespace, labelled LabelRing=ring, and
// renews it every Options.RenewPeriod. A member is alive while its Lease
// is (Alive). A member that stops cleanly waits for its running passes,
// then deletes its Lease, so that its objects move at once; one that
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
// adds the label DrainPrefix+ring=true; the old member starts no more
// passes of the object, waits for the one running to end, and removes
// both labels; only then does the sharder label it for the new member. So
// no object is reconciled by two members at once. An object whose member
// is gone (no Lease, or an expired one) is relabelled directly.
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
// A member starts no pass unless it renewed its Lease within
// Options.RenewDeadline, shorter than the Lease's duration: a member cut
// off from the API server stops working before the sharder may give its
// objects away. The guarantee assumes that the clocks of the replicas
// differ by less than LeaseDuration - RenewDeadline, and that a pass
// takes less than that margin once the member has lost contact.
//
// # Wiring
//
// Make the Member before the manager: ConfigureCache limits the manager's
// cache of the kind to this member's objects (CacheOptions), so each
// replica holds its share, not the cluster. SetupWithManager adds the
// Lease, the drain and the sharder; the manager needs leader election for
// the sharder (every replica with the same LeaderElectionID). The ring's
// controllers run on every replica, with the member's Predicate on their
// For, and either ControllerOptions (a controller queue that hands out
// only what the member may work on, for bosun's builder and
// controller-runtime's alike) or Wrap around the reconciler.
//
// Metrics (MetricMembers, MetricObjects, MetricMoves, MetricDrains) are
// registered with controller-runtime's metrics.Registry.
package shard
