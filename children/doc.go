// Package children makes the children of an object match a desired set:
// the ConfigMaps, Deployments, Services and other objects an operator
// derives from its custom resource.
//
// # The step
//
// NewStep returns a bosun step built from a DesiredFunc, which returns the
// children the object should have, and the Kinds they may be of. Every pass
// the step:
//
//   - stamps each desired child with the set's labels (LabelSet, the set's
//     name, and LabelOwner, the parent's UID), a controller owner reference
//     to the parent, and the annotation bosun.dev/applied-hash, a hash of
//     the desired object;
//   - compares it with the live child in the cache and applies it with
//     server-side apply (the step's field owner, forcing ownership) only
//     when it is missing, its hash differs, or a field the desired object
//     sets has another value (drift, read with the child's managedFields);
//     the apply of a missing child can only create it, and that of a live
//     one carries its UID, so that it lands on no other object; a kind
//     with a MaxUnavailable has its changes rolled out a few children at a
//     time (see Rolling updates);
//   - deletes (prunes) the members of the set, of every declared kind, that
//     are no longer desired, except those annotated AnnotationPrune "false"
//     and those WithAdoption took over from someone else, which it gives
//     back (it gives up the fields it applied) rather than deletes;
//   - applies the other children when an object it may not write holds
//     the name of one (ChildExists, ChildConflict), counts that one as
//     not ready in its kind's condition, and reports it;
//   - sets one condition per kind, "<Kind>Ready" by default, from the kind's
//     Readiness check, which the engine summarises into Ready.
//
// A parent whose children are all up to date costs reads from the cache and
// no write at all. A pass that runs before the cache shows the step's own
// latest applies and deletes (for five seconds) does not repeat them: it
// looks again a second later. Past those five seconds, a child the cache still
// shows differing from what the step applied is read from the API server
// before it is applied again, so that a cache that missed the apply's watch
// event until its next relist costs a read, not a write. Plan returns what a pass would do (create,
// update, delete) without doing it: a dry run.
//
// Children live in the parent's namespace and are garbage-collected with it
// through their owner references. NewUnownedStep is the opt-in for
// children in other namespaces or cluster-scoped ones: they carry no owner
// reference (Kubernetes allows none across namespaces), the parent's key is
// recorded in the annotations bosun.dev/owner-namespace and
// bosun.dev/owner-name, and the step deletes them in the Cleanup phase,
// so the reconciler needs a finalizer.
//
// # What the set may touch
//
// The step only ever writes and deletes objects the set created. A desired
// child whose name is taken by an object with no controller and no set
// label is left exactly as it is: the kind's condition and Ready are False
// with the reason ChildExists, naming the object, and the step retries with
// backoff. Before it creates a child the cache does not show, the step
// looks for it on the API server, so an object created a moment ago is not
// missed; and the apply that creates it carries a resourceVersion no
// object has, so that the API server refuses it (409 Conflict) rather than
// apply it over an object another team made between that read and the
// write: the step then reads that object and reports it like one it had
// found. The apply of a live child carries the child's UID, so an object
// made under the name since the pass read the child is not written
// either. WithAdoption takes such objects over instead (applied over,
// labelled, owned), and gives them back when they are no longer desired. Before it puts its owner reference on a child that
// lacks it, the step reads the parent from the API server, and adopts
// nothing for a parent being deleted or gone: the garbage collector takes
// the references off the children of a parent deleted with orphan
// propagation, and may do so before the cache shows the delete. An object controlled by another owner, or labelled for
// another set or parent, is never taken over (ChildConflict).
//
// The step watches what blocks a child (ChildExists,
// ChildConflict): a change of that object, its release by its
// controller or its deletion brings a pass of the parent at once, however
// long the parent's backoff has grown, and a ChildConflict, which is not
// retried, heals too. Under CacheSetsOnly the cache does not hold a
// blocking object without the set label, and the step looks it up on the
// API server every few seconds instead, one metadata read per blocking
// object.
//
// Pruning and the unowned step's Cleanup delete only objects carrying both
// set labels with this parent's UID and no other controller, so deleting
// the parent never
// deletes an object it did not create; the unowned step's Cleanup lists
// them from the API server, not the cache, and keeps the finalizer until
// none is left. Condition messages name at most a few children and count
// the rest. A panic of the desired-set function (or of Generating's
// generate) is reported like an error, Ready False with reason Panic, and
// that pass applies and prunes nothing.
//
// # Comparing desired and live (drift)
//
// A desired child is up to date when the live one carries the same hash and
// holds every value the desired one sets. Values are compared after
// conversion to unstructured form; each element of a desired list must be
// in the live list, in any order, since server-side apply keeps the
// elements other field managers added; fields the desired child does not
// set are left to whoever set them.
//
// A value at its zero value (0, false, "", an empty list or map) is judged
// by the child's managedFields: the fields the step's field manager owns
// through its applies. Server-side apply takes a field from its owner when
// another manager changes it, and from every manager when it is removed,
// so a zero value the step still owns is in place (whatever default the
// API server gave it), and one it no longer owns must be in the live child
// as it is: an int set to 0 and changed to 3, a label set to "" and
// changed or removed, a false bool set true are all put back. An empty
// list or map drifts only when another manager replaced it whole; the
// elements others add to a merged list stay. A child without an Apply
// entry of the step's manager in managedFields (one applied by an older
// bosun, read through a cache that strips managedFields, or from a fake
// client) is compared as before: a zero value counts as unset, since typed
// Go objects cannot tell an unset field from a zero one. Typed children
// are applied as their unstructured conversion, which leaves out omitempty
// fields at their zero value: build a child as *unstructured.Unstructured,
// or use a pointer field, to apply a zero value explicitly.
//
// # Readiness
//
// The default check of a kind, DefaultReadiness, is cli-utils' kstatus: a
// child is ready when kstatus computes Current for it, and otherwise the
// kind's condition on the parent names it with kstatus's message, such as
// "web: Available: 1/3" or "web: Deployment generation is 3, but latest
// observed generation is 2". kstatus knows Deployments, StatefulSets,
// DaemonSets, ReplicaSets, Jobs, Pods, PersistentVolumeClaims, Services,
// PodDisruptionBudgets and CustomResourceDefinitions, and judges every kind
// by its status.observedGeneration and its Reconciling and Stalled
// conditions; a child being deleted is not ready. The default check departs
// from kstatus where a parent waits for more: a Job until it completes, a
// failed Pod for good, a Service of type LoadBalancer until it has an
// address, an OnDelete StatefulSet until its replicas are ready, and a
// custom resource whose status has conditions until its Ready condition is
// True and not for an older generation (by the condition's
// observedGeneration, else status.observedGeneration), its message then
// naming the reason and message of its Ready. A custom resource without
// status conditions, and a built-in kind kstatus has no rule for
// (HorizontalPodAutoscaler, Ingress...), is ready when it exists.
// Kind.Readiness replaces the check of one kind (Present, for one, makes a
// custom resource ready as soon as it exists). A child whose apply finds an
// object of the set's other than the one the pass read (made by another
// replica, or changed since) is left for the next pass, a second later;
// until then, if it differs from the desired form, it is not ready, named
// as "changed since the pass read it" (TestChildChangedSinceReadIsNotReady).
//
// # Rolling updates
//
// A change of the parent that changes many children of a kind (one
// Deployment per zone, N workers) reaches them all in one pass by
// default. Kind.MaxUnavailable paces it: a pass updates a ready child
// only while fewer than MaxUnavailable children of the kind are not
// ready, counting the ones it updates, in the order the DesiredFunc
// returns them, and holds the rest back (Plan.Held). The events of the
// updated children bring the next passes; once they are ready by the
// kind's Readiness, the next ones go. Meanwhile the kind's condition,
// and Ready, are False with the reason RollingUpdate and a message such as
// "2 of 5 Deployment updated, 2 waiting, 1 in progress: zone-c: Available:
// 0/2"; Ready is True once every child is updated and ready. A child that
// never becomes ready holds the roll-out there, and the message names it
// with what its readiness check says (for a Deployment past its progress
// deadline, "Progress deadline exceeded" and the message of its
// Progressing condition).
//
// The budget counts every child of the kind that is not ready, whatever
// the cause: a roll-out takes no child down while MaxUnavailable others
// are down. Some changes are not held back, since holding them cannot
// keep anything available: creates (a new child takes nothing away, and
// the first pass of a parent makes all its children at once; until ready
// they take up the budget), prunes (the parent no longer wants the
// child), the update of a child that is not ready (it serves nothing now,
// and the fix of a change that broke it must reach it first) and the
// repair of drift, a child changed behind the step's back since the step
// applied it (told from a change of the parent by the hash annotation):
// it is put back at once as always, and takes up the budget for the rest
// of the pass, since the repair may take it down. A child changed by hand
// before its turn in a roll-out keeps the edit until its turn. The
// roll-out moves on the events of the children: predicates
// (WithPredicates) must let their status changes through. A child the
// cache shows as it was before the step's latest apply of it (the parent
// changed again before the cache caught up) is read from the API server
// before it is counted. The roll-out is only as careful as the kind's
// Readiness: a check that cannot tell the status of
// an older spec from that of the current one (a custom resource whose
// controller sets no observedGeneration) lets it run ahead. It costs no
// write beyond those of the changes themselves, one apply per changed
// child and a status write of the parent when the progress shown changes,
// and a converged set still costs none.
//
// # Watches
//
// A Step wires its own watches: bosun.Builder.Complete calls its
// SetupWithBuilder, which registers the declared kinds, Owns for owned
// children and a handler that maps the owner annotations back to the parent
// for unowned ones, a handler per kind for the objects that block a
// child, and a watch of the parents' kind for their deletion.
// WithPredicates filters the events of the declared kinds.
//
// # Memory
//
// A step remembers, per parent, the children it applied and deleted in the
// last five seconds (so that a pass over a cache that lags behind does not
// write them again), the hash of each child it applied until the cache
// shows it (for ten minutes at most), and the objects that block its
// children. It forgets all of a parent when the parent is deleted or
// leaves the manager's cache (a cache that holds a share of the parents,
// by a label selector as with sharding, sees a parent that leaves the
// share as deleted), and the deletes once they are older than five
// seconds. A parent whose Go type does not tell its kind (unstructured) is not watched for that: its writes go
// with time, and what blocks its children with its next pass, if any.
// Within those five seconds, a child the cache shows missing, or as it
// was before the step's apply, is read from the API server all the same:
// one deleted since is made again at once, and never reported ready.
// A pass that the deletion of a child (or of any other object) brought
// reads the parent from the API server before it makes a missing child
// again, and makes none when the parent is gone: the garbage collector
// deletes the children of a deleted parent, and their delete events may
// come before the parent's, while the cache still holds it.
//
// # Caching
//
// The step reads children from the manager's cache. tuning.LeanCache keeps
// their managedFields, which drift needs (the step's own Apply entries and
// the entries of the managers that may have replaced an empty list or
// map), but for the entries of subresources such as status, and drops
// those of every other object. CacheSetsOnly limits the cache of the declared kinds to the
// children of sets, so that an operator does not cache every ConfigMap or
// Secret of the cluster; objects that are not children yet are read from
// the API server. A pass reads each desired child that is neither a member
// of the set nor in the cache from the API server before it makes it,
// except where eight or more of one kind that are not members share a
// name (one object kept in many namespaces, by a cluster-scoped parent or
// NewUnownedStep): one list of the metadata of that kind's objects of that
// name, in every namespace, looks them all up
// (TestUnseenChildrenLookedUpInOneList). An operator refused that list
// (allowed in some namespaces only) reads them one by one.
//
// Kind.MetadataOnly goes further for kinds whose children are large and
// that the operator writes but never reads back, such as ConfigMaps and
// Secrets of data: the step watches and caches them as
// metav1.PartialObjectMetadata, which holds no data, and asks for the
// answer of each apply as metadata only, so that the API server does not
// send the data back (TestMetadataOnlyApplyAnswer). Drift is then told by
// the hash annotation and by managedFields alone: a field the desired
// child sets outside metadata is in place while the step's field manager
// owns it, since server-side apply takes a field from its owner when
// another manager changes it and from every manager when it is removed;
// one it no longer owns is applied again (metadata is compared as for any
// kind). An atomic list is owned whole; in a merged list, each element the
// child sets must have an entry of its own, and each of its fields must be
// owned (an element that leaves a key field to its default, such as a port
// without its protocol, takes no entry another element matches exactly).
// A Secret's stringData is applied as data, as the API server stores it
// (a value that is not a string is refused, InvalidChildren); a Secret
// whose data another manager wrote through stringData (which leaves the
// step owning a data field it no longer holds) is read whole from the API
// server and compared by value, once for each of its versions. The kind's readiness sees the metadata only (Present
// by default; MaxUnavailable is refused without a Readiness that reads
// what the metadata tells). Without managedFields in the cache (a DefaultTransform such as
// cache.TransformStripManagedFields; tuning.LeanCache keeps the children's)
// nothing tells drift, and each pass applies the children again. The
// cache's options for the kind (CacheSetsOnly, ByObject) are shared by its
// metadata and whole forms, which controller-runtime keys by group,
// version and kind: an operator that reads the same kind whole elsewhere
// (the sources of examples/trust) needs a cache of its own for it.
//
// # Generating reconcilers
//
// Generating builds a whole reconciler from one function that returns the
// children of an object and may set its status, in the manner of a
// generating handler: the status edits of a call that fails are discarded.
//
// # Labels, annotations, reasons and events
//
// The step writes these on children; a user writes only the annotation
// bosun.dev/prune (AnnotationPrune) and may select children by the two
// labels (LabelSet, LabelOwner):
//
//	| key                       | kind       | value                                                    |
//	|---------------------------|------------|----------------------------------------------------------|
//	| bosun.dev/set             | label      | the set's name, the step's (LabelSet)                    |
//	| bosun.dev/owner           | label      | the parent's UID (LabelOwner)                            |
//	| bosun.dev/applied-hash    | annotation | the hash of the desired child last applied               |
//	| bosun.dev/prune           | annotation | "false" keeps a child no longer desired (AnnotationPrune) |
//	| bosun.dev/owner-namespace | annotation | the parent's namespace, on an unowned child              |
//	| bosun.dev/owner-name      | annotation | the parent's name, on an unowned child                   |
//
// The reasons of the kinds' conditions (and of Ready, which summarises
// them), and of the event a pass records, each a conditions.Reason
// constant of this package:
//
//	| reason          | constant              | when                                                                      |
//	|-----------------|-----------------------|---------------------------------------------------------------------------|
//	| Ready           | ReasonReady           | every child of the kind is ready (the kind's condition is True)           |
//	| NotReady        | ReasonNotReady        | a child of the kind is missing or not ready                               |
//	| InvalidChildren | ReasonInvalidChildren | the desired children cannot be applied as they are: an undeclared kind, a duplicate, a namespace the step may not use |
//	| ChildConflict   | ReasonChildConflict   | a desired child is controlled by another object, or labelled for another set or parent; not retried until it changes |
//	| ChildExists     | ReasonChildExists     | the name of a desired child is taken by an object the set did not create; retried, and healed when that object goes |
//	| RollingUpdate   | ReasonRollingUpdate   | changes of children of the kind wait for others to be ready (Kind.MaxUnavailable) |
//	| ApplyFailed     | ReasonApplyFailed     | an apply or delete of a child failed                                      |
//	| ChildrenChanged | ReasonChildrenChanged | the event (Normal, action Apply) of a pass that created, updated or deleted children |
//
// # Permissions
//
// The controller needs get, list, watch, create, patch and delete on every
// declared kind. The owner references of owned children set
// blockOwnerDeletion, so a foreground delete of the parent waits for them;
// an API server with the OwnerReferencesPermissionEnforcement admission
// plugin then also asks for update on the parent's finalizers
// subresource, for example
//
//	// +kubebuilder:rbac:groups=example.com,resources=widgets/finalizers,verbs=update
//
// Maturity: stable. Its apply, pruning and readiness are proven under envtest
// suites and the fault battery (the site example runs on it).
package children
