// Package shard lets more than one active replica of an operator reconcile
// the objects of one kind, each a disjoint share, coordinated only through
// the Kubernetes API.
//
// The replicas of a ring are its members: each holds a Lease (labelled
// with the ring's name) in a namespace and renews it. One replica, the
// winner of the manager's leader election, also runs the sharder: it
// hashes every object onto a consistent-hash ring of the live members
// (Ring) and labels the object with its member (LabelPrefix + ring). Each
// member's cache holds only the objects labelled for it (ConfigureCache),
// so the heap of a replica grows with its share, not with the cluster.
//
// An object moves between two live members through a drain: the sharder
// adds the drain label (DrainPrefix + ring); the member stops starting
// passes of the object, waits for the one running to end, and removes
// both labels; only then does the sharder label it for the new member. No
// object is reconciled by two members at once. A member that stops
// cleanly deletes its Lease, and its objects move at once; one that dies
// keeps them until its Lease expires (Options.LeaseDuration), then the
// sharder gives them to the live members directly. A member whose own
// Lease could not be renewed in time starts no pass (Member.Wrap), so it
// never works on objects the sharder may be giving away.
//
// Controllers of a ring run on every replica, not only on the leader: give
// them controller.Options{NeedLeaderElection: ptr.To(false)}, with the
// member's Predicate and Wrap (see Member).
package shard
