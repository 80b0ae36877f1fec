// Package conditions keeps the status conditions of a bosun-managed object: it adds and
// updates entries of a []metav1.Condition, derives the Ready condition from the others,
// and turns the error a step returned into a condition reason, a severity and a message.
//
// Everything here is pure logic over values; nothing talks to the API server. The
// engine in the root bosun package calls these functions once per reconcile and writes
// the status only when one of them reports a change.
//
// # Updating conditions
//
// Set inserts or updates one condition, keyed by its Type. The clock is a parameter, so
// results are reproducible: LastTransitionTime is set to the given time (cut to whole
// seconds, the precision the API server keeps) only when the condition is new or its
// Status changes, and Set reports whether any field changed. Init adds the declared
// condition types that are still missing as Unknown with ReasonInitializing, and
// StampGeneration records the generation the conditions describe.
//
// # The Ready condition
//
// Summarize computes the Ready condition from the conditions the steps own, in step
// order: Ready is True with ReasonSucceeded when all of them are True; otherwise it
// copies the reason and message of the worst one (False is worse than Unknown), and the
// first one in the given order wins a tie. SetObservedGeneration stamps
// Status.ObservedGeneration on the object when its type has such a field.
//
// # kstatus
//
// TypeReconciling and TypeStalled are the conditions of the kstatus
// convention (sigs.k8s.io/cli-utils/pkg/kstatus), by which Flux, Argo CD and
// kubectl's status readers judge any object. The engine keeps them when
// bosun.Options.KStatus asks: Reconciling True while Ready is False for a
// reason that passes by itself, or while Ready is held True through a
// retried error (ReasonRetrying, bosun.Options.ReadyGrace), Stalled True
// after a terminal error, and neither once Ready is True otherwise or the
// object is paused.
//
// # Errors with a reason
//
// A step reports a failure it understands with Terminal or Warning (or their f
// variants), which attach a condition reason and a Severity to the error.
// SeverityError is terminal: the engine does not retry until the object changes.
// SeverityWarning is retried with backoff. FromError reads reason, severity and message
// back from any error: a typed *Error gives its own, an error made with
// reconcile.TerminalError is terminal with ReasonError, a recovered panic
// (*PanicError) gives ReasonPanic and is retried, and any other error gives
// ReasonError and is retried. TypeOf tells which condition a typed error is about, and
// ErrorCondition builds the False condition that reports an error.
//
// # Reasons
//
// A Reason is the reason of a condition or of an Event: what users, their
// tests and their alerts match. Every reason bosun gives is a constant of
// type Reason in the package that gives it, named Reason followed by the
// word it holds: the engine's are here, a step's are its package's (see
// their package docs). An operator declares its own the same way, and
// Terminal, Warning and Error take them. A metav1.Condition holds its reason
// as a string: string(ReasonSucceeded) puts one there.
//
// The reasons the engine writes into conditions:
//
//	| reason                  | constant                      | when                                                                        |
//	|-------------------------|-------------------------------|-----------------------------------------------------------------------------|
//	| Initializing            | ReasonInitializing            | a condition Init added, Unknown until its step reports ("not reported yet") |
//	| Succeeded               | ReasonSucceeded               | Ready is True: every condition the steps own is True                        |
//	| ReconcileError          | ReasonError                   | Ready is False for an error that carries no reason of its own               |
//	| Panic                   | ReasonPanic                   | Ready is False after a step panicked                                        |
//	| InvalidPolicy           | ReasonInvalidPolicy           | a policy annotation holds a value the engine does not know                  |
//	| ReconcilePaused         | ReasonReconcilePaused         | the object is paused (the skip reconcile policy)                            |
//	| Progressing             | ReasonProgressing             | Ready is False: a step asked to come back before the steps after it ran for |
//	|                         |                               | a generation not yet Ready                                                  |
//	| Retrying                | ReasonRetrying                | Reconciling is True while Ready is held True through a retried error        |
//	|                         |                               | (bosun.Options.ReadyGrace)                                                  |
//	| InvalidReleaseFinalizer | ReasonInvalidReleaseFinalizer | Ready is False: bosun.dev/release-finalizer holds an unknown value          |
//	| FinalizerReleased       | ReasonFinalizerReleased       | Ready is False: the engine let the object go, other finalizers hold it      |
//	| CleanupPending          | ReasonCleanupPending          | DeletionBlocked is True: the cleanup waits rather than fails                |
//	| InvalidResyncInterval   | ReasonInvalidResyncInterval   | Ready is False: bosun.dev/resync-interval cannot be read                    |
//	| ClaimFailed             | ReasonClaimFailed             | Ready is False: the claim (finalizer, instance annotation) was not written  |
//	| ReleaseFailed           | ReasonReleaseFailed           | Ready is False: removing the finalizer failed                               |
//	| SaveFailed              | ReasonSaveFailed              | Ready is False: writing the steps' changes to metadata and spec failed      |
//	| NotReady                | ReasonNotReady                | Summarize's reason when the worst condition has an empty one                |
//	| <Kind>NameTaken         | (none: one per kind)          | Ready is False: bosun.Pass.CreateChild found the name held by another owner |
//
// The reasons of the events the engine records (a failed pass records a
// Warning with the reason of the condition it sets; InvalidPolicy,
// FinalizerReleased and the failed writes above are events too):
//
//	| reason               | constant                   | when                                                                     |
//	|----------------------|----------------------------|--------------------------------------------------------------------------|
//	| Claimed              | ReasonClaimed              | Normal: the engine committed its finalizer or instance claim             |
//	| CleanedUp            | ReasonCleanedUp            | Normal: every Cleanup finished and the finalizer was released            |
//	| Detached             | ReasonDetached             | Normal: deleted under a policy that runs no Cleanup; finalizer released  |
//	| ReconcileSkipped     | ReasonReconcileSkipped     | Normal: the skip reconcile policy applies: the engine only observes      |
//	| OwnedByOtherInstance | ReasonOwnedByOtherInstance | Warning: another operator instance owns the object                       |
//	| DeletionBlocked      | ReasonDeletionBlocked      | Warning: the deletion passed its deadline with the cleanup not finished  |
//	| SuccessfulCreate     | ReasonSuccessfulCreate     | Normal: bosun.Pass.CreateChild created a child                           |
//
// Maturity: stable. It follows the Kubernetes API conventions for conditions.
package conditions
