// Package managed is the bosun step for external resources: things outside
// Kubernetes (a cloud bucket, a database role) that an object describes and
// an operator creates, keeps in line with the spec and deletes.
//
// # The contract
//
// An operator implements a Connector, which turns an object into an ExternalClient,
// and the ExternalClient's four methods: Observe (does the resource exist, is it up
// to date, is it available, what are its connection details), Create,
// Update and Delete. The obligations of each method are listed on ExternalClient:
// idempotent, Observe changes nothing outside, Delete of a missing resource
// succeeds. ConnectorFunc and ExternalClientFuncs adapt functions; NopExternalClient and
// NopConnector do nothing.
//
// # The step
//
// NewStep returns a Step to put in a bosun.Reconciler (which then needs a
// Finalizer). Every pass observes (connects and calls Observe, or takes
// what a batch observed; see Pacing the polls), then:
//
//   - resource missing: creates it, guarded against leaks (below);
//   - resource out of date: updates it;
//   - otherwise: nothing, and looks again after the poll interval.
//
// A pass is a pipeline: pace (pace.go: whether and how the pass observes,
// batch.go for batch rounds), observe (observe.go: the policies, Connect,
// a long operation under way, Observe), decide (decide.go: a pure function of
// what was observed, the annotations and the policies to one action),
// act (act.go for Do, cleanup.go for Cleanup) and record (record.go: the
// conditions and when to look again). A reader follows one pass through
// those files.
//
// When the object is deleted, Cleanup deletes the resource and keeps the
// finalizer until Observe no longer finds it. The deletion policy orphan
// (WithDeletionPolicy, or annotation AnnotationDeletionPolicy) leaves it in
// place, and so does a resource that is not the object's (below).
//
// # Deletion order
//
// By default the step deletes the external resource as soon as the object
// is being deleted. Some resources must outlive whatever else holds the
// object: a database another controller is still draining, an object
// deleted in the foreground whose dependents are still going. With the
// deletion order "last" (WithDeletionOrder(DeletionOrderLast), or
// annotation AnnotationDeletionOrder on one object, "immediate" or
// "last"), Cleanup waits while the object holds any finalizer but the
// engine's own: it calls nothing outside, sets Synced (and so Ready) False
// with WaitingForFinalizers and a message listing the finalizers,
// and goes on when the removal of the last other finalizer brings the next
// pass (or at the next poll). Then it deletes as usual. Orphaned
// resources, and objects with nothing named, are let go at once.
//
// Several controllers may delete last on one object (each with its own
// finalizer, each with a managed step deleting last): each would see the
// others' finalizers and wait for ever. While other finalizers hold the
// object, such a step records its controller's name
// (bosun.Pass.Controller) in bosun.dev/deleting-last, and counts the
// finalizers of the controllers recorded there as its peers', not as
// finalizers to wait for: once only they are left, all of them delete at
// once, and each removes its name with the release of its finalizer. The
// count assumes one finalizer per controller, as the engine has. Two steps
// of one reconciler need none of this: the engine holds the object with
// one finalizer and runs their Cleanups one after the other.
//
// # Management policies
//
// Four annotations, all under bosun.dev/, say how far bosun may act. Their
// values are lower case, words joined by hyphens, and are read without
// regard to case; a value that is not known is refused with reason
// InvalidPolicy, with a message naming the annotation, and nothing is done.
//
//	annotation                      scope               values
//	bosun.dev/reconcile-policy      every step (engine) manage (default), skip, detach-on-delete
//	bosun.dev/management-policies   the managed step    observe, create, update, delete, late-initialize, * (default)
//	bosun.dev/deletion-policy       the managed step    delete (default), orphan
//	bosun.dev/deletion-order        the managed step    immediate (default), last
//
// The reconcile policy decides whether the steps run at all: skip pauses
// the object (only Observers run), detach-on-delete lets the object go
// without any Cleanup. The management and deletion policies narrow what
// the managed step does to the external resource when the steps do run:
// orphan leaves the resource in place when the object is deleted, where
// detach-on-delete leaves everything every step made. The reconcile policy
// may also come from the object's Namespace; the other three are set per
// object or as the step's options.
//
// The management policies (observe, create, update, delete,
// late-initialize, or "*" for all) limit what the step may do. They are the
// step's option WithManagementPolicies, overridden per object by annotation
// AnnotationManagementPolicies. Observe-only ("observe") is the usual
// restricted set: the step reports the resource and never creates, updates
// or deletes it, nor late-initialises the spec. The engine's skip reconcile
// policy goes further and writes nothing but the status.
//
// Under observe-only policies (none of Create, Update and Delete),
// observing is the whole job, as in Crossplane (and observing a resource
// made outside the operator is adoption, which must be granted; see
// Adoption and conflicts): a pass that observes the
// resource is a success, Synced True with ReconcileSuccess (its
// message says when the resource differs from the spec and may not be
// updated), and one that finds no resource is not, Synced and Available
// False with ExternalNotFound and a message naming the policies. Only
// the skip policy pauses the object: Synced False with
// conditions.ReasonReconcilePaused and a message naming the policy;
// Available still reports what Observe found, and the Ready summary skips
// a paused condition, so Ready is True when the observed resource is
// available and False (Unavailable) when it is missing or not
// ready.
//
// # Conditions
//
// The step owns two conditions (types configurable with
// WithConditionTypes): Synced, True with ReconcileSuccess when the
// last pass did what was needed, False with conditions.ReasonReconcilePaused
// under the skip reconcile policy, False with ExternalNotFound when
// the resource is missing and may not be created, False with
// WaitingForFinalizers while a deletion waits for other finalizers
// (above), False with ReasonAdoptionNotGranted while an unmarked resource
// it did not create holds the name and adoption is not granted, False
// with Updating (and the
// Observation's Diff in the message) from the pass that calls Update, for
// a spec change or drift, until a pass observes the resource up to date,
// and False with the reason of the error otherwise (CreateFailed, InvalidSpec, CreateIncomplete,
// ExternalResourceConflict, the engine's SaveFailed through WriteFailed, ...);
// and Available, True with Available, or False with Creating,
// Deleting, Unavailable, ExternalNotFound or
// CredentialsMissing. The engine derives
// Ready from them, so Ready is False with the same reasons while the
// resource is not available, and True with conditions.ReasonSucceeded when
// it is; while an update is applied Ready is False with Updating,
// and Available stays True when the resource is usable meanwhile:
// Available means the resource exists and can be used, whatever the step
// is doing to it. Every condition observes the object's generation.
//
// Conditions only inform: the step never reads them to decide what to do
// to the resource. Pacing reads Synced and Available to tell which objects
// are in line (see Pacing the polls), and the most a hand-edited condition
// can do there is put an observation off by up to one poll interval, or
// let a batch's observation stand for the pass's own. What the step decides
// from is kept where a hand-edited condition cannot reach it: the
// annotations below (the leak guard, the delete fence,
// bosun.dev/external-first-available, which tells Creating from
// Unavailable), status.observedGeneration (drift, counted in
// bosun_managed_drift_corrections_total, is a difference found in a generation the
// engine has already been through), what Observe reports, and the
// step's memory of the calls it made lately (see Memory).
//
// # External names
//
// The name of the external resource is kept in annotation
// AnnotationExternalName. By default it is "<namespace>.<name>" for a
// namespaced object and the bare name for a cluster-scoped one
// (NameFromNamespacedName): a namespace cannot hold a dot, so objects of
// the same name in two namespaces never share a resource. NameFromUID gives
// a prefix and the object's UID; NameFromMetadata the bare name, which is
// safe only when one namespace holds the objects; WithProviderNames lets
// Create record the name the external system chose. A name the step chose
// never changes. A name the system assigned is replaced only when its
// resource is gone: after the creation grace period the step creates one
// replacement and records its name, so a resource deleted outside the
// operator is made again once, not once per grace period.
//
// A name the step chooses is committed only with the pending mark of a
// create (below), or, under observe-only policies, once the resource is
// found. So a name in the annotation without AnnotationCreatePending was
// set by hand, and asks for adoption (below).
//
// # Several managed steps on one object
//
// The step keeps its records on the object: the external name, the marks
// of the leak guard and of the delete fence, the first-available mark and
// a long operation, all annotations under bosun.dev/. An object may have
// several managed steps, as two steps of one reconciler or the steps of two
// controllers, each with a resource of its own; each step but one then
// needs a name (WithName), condition types (WithConditionTypes) and an
// annotation prefix (WithAnnotationPrefix) of its own. Steps that share
// the prefix take each other's records for their own: one that finds
// another's create recorded waits out the creation grace period before it
// creates its own resource, and polls another's long operation. Two steps
// whose resources live in one external system also need names of their
// own (WithExternalName): both mark their resources with the object's
// Identity, so the name is all that tells the two apart. Each step that
// publishes connection details needs a Secret of its own
// (WithConnectionSecret): a Secret one step publishes, another refuses to
// write, with Synced False and ReasonConnectionSecretFailed. The policy
// annotations (below) stay under bosun.dev/ and apply to every step. The
// Connector and ExternalClient of a step with a prefix need no change:
// during their calls the object carries the step's name under
// AnnotationExternalName, where ExternalName and SetExternalName find it;
// outside them ExternalName reads the default step's name, and the
// method Step.ExternalName the step's own.
// (TestTwoStepsKeepRecordsApart, TestTwoDeleteLastStepsBothDelete,
// TestPrefixConnectorSeesItsOwnName, TestPrefixStepsSharingASecretAreRefused,
// TestPrefixStepsOfOneSystemNeedNamesOfTheirOwn.)
//
// # Adoption and conflicts
//
// An external name may already be taken: by another object's resource (two
// tenants' objects under NameFromMetadata, an object made again after its
// predecessor was orphaned) or by a resource made outside the operator. The
// step manages a resource it finds only when it is the object's:
//
//   - Observe reports the owner mark (Observation.Owner) the ExternalClient keeps on
//     the resource. A resource marked with the object's identity (Identity,
//     the UID) is the object's; one marked with another identity never is,
//     whatever the annotations say.
//   - A resource without a mark is the object's when the step created it
//     under the name it chose for the object (a success is its last
//     recorded create outcome, or a create is pending: the crash window
//     below).
//   - Any other resource without a mark is taken over (adopted) only where
//     adoption is granted, and then when the user asked for it by setting
//     AnnotationExternalName by hand, when the step created it under such a
//     name, or when the policies only observe (a name recorded then counts
//     as asked for when the object later switches to full management).
//
// Adoption is granted by an administrator, never by the object's users:
// annotation AnnotationAdoptExternal, "true", on the object's Namespace,
// which users who may only edit objects in it cannot set; or, for every
// object of the step, the operator's option WithAdoptionGranted (for a
// cluster-scoped kind, the only grant). The reason is that the object's
// annotations, the name and the step's record of its creates alike, are
// written by whoever may edit the object: without the grant a user could
// name any resource of the external system (a role made by hand, a
// database of another team's) and have the step take it over, lock out
// its owner with new credentials published to the user, and delete it
// with the object. With the grant withheld the record reaches only the
// name the step would choose for the object itself, and a resource made
// outside the operator is never managed, observed or deleted: Synced and
// Ready are False with ReasonAdoptionNotGranted and a message naming the
// external name and the Namespace to grant, nothing is taken from the
// resource, and the step looks again at the poll interval, so that a
// grant takes effect within one. With names the external system assigns
// (WithProviderNames) the step cannot tell a recorded name from one set by
// hand: an unmarked resource then needs the grant too, so such an
// ExternalClient should keep owner marks.
//
// Any other resource under the name is left alone: no Update, no Delete, no
// late initialisation from it, none of its connection details published.
// Synced and Ready are False with ExternalResourceConflict and a message
// naming the external name (never a secret), retried with backoff; when the
// object is deleted the step releases it without deleting the resource. To
// resolve a conflict, give the object another external name, or remove the
// other resource; to take over an unmarked resource where adoption is
// granted, set the annotation to its name. An adopted resource gets the object's mark from the ExternalClient's
// Update (Observe reports UpToDate false while the mark is not the
// object's). A resource marked for another object, even one that no longer
// exists, is never taken over: clear its mark in the external system first.
// Operators that serve several tenants should keep the default names,
// which keep each namespace's resources apart, and grant adoption only to
// the namespaces whose users may take over resources made outside.
//
// # The leak guard
//
// A create that happens twice leaks a resource; one whose result is lost
// leaks it too. Before calling Create the step commits
// AnnotationCreatePending (and the external name), guarded by the object's
// resourceVersion, so a pass working on stale data cannot create. Right
// after Create it publishes the connection details Create returned, then
// records bosun.dev/external-create-succeeded or bosun.dev/external-create-failed, retrying a
// few times. A later pass that finds the resource missing and pending
// newer than both outcomes knows a create may have happened unrecorded:
// with deterministic names it waits out the creation grace period and then
// trusts Observe (a resource that is there is the object's, marked or not,
// and adopted, under a name the step chose; under one set by hand, where
// adoption is granted); with names the external system assigns it does the same
// when the name was saved, and otherwise stops with
// Synced False, reason CreateIncomplete, and a message saying what
// to check and which annotation to remove. A name the external system
// assigned is saved on its own right after Create, before the other
// writes, since it is all that finds the resource: a stop or a failed
// write after it costs nothing but the wait. For the creation grace period
// after a recorded create (Timing.CreationGrace, 30s by default), "not
// found" is taken for an eventually consistent API and the step looks
// again shortly instead of creating a second time.
//
// A Create that fails with an error after which nobody can tell whether it
// took effect (a timeout, a reset connection, an unexpected end of the
// answer, a cancelled context, or an error the ExternalClient marks with
// OutcomeUnknown; see ErrOutcomeUnknown) is not recorded as failed: the
// pending mark stays the newest, and the guard treats it as above. Only a
// Create that surely failed records bosun.dev/external-create-failed, after which a
// resource found under the name is not taken for the object's. When that
// record fails too, the process remembers the failure in its stead (see
// Memory, below) and the object shows the create's error, CreateFailed,
// with the failed record named in the message; the annotation is then
// left out of the engine's final write, which would fail the same way and
// report its own failure instead.
//
// The two writes after Create, the connection Secret and the outcome, use a
// context that does not end with the reconcile's (a manager stopping for a
// rollout), bounded by Timing.Record (30s by default). Publishing
// first means that a stop between them is the crash window above, with the
// Secret complete.
//
// # Long operations
//
// Some external systems take minutes to create or change a resource and
// answer at once with the token of an operation to ask about later. Create
// and Update report it in Creation.Operation and UpdateResult.Operation,
// and the ExternalClient implements OperationPoller. The step records the
// operation in bosun.dev/external-operation ("create:<token>" or
// "update:<token>") before the pass ends: with the outcome of the create
// (the durable write after Create, above), or at once after Update, with
// the same retries. From then on each pass, after the short interval,
// calls PollOperation instead of observing, creating or updating; while
// it runs, a create shows Available (and Ready) False with Creating,
// an update Synced (and Ready) False with Updating. The token is on
// the object, not in the process: an operator restarted or replaced by
// another replica polls the same operation and never starts a second
// one. When it ends the step removes the annotation, records the outcome
// in the change log, publishes the details it returned, and observes as
// usual; a failed create also records bosun.dev/external-create-failed and is
// retried with backoff like a failed Create. A token lost in the crash
// window of a create is not polled: the leak guard then trusts Observe,
// which reports the resource that is still coming up as not available.
//
// # Credential repair
//
// Some details only Create returns, such as a generated password. An ExternalClient
// that can set new ones implements CredentialRepairer. When the resource is
// the object's, the policies allow Update and the connection Secret (as the
// API server has it, not only the cache) lacks a key CredentialKeys names,
// because a user deleted the Secret or the process stopped between Create
// and publishing, the step calls RepairCredentials and publishes what it
// returns. Until that works, Available is False with
// CredentialsMissing and Synced says why, so Ready stays False.
//
// # The delete fence
//
// Before each Delete the step commits bosun.dev/external-delete-pending, guarded by
// the resourceVersion the pass read. A pass working on a stale copy of the
// object, such as an old, deleting object whose cache entry lingers after
// a new object of the same name (and so the same external name) was made,
// fails that write with Conflict or NotFound and deletes nothing; the
// engine requeues quietly. Together with the owner mark, which keeps the
// step from deleting a resource marked for another object, this keeps one
// object's Cleanup from removing another object's resource.
//
// The fence's time is also when Delete was last asked for. External
// systems take seconds or minutes to delete, and each write of the fence
// brings a pass at once (its watch event): so while the resource goes,
// Delete, and the fence before it, come at most once per short interval,
// and the passes in between only observe. A Delete that fails is retried
// after the short interval doubled for each further failure (at most five
// minutes), and the passes in between report its error again, which
// writes nothing.
//
// # Deadlines
//
// Every call of the Connector and the ExternalClient (Connect, Observe, Create,
// Update, Delete, RepairCredentials, Disconnect) gets a context deadline,
// Timing.Call (one minute by default), so one endpoint that never
// answers cannot hold a worker of the controller. A call that runs out of
// time fails the pass: Synced and Ready False with the reason of the
// operation (ObserveFailed, ...) and a message saying it timed out
// after how long; controller-runtime retries it with backoff. A Create that
// times out has an unknown outcome (above). The ExternalClient must return when its
// context ends.
//
// # When to look again
//
// An error is returned to the engine, so controller-runtime retries with
// exponential backoff; a terminal one (InvalidSpec) waits for a change of
// the object. A resource that is being created, updated or deleted is
// looked at after the short interval (Timing.Short). An available,
// up-to-date one after the poll interval: one minute by default
// (Timing.Poll), overridden per object by AnnotationPollInterval,
// never below Timing.MinPoll, and spread by ±10%. An
// annotation that does not parse as a positive Go duration is ignored. A
// change of the object brings a pass at once, through the watch. After a
// start of the process, the first observation of a resource already in
// line is put off to a moment within the poll interval (see Pacing the
// polls).
//
// The step's own writes to the object bring passes at once too, so none
// of its calls that change the external system is repeated on the
// strength of such a pass. Update of one generation, while the resource
// does not show it yet, and Delete (see the delete fence) are called at
// most once per short interval. After a failure of Create, Update, Delete
// or RepairCredentials the next call waits the short interval, doubled
// for each further failure, at most five minutes (a terminal failure
// waits for a new generation), and the passes in between return the same
// error, which changes nothing on the object, so that controller-runtime's
// backoff applies.
//
// # Pacing the polls
//
// Each pass of Do first decides whether and how it observes (pace.go).
// An object is settled when the step's last pass found its resource in
// line with the object's current generation and available, with nothing
// under way: Synced True with ReconcileSuccess and Available True, both
// for the current generation; status.observedGeneration the generation;
// no long operation and no create without a recorded outcome; the object
// not being deleted; and its connection Secret, if any, in the cache,
// controlled by the object, with every credential key the clients name. An
// object that is not settled is observed on its own, at once, on every
// pass: a new object, a new generation, a failure, an update or a
// deletion under way.
//
// Spread after a start. A process that starts runs a pass of every object
// at once. The first pass, in this process, of a settled object calls
// nothing: it puts the object's first observation off to a moment drawn
// evenly from the spread window (Timing.Spread; by default the object's
// poll interval) and ends with a RequeueAfter to that moment. The external
// system so sees the objects observed at the steady rate of the polls, a
// poll interval's worth spread over the interval, rather than every object
// at the start. The passes before that moment (the watch events of the
// start, of the connection Secrets) call nothing either, unless the
// object changed (its resourceVersion differs), stopped being settled or
// was woken: those observe at once. Objects a process takes over from
// another replica (package shard) are spread the same way. A negative
// Timing.Spread observes every object on its first pass.
//
// This leaves no drift unrepaired for longer than about one poll interval
// after a start: the put-off observation comes within the spread window,
// one poll interval by default, and the polls follow at the poll interval;
// a change of the object while the process runs is handled at once, since
// it changes the resourceVersion or the generation. What is found only at
// the put-off observation is what happened while no process ran: drift of
// the resource, and changes of the annotations (a management policy, an
// external name set by hand for adoption) that no watch event told this
// process of.
//
// Batches. When the Connector, or the clients it returns, implement
// BatchObserver (the step learns of its clients at their first Connect), a
// pass of a settled object whose poll is due, within the batch window
// (Timing.Batch, a tenth of the poll interval by default), or whose
// put-off first observation is due, takes a batch's observation. When no
// round has observed the object lately, the pass runs one, one at a time
// per step: it gathers its own object and every settled object whose poll
// is due before the batch window ends, as the manager's cache holds them,
// connects once with its own object (unless the Connector is the
// BatchObserver), calls ObserveBatch once and keeps each observation for
// its object's pass; the passes of the others, coming at their polls
// within the window, take theirs without a call. With polls spread over
// the interval, a step makes about (poll interval / batch window) rounds
// per poll interval, ten by default, of two calls each, whatever the
// number of objects; an observation is at most two batch windows old when
// a pass takes it.
//
// A pass takes a batch's observation only when all of these hold, and
// observes on its own otherwise: the object is settled and not woken; a
// round observed it within two batch windows; the object the round
// observed is equal, in every field, to the one the pass holds (nothing
// changed it since, not even an earlier step of the pass); and the
// decision on that observation is to do nothing (the resource exists, is
// the object's, is up to date and available, and nothing is
// late-initialised). So an Observe of the pass's own still precedes every
// Create, Update and Delete (a round that finds the resource missing,
// differing or another's hands the pass to an Observe of its own, whose
// decision counts), and happens for every object that is not settled, a
// woken object, a stale or missing batch observation, the polls before
// the step has learned that its clients batch, and every object while
// rounds fail: a failed round is logged, and none runs for a batch window,
// in which the passes observe one by one. Cleanup, and Observe under the
// skip policy, always observe on their own. A pass that takes a batch's
// observation keeps the status ObserveBatch wrote and publishes the
// connection details, as after an Observe.
//
// Waking. Step.Wake asks for a pass of one object at once, through the
// controller's bosun.Enqueuer, and marks it, so that the pass observes on
// its own, whatever its spread or its batch. An external system that tells
// of changes (a notification, a webhook, a message) calls it, and drift
// is repaired within seconds; the polls go on at their interval for the
// changes nobody tells of. A pass a user asks for with the annotation
// bosun.AnnotationReconcileRequestedAt observes on its own the same way.
// The PostgreSQL example operator (examples/postgres) wakes its steps from
// LISTEN/NOTIFY.
//
// # The resource's observed state
//
// Observe gets a copy of the object, typed like the object, and may write
// what it read of the external resource into the copy's status: by
// convention a field status.atProvider of a type of the operator's own
// (a database's OID, owner and size), cleared when the resource does not
// exist. On every pass that observes (Do, Cleanup, and Observe under the
// skip reconcile policy), in every management policy, observe-only
// included, the step takes the copy's status, the Status field of the
// object's struct, and drops whatever Observe did to the copy's spec
// unless late initialisation applies (below). The status of a resource
// that is another object's is never taken. The engine writes the status
// only when it changed, so Observe should report only what changes when
// the resource does: a value that moves all the time (a size in bytes, a
// counter) costs a status write per poll; report it rounded, or not at
// all.
//
// # Connection details and late initialisation
//
// With WithConnectionSecret, the details from Observe, Create and Update
// go to a Secret named by the object's spec, owned by the object, labelled
// LabelConnectionSecret, written only when its data changes (or it lacks
// the label) and deleted with the object (by the step, or
// by Kubernetes' garbage collector for a Secret the step no longer names).
// The step watches the Secrets its objects control, which by default
// caches every Secret of the cluster; CacheConnectionSecretsOnly limits
// the manager's cache to the labelled ones (a tenth of the heap beside
// 2,000 unrelated Secrets, see docs/BENCHMARKS.md).
// Its owner reference sets blockOwnerDeletion, for which an API server with
// the OwnerReferencesPermissionEnforcement admission plugin asks for update
// on the object's finalizers subresource. They never appear
// in logs, events or conditions. Observe works on a copy of the object.
// When it fills unset spec fields and reports LateInitialized, and the
// policies allow LateInitialize and the resource is the object's, the
// copy's spec is taken and the engine commits it with the rest of the
// object; otherwise the changes to the spec are dropped. A spec the API server refuses
// is reported by the engine, and by the step in Synced, with reason
// SaveFailed (through WriteFailed).
//
// # Change log
//
// Every Create, Update, Delete and RepairCredentials the step performs is
// recorded, when the object's type implements changelog.Object, as a
// changelog.Entry in a list of its status: when, which controller
// (bosun.Pass.Controller) and operator instance (annotation
// bosun.dev/operator-instance), what operation on which external name,
// for which generation, and its outcome (Succeeded, Failed, Unknown, or
// Started for a long operation, followed by another entry when it ends)
// with the error's message for a failure: never connection details, the
// same text Synced shows. The list keeps the newest
// 10 entries (WithChangeLogLength). A Delete that
// Cleanup asks for again while the resource goes is recorded once, and
// so is an Update asked for again while the resource does not show the
// last one of the same generation yet.
//
// Why a bounded list in the status, rather than a log object of its own
// or events: `kubectl get -o yaml` shows it next to the conditions it
// explains; it lives and dies with the object, needs no further RBAC, no
// garbage collection and no extra write (the entry rides on the pass's
// status write, which an operation changes anyway, so a pass that does
// nothing outside still writes nothing); and events expire within the
// hour and are sampled. The price: the list is short, so keep a history
// beyond it elsewhere (the step's events and logs carry each operation
// too). The entry rides on a write that may fail (a conflict, an API
// server that refuses it): the step keeps the entries it added in its
// memory (below) until a later pass finds them in the object's status, and
// puts back those it does not find, in the order of their times, so that
// only a stop of the process before the write loses one. Types without the
// interface get events and logs only.
//
// # Memory
//
// Some of what the step decides from is not on the object: the failures
// it backs off from (a failed Create, Update, Delete or
// RepairCredentials), the last Update of a generation not yet shown, and
// the change-log entries not yet seen saved; and, for pacing, whether
// this process has run a pass of the object, when its next observation is
// due and what a batch round observed of it. It keeps them in the
// process, per object UID, and forgets them
// when the object's Cleanup is done, and when the object leaves the
// manager's cache: deleted (whichever way: with a Cleanup, orphaned, or
// let go by the detach-on-delete policy), or, in a cache that holds a
// share of the objects (package shard), handed to another replica. For
// the last, the step watches the objects itself (SetupWithBuilder): the
// engine runs no pass for an object it does not find. A process that
// starts again has forgotten everything and may call once more what it
// would have waited for.
//
// # Metrics
//
// The step records bosun_managed_first_reconcile_seconds, bosun_managed_ready_seconds,
// bosun_managed_deletion_seconds, bosun_managed_drift_corrections_total, and for every call of the
// external system bosun_managed_external_calls_total, bosun_managed_external_call_duration_seconds,
// bosun_managed_external_calls_in_flight and bosun_managed_call_limit_wait_seconds, in the registry of
// the reconciler that runs it (bosun.Options.Metrics, by default
// controller-runtime's metrics registry), labelled with the reconciler's
// name ("controller") and the step's ("step"). The calls per object and
// poll, and the load the polls put on the external system, follow from
// bosun_managed_external_calls_total.
//
// # Protecting the external system
//
// Each converged object costs a Connect and an Observe per poll interval
// (Timing.Poll, at least Timing.MinPoll, spread by ±10%): a thousand
// objects polled every minute are some 33 calls a second. A BatchObserver
// turns them into about twenty calls per poll interval, whatever the
// number of objects, and the spread after a start keeps a restart from
// observing them all at once (see Pacing the polls). A Limiter
// bounds the rate at which calls start and how many run at once, whatever
// the number of objects and workers: WithLimiter(NewLimiter(limits))
// gives a step one of its own, and one Limiter given to several steps is
// shared by the steps and controllers that talk to the same system. Calls
// wait for it on their worker, so a controller at its limit reconciles no
// faster than the limit allows, and the wait shows in
// bosun_managed_call_limit_wait_seconds.
//
// # Reasons, events, metrics and operations
//
// The step's condition reasons, on Synced (S) or Available (A), and through
// them on Ready, each a conditions.Reason constant of this package but
// InvalidPolicy, the engine's:
//
//	| reason                   | constant                       | when                                                                    |
//	| Available                | ReasonAvailable                | A True: the external resource is ready for use                          |
//	| Creating                 | ReasonCreating                 | A False: being created, or created and not yet seen available           |
//	| Deleting                 | ReasonDeleting                 | A False: Delete was asked for and the resource is still there           |
//	| Unavailable              | ReasonUnavailable              | A False: it was available and is not now, or is missing                 |
//	| ExternalNotFound         | ReasonExternalNotFound         | S and A False: missing, and the management policies do not allow Create |
//	| CredentialsMissing       | ReasonCredentialsMissing       | A False: the connection Secret lacks credentials only Create returns    |
//	| ReconcileSuccess         | ReasonReconcileSuccess         | S True: the last pass did what was needed                               |
//	| Updating                 | ReasonUpdating                 | S False: an Update is under way, until the resource shows it            |
//	| WaitingForFinalizers     | ReasonWaitingForFinalizers     | S False: deletion order last, other finalizers hold the object          |
//	| CreateIncomplete         | ReasonCreateIncomplete         | S False: a create may have leaked; a human must check (the leak guard)  |
//	| ExternalResourceConflict | ReasonExternalResourceConflict | S False: the resource under the external name is not the object's       |
//	| AdoptionNotGranted       | ReasonAdoptionNotGranted       | S False: unmarked, not created by the step, and adoption not granted    |
//	| InvalidSpec              | ReasonInvalidSpec              | S False: the spec cannot be made into a resource (InvalidSpec)          |
//	| InvalidPolicy            | conditions.ReasonInvalidPolicy | S False: a policy annotation holds an unknown value                     |
//	| ConnectFailed            | ReasonConnectFailed            | S False: the Connector failed                                           |
//	| ObserveFailed            | ReasonObserveFailed            | S False: Observe failed                                                 |
//	| CreateFailed             | ReasonCreateFailed             | S False: Create failed, or a long create operation did                  |
//	| UpdateFailed             | ReasonUpdateFailed             | S False: Update failed, or a long update operation did                  |
//	| DeleteFailed             | ReasonDeleteFailed             | S False: Delete failed, or the delete fence could not be written        |
//	| PollOperationFailed      | ReasonPollOperationFailed      | S False: OperationPoller.PollOperation failed                           |
//	| CredentialRepairFailed   | ReasonCredentialRepairFailed   | S False: RepairCredentials failed                                       |
//	| RecordCreateFailed       | ReasonRecordCreateFailed       | S False: the pending mark or the outcome of a Create was not written    |
//	| ConnectionSecretFailed   | ReasonConnectionSecretFailed   | S False: the connection Secret could not be written or is another's     |
//
// An error that carries a reason of its own (conditions.Terminal,
// conditions.Warning, ...) keeps it in place of the failed operation's.
// The step's events (reason, type Normal unless said), their reasons
// constants of this package too:
//
//	| event                    | constant                       | when                                                               |
//	| CreatedExternalResource  | ReasonCreatedExternalResource  | the step created the external resource                             |
//	| UpdatedExternalResource  | ReasonUpdatedExternalResource  | the step updated it; the note holds the Observation's Diff         |
//	| DeletingExternalResource | ReasonDeletingExternalResource | the step asked for its deletion                                    |
//	| LeftExternalResource     | ReasonLeftExternalResource     | Warning: the object went and the resource, not its own, stayed     |
//	| RepairedCredentials      | ReasonRepairedCredentials      | the connection Secret lacked credentials and the step set new ones |
//
// Its metrics, each labelled controller and step:
//
//	| metric                                        | what                                                    |
//	| bosun_managed_first_reconcile_seconds         | histogram: object creation to the step's first pass     |
//	| bosun_managed_ready_seconds                   | histogram: object creation to the resource available    |
//	| bosun_managed_deletion_seconds                | histogram: deletion request to the resource gone        |
//	| bosun_managed_drift_corrections_total         | updates of resources that drifted from an applied spec  |
//	| bosun_managed_external_calls_total            | calls, also labelled operation and result (success, error) |
//	| bosun_managed_external_call_duration_seconds  | histogram: seconds per call, also labelled operation    |
//	| bosun_managed_external_calls_in_flight        | calls running now                                       |
//	| bosun_managed_call_limit_wait_seconds         | histogram: waits for the Limiter (steps with one only)  |
//
// The operations, as ExternalCall.Op and the metrics' operation label name
// them: "observe", "create", "update", "delete", "repair credentials",
// "poll operation", "observe batch" (BatchObserver.ObserveBatch, for many
// objects at once), and, for the metrics and the Limiter only, "connect".
//
// The annotations the step writes for itself (read them, never write them
// but as said):
//
//	| annotation                          | holds                                                           |
//	| bosun.dev/external-create-pending   | when a Create was about to start (remove it to clear CreateIncomplete) |
//	| bosun.dev/external-create-succeeded | when the last Create succeeded                                  |
//	| bosun.dev/external-create-failed    | when the last Create failed                                     |
//	| bosun.dev/external-first-available  | when the resource was first seen available                      |
//	| bosun.dev/external-delete-pending   | when Delete was last asked for: the delete fence                |
//	| bosun.dev/external-operation        | the long operation polled, "create:<token>" or "update:<token>" |
//	| bosun.dev/deleting-last             | the controllers deleting last, comma-separated                  |
//	| bosun.dev/connection-secret-of      | on a connection Secret, the annotation prefix of the step that publishes it (WithAnnotationPrefix) |
//
// A step with an annotation prefix of its own writes the annotations of
// the external resource (all above but the last two) under its prefix.
//
// # Example
//
//	step := managed.NewStep[*v1.Bucket](connector,
//		managed.WithConnectionSecret(func(b *v1.Bucket) string { return b.Spec.ConnectionSecret }),
//		managed.WithTiming(managed.Timing{Poll: 2 * time.Minute}),
//	)
//	r := &bosun.Reconciler[*v1.Bucket]{
//		Name:      "bucket",
//		Steps:     []bosun.Step[*v1.Bucket]{step},
//		Finalizer: "example.com/bucket",
//	}
//	return bosun.ControllerManagedBy[*v1.Bucket](mgr).Owns(&corev1.Secret{}).Complete(r)
//
// Maturity: stable. The contract users implement (Connector,
// ExternalClient) and the annotations they write follow Crossplane's
// managed resources and are tested against a real API server.
package managed
