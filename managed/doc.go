// Package managed is the bosun step for external resources: things outside
// Kubernetes (a cloud bucket, a database role) that an object describes and
// an operator creates, keeps in line with the spec and deletes.
//
// # The contract
//
// An operator implements a Connector, which turns an object into a Client,
// and the Client's four methods: Observe (does the resource exist, is it up
// to date, is it available, what are its connection details), Create,
// Update and Delete. The obligations of each method are listed on Client:
// idempotent, Observe changes nothing outside, Delete of a missing resource
// succeeds. ConnectorFunc and ClientFuncs adapt functions; NopClient and
// NopConnector do nothing.
//
// # The step
//
// NewStep returns a Step to put in a bosun.Reconciler (which then needs a
// Finalizer). Every pass connects and observes, then:
//
//   - resource missing: creates it, guarded against leaks (below);
//   - resource out of date: updates it;
//   - otherwise: nothing, and looks again after the poll interval.
//
// When the object is deleted, Cleanup deletes the resource and keeps the
// finalizer until Observe no longer finds it. The deletion policy Orphan
// (WithDeletionPolicy, or annotation AnnotationDeletionPolicy) leaves it in
// place.
//
// # Management policies
//
// The management policies (Observe, Create, Update, Delete, LateInitialize,
// or "*" for all) limit what the step may do. They are the step's option
// WithManagementPolicies, overridden per object by annotation
// AnnotationManagementPolicies. Observe-only ("Observe") is the usual
// restricted set: the step reports the resource and never creates, updates
// or deletes it, nor late-initialises the spec. The engine's skip reconcile
// policy goes further and writes nothing but the status.
//
// # Conditions
//
// The step owns two conditions (types configurable with
// WithConditionTypes): Synced, True with ReasonReconcileSuccess when the
// last pass did what was needed and False with the reason of the error
// otherwise (ReasonCreateFailed, ReasonInvalidSpec, ReasonCreateIncomplete,
// ...); and Available, True with ReasonAvailable, or False with
// ReasonCreating, ReasonDeleting or ReasonUnavailable. The engine derives
// Ready from them, so Ready is False with the same reasons while the
// resource is not available, and True with conditions.ReasonSucceeded when
// it is. Every condition observes the object's generation.
//
// # External names
//
// The name of the external resource is kept in annotation
// AnnotationExternalName. By default it is the object's name; NameFromUID
// gives a prefix and the object's UID; WithProviderNames lets Create record
// the name the external system chose. Once set, the name never changes.
//
// # The leak guard
//
// A create that happens twice leaks a resource; one whose result is lost
// leaks it too. Before calling Create the step commits
// AnnotationCreatePending (and the external name), guarded by the object's
// resourceVersion, so a pass working on stale data cannot create. Right
// after Create it records AnnotationCreateSucceeded or
// AnnotationCreateFailed, retrying a few times. A later pass that finds the
// resource missing and pending newer than both outcomes knows a create may
// have happened unrecorded: with deterministic names it waits out the
// creation grace period and then trusts Observe (a resource that is there
// is simply adopted); with names the external system assigns it stops with
// Synced False, reason ReasonCreateIncomplete, and a message saying what
// to check and which annotation to remove. For the creation grace period
// after a recorded create (WithCreationGracePeriod, 30s by default), "not
// found" is taken for an eventually consistent API and the step looks
// again shortly instead of creating a second time.
//
// # When to look again
//
// An error is returned to the engine, so controller-runtime retries with
// exponential backoff; a terminal one (InvalidSpec) waits for a change of
// the object. A resource that is being created, updated or deleted is
// looked at after the short interval (WithShortInterval). An available,
// up-to-date one after the poll interval: one minute by default
// (WithPollInterval), overridden per object by AnnotationPollInterval,
// never below WithMinPollInterval, and spread by ±10% (PollJitter). An
// annotation that does not parse as a positive Go duration is ignored. A
// change of the object brings a pass at once, through the watch.
//
// # Connection details and late initialisation
//
// With WithConnectionSecret, the details from Observe, Create and Update
// go to a Secret named by the object's spec, owned by the object, written
// only when its data changes and deleted with the object. They never appear
// in logs, events or conditions. When Observe fills unset spec fields and
// reports LateInitialized, the engine commits the spec with the rest of
// the object (if the policies allow LateInitialize; otherwise Observe works
// on a copy and its changes are dropped).
//
// # Metrics
//
// The step records MetricFirstReconcile, MetricTimeToReady,
// MetricDeletion and MetricDriftCorrections in controller-runtime's
// metrics registry.
//
// # Example
//
//	step := managed.NewStep[*v1.Bucket](connector,
//		managed.WithConnectionSecret(func(b *v1.Bucket) string { return b.Spec.ConnectionSecret }),
//		managed.WithPollInterval(2*time.Minute),
//	)
//	r := &bosun.Reconciler[*v1.Bucket]{
//		Name:      "bucket",
//		Steps:     []bosun.Step[*v1.Bucket]{step},
//		Finalizer: "example.com/bucket",
//	}
//	return bosun.ControllerManagedBy[*v1.Bucket](mgr).Owns(&corev1.Secret{}).Complete(r)
package managed
