// Package bosun runs the lifecycle of a Kubernetes object for an operator
// written on controller-runtime, so that each operator only writes the steps
// that are particular to it.
//
// A Reconciler[T] holds a list of Steps. For every request it loads the
// object from the cache, decides the reconcile policy (the annotation
// bosun.dev/reconcile-policy on the object, else on its Namespace, else the
// reconciler's default, else manage), checks which operator instance owns
// the object (bosun.dev/operator-instance), commits its finalizer before any
// step acts, runs the steps' Do (or, when the object is being deleted, their
// Cleanup in reverse order), runs every step's Post, derives the conditions
// (a Ready summary, errors with their reason and severity,
// observedGeneration) and writes the object back only when something
// changed. A 409 Conflict on a write is a silent requeue, unless it came
// from another client's change that the pass's status changes can be
// written over (see "Status shared with other controllers").
//
// Steps see the object through a Pass, which also carries the clients,
// the logger, the event recorder, the policy in force and typed per-request
// Values. A step may clean up (Cleaner), run after the others (Poster), own
// conditions (ConditionOwner), refresh its observations under the skip policy
// (Observer), name itself (Named) and register its own watches and field
// indexes (Setuper). Composites arrange the Do of steps (Sequence, Join,
// OrderedJoin, ParallelJoin, If, Timeout, Retry); the engine looks inside
// them, so every step of the tree is treated as one listed in Steps: one
// list, one kind of unit.
//
// A step that makes children one by one, rather than keeping a set of them
// (package children), uses two methods of the Pass. CreateChild creates an
// object controlled by the pass's object, with a SuccessfulCreate event,
// and takes an object of the same name that the pass's object controls for
// one made already, so that a child named for what it is for is made once
// however often passes are cut short; an object of another owner under
// that name makes Ready False with reason <Kind>NameTaken. ListChildren
// lists the objects of a kind that the pass's object controls, through the
// cache or, before such a create, from the API server.
//
// NewStatusStep makes a step of a function that computes the object's
// status; when it fails, its status edits are discarded (the Status field is put back as it was), so
// a half-computed status is never saved. Package children keeps an object's
// children as a set, package managed the resources it has outside
// Kubernetes, and package watch wakes it when related objects change.
//
// ControllerManagedBy wires a Reconciler into a manager and checks its
// configuration before anything runs. For a namespaced T it also watches
// Namespaces: a change of a Namespace's policy annotation reconciles every
// object of T in it, so moving a Namespace from skip to manage (or back)
// takes effect at once, without touching the objects. An empty policy
// annotation, on an object or a Namespace, counts as not set. The engine
// reads only that annotation, so it watches and caches the metadata of
// Namespaces (metav1.PartialObjectMetadata), not whole objects, and the
// manager's scheme needs no core/v1 types for it.
//
// # Optional APIs, handlers, and requests from outside
//
// A kind the API server does not serve (its CRD is not installed) is
// refused at setup with an error that names it, unless the Builder is told
// WhenServed: the controller is then checked and its steps set up as
// usual, and it is built and started once discovery shows the kind, so
// one operator binary can ship controllers for optional APIs.
//
// Package handlers is a thin layer over the engine in wrangler's style:
// independent named OnChange and OnRemove handlers of one kind share one
// controller, its OnChange handlers run as steps of one Reconciler.
//
// An Enqueuer (Builder.Enqueuer) puts keys into a
// controller's queue from any code, at once or after a delay, through
// controller-runtime's channel source; it never blocks, and keeps what it
// is given until the controller starts.
//
// # Claims, resyncs and requests
//
// A Claimer step runs before the claim, on every pass that claims: it
// checks preconditions and sets identifiers, which are stored in the same
// write as the finalizer; its error holds the claim back and shows in
// Ready, and no Do runs until it passes.
//
// Reconciler.Resync reconciles every object again after a period, spread
// by Options.ResyncJitter, when nothing asked for a pass sooner; the annotation
// bosun.dev/resync-interval sets it per object ("0" for never). A pass
// that wrote nothing and asks to run again later (a resync, a step's poll)
// goes back to the queue at low priority, so that polls of objects that
// have converged never delay objects waiting for their first pass.
//
// A new value of the annotation reconcile.bosun.dev/requested-at brings a
// pass at once; the engine copies the value to status.lastHandledReconcileAt
// (ReconcileRequestStatus) when the pass has
// run, so a client can wait for its request to be handled. Controllers
// whose For predicates filter metadata changes add ReconcileRequested.
//
// # Paused objects
//
// Under the skip policy the object is paused: Observers run instead of Do,
// and nothing but the status is written. Ready keeps reporting the health
// the Observers see, its status and reason as the summary gives them, so a
// parent or `kubectl wait` reads the same health as before; its message
// starts with `reconcile policy "skip": observed, not changed`. A step that
// wants the pause in a condition of its own sets it False with
// conditions.ReasonReconcilePaused, which the summary skips (package managed
// does so with Synced). With no Observer among the steps nothing refreshes
// the health, so Ready is False with conditions.ReasonReconcilePaused; the
// steps' conditions keep their last values. A ReconcileSkipped event is
// recorded each time an object comes under the skip policy.
//
// # Ready, and kstatus
//
// Ready summarises the steps' conditions, and is never True while the pass
// did not run every step: when a step asks to come back (a RequeueAfter)
// before the steps after it ran, Ready is False with reason Progressing and
// names the step, whatever those steps reported for an older generation.
// A requeue from the last step (a poll, the next run of a schedule) keeps
// Ready as the steps report it. Options.KStatus adds the kstatus
// conditions Reconciling and Stalled, so that Flux, Argo CD and
// `kubectl wait` judge bosun objects as they judge built-in ones (see
// package conditions and docs/OPERATIONS.md). With Options.ReadyGrace, an
// object Ready for its generation stays Ready through a retried error
// for the grace, while the error's condition (and Reconciling) says it
// is retrying, so a failure the next pass clears does not flap Ready.
//
// # Deletions that cannot hang unnoticed
//
// With Options.DeletionDeadline, a cleanup that has not finished that long
// after the deletion was asked shows: DeletionBlocked True with the step,
// its error or wait, and the time of the request; one Warning event; the
// metric bosun_deletion_blocked_total. The engine keeps retrying and never
// releases the finalizer on its own; an administrator does, on purpose,
// with AnnotationReleaseFinalizer ("true": one more cleanup, then release;
// "orphan": release without cleanup), which a Warning event records.
//
// # Renaming the finalizer
//
// Options.FormerFinalizers are names the engine used before Finalizer: it
// cleans up and releases objects that carry them, and replaces them with
// Finalizer in the claim's write of a live object. Two releases rename a
// finalizer so that a rollback always knows the name objects carry (see
// docs/OPERATIONS.md).
//
// # Which build reconciled an object
//
// Options.Build (or the Build of the manager's Observation, which package
// operator sets from the binary's version) names the operator's build. The
// engine records it in AnnotationReconciledBy after a pass that ran the
// steps for the live object, only when the annotation names another build,
// in the claim's or the save's write when there is one: an upgrade costs one
// write per object, and shows object by object (`bosun explain` prints it).
//
// # Status shared with other controllers
//
// Another controller may own condition types of its own on the same
// objects (as cluster-api's and reconciler.io's condition ownership
// allow). The engine's status write is a JSON merge patch guarded by the
// resourceVersion the pass read, and a merge patch replaces the whole list
// of conditions, so each write of the other controller makes the engine's
// next one conflict. When the status write is refused with 409 Conflict,
// the engine reads the object from the API server (APIReader) and compares
// three versions: the one the pass read, the pass's status, and the one
// stored now. Conditions go by type and the other status fields member by
// member. If the other writer changed none of the condition types or
// fields the pass changed (the pass's types are Ready, DeletionBlocked,
// the kstatus conditions and its steps' ones), the engine writes the
// pass's changes onto the stored version, guarded by that version: the
// other controller's conditions and fields stay as it wrote them, and the
// pass is not thrown away. Each conflict costs at most one more read and
// one more write, five times in a status write at most. A change of a
// condition type or field the pass changed too, to another value, is a
// real conflict, and so is a change of the object's deletion or of the
// engine's finalizer, or another object of the same name: the quiet
// requeue, as before. Only the status write is rebased so; a conflict on
// the claim or on a write of metadata and spec is the quiet requeue.
//
// The engine stamps the generation (observedGeneration) on its own
// conditions, on those its steps own (ConditionOwner) and on any a step
// added or changed in the pass; a condition of another type that the pass
// found and left alone keeps the generation its writer observed.
// Pass.Reload, after a refused Commit, puts the pass's status changes onto
// the stored version in the same way, the pass's value winning where both
// changed the same condition type or field.
//
// # Writes that fail, and writes that change nothing
//
// A 409 Conflict that the status write does not rebase (above) is a quiet
// requeue. Any other failure of the engine's own writes of the object
// (the claim, the release of the finalizer, the save of metadata and spec
// such as late-initialised fields) is reported as soon as the status can
// be written: Ready False with reason ClaimFailed, ReleaseFailed or
// SaveFailed and the error, one Warning event, and each WriteFailureReporter step
// told first so it can say so in its own conditions. The engine remembers
// the versions its writes replaced, to skip passes on a cache that is
// behind; a write the server takes for a no-op (every change pruned by the
// schema) keeps the version, and is not remembered. Condition messages are
// cut to conditions.MaxMessageLength before every status write.
//
// The engine itself needs these permissions besides the steps' own: get,
// list, watch, update and patch on T and update and patch on its status
// subresource (the claim and the save); get, list and watch on namespaces
// (the namespace's reconcile policy is read through the cache); create and
// patch on events.k8s.io events. As kubebuilder RBAC markers:
//
//	// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
//	// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
//
// `bosun gen` writes the markers for T and its status, for what the states
// of a document read, for what its actions declare they write (`writes
// Kind(verbs)`), and these two of the engine's own. For Go steps,
// Reconciler.PolicyRules derives the rules: the engine's, and those each
// step declares with a PolicyRules method (the children step declares its
// kinds); a test that compares them with the role controller-gen writes
// keeps the markers at least privilege (examples/memcached does).
//
// # The stages of a pass, and where to read them
//
// One pass, from the request to the status write, in the files that hold
// each stage (reconciler.go declares the state of a pass and the types of
// its stages; each stage's methods are in its own file):
//
//	Reconcile (reconciler.go)        trigger, trace span, observers
//	  runPass (reconciler.go)        load T from the cache; past the engine's own writes
//	  | claim.go                     owned by another instance? policy; Claimers;
//	  |                              commit the finalizer (the claim)
//	  | run.go                       Do of the steps, or Cleanup in reverse, or Observe;
//	  |                              every Post; conditions: Ready, observedGeneration
//	  | save.go                      patch metadata and spec, then status, each only if
//	  |                              changed; report a failed engine write
//	  | ownwrites.go                 the versions the pass wrote: their events start no
//	  v                              pass; a later pass waits for the cache to pass them
//	result -> controller-runtime (outcome.go: without ErrStop; no requeue with an error)
//
// The Pass a step sees is in pass.go, the Step contract and its optional
// interfaces in step.go, the composites in compose.go, the rules of
// outcomes in outcome.go, the Builder in builder.go.
//
// # What a step returns
//
// A step's Do returns a ctrl.Result and an error, and the engine reads
// them by its own rules:
//
//	ctrl.Result{}, nil                     done; the next step runs
//	ctrl.Result{RequeueAfter: d}, nil      come back after d; the steps after it wait for that pass
//	ctrl.Result{}, err                     failed: Ready False with err's reason, retried with backoff
//	                                       (not when err is terminal: conditions.Terminal)
//	ctrl.Result{}, ErrStop (or wrapped)    stop here, quietly: nothing failed, nothing is retried
//	                                       (a RequeueAfter returned with it still applies)
//
// The last three interrupt a Sequence, of which a Reconciler's Steps are
// one: the steps after the interrupting one do not run in that pass, and
// its outcome is the pass's. Join, OrderedJoin and ParallelJoin run every
// step and join the outcomes: every error is kept (errors.Join), ErrStop
// only when no step failed, and the shortest RequeueAfter wins. Post's
// errors are joined in the same way. What goes back to controller-runtime
// has no ErrStop, and no RequeueAfter when an error remains, since
// controller-runtime would ignore it. If runs a step when a predicate on
// the Pass holds, Timeout gives a step a deadline (its error then wraps
// context.DeadlineExceeded), Retry tries a failing step again within the
// pass.
//
// A Composite of one's own runs its steps' Do with Pass.Run, which gives
// each the recording and panic recovery of a step of Steps, and combines
// their outcomes as it likes.
//
// # The names the engine writes
//
// Every reason the engine gives, of a condition or an event, is a
// conditions.Reason constant of package conditions, named Reason followed
// by the word it holds (conditions.ReasonClaimed for Claimed); its doc
// lists them. Events, with the reason as recorded (events.k8s.io, type
// Normal unless said):
//
//	Claimed           the engine committed its finalizer or instance claim
//	CleanedUp         every Cleanup finished and the finalizer was released
//	Detached          the object was let go under detach-on-delete or skip
//	ReconcileSkipped  the object came under the skip policy
//	OwnedByOtherInstance
//	                  Warning: the object belongs to another operator instance
//	ClaimFailed, ReleaseFailed, SaveFailed
//	                  Warning: an engine write of the object failed
//	DeletionBlocked   Warning: the cleanup passed Options.DeletionDeadline
//	FinalizerReleased Warning: AnnotationReleaseFinalizer released the finalizer
//	SuccessfulCreate  Pass.CreateChild created a child
//
// Condition reasons of Ready besides the steps' own: those of package
// conditions, among them ClaimFailed, ReleaseFailed, SaveFailed,
// InvalidResyncInterval for an unreadable bosun.dev/resync-interval, and
// InvalidReleaseFinalizer for an AnnotationReleaseFinalizer it does not
// know; and <Kind>NameTaken (JobNameTaken, ConfigMapNameTaken...) when the
// name of a child that Pass.CreateChild makes is held by an object of
// another owner, one reason per kind, which an operator declares as its
// own constant. DeletionBlocked (conditions.TypeDeletionBlocked) has the
// reason of the cleanup's error, or CleanupPending while a cleanup waits.
//
// Metrics, in Options.Metrics (controller-runtime's registry by default):
//
//	bosun_step_duration_seconds           histogram; controller, step, phase
//	bosun_step_errors_total               counter; controller, step, phase
//	bosun_own_write_events_skipped_total  counter; controller
//	bosun_deletion_blocked_total          counter; controller
//
// The phase label is "claim", "do", "observe", "cleanup" or "post"
// ("remove" for the OnRemove handlers of package handlers). Trace spans
// (tracer "github.com/bosunkit/bosun") carry bosun.controller,
// bosun.object, bosun.trigger, bosun.trigger.kind, bosun.result,
// bosun.requeue_after_seconds, bosun.step and bosun.phase; a pass's
// Trigger.Kind is "Watch", "Requeue", "Resync", "Requested", "Enqueued"
// or "Unknown". docs/METRICS.md and docs/TRACING.md say more.
//
// Maturity: stable. The engine's lifecycle and the names above are what
// the examples and the test kit are built on; changes are listed in
// CHANGELOG.md.
package bosun
