package conditions

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TypeReady is the condition type that summarises all the others.
const TypeReady = "Ready"

// The condition types of the kstatus convention, which Flux, Argo CD and
// kubectl's status readers judge an object by, and which the engine keeps
// when bosun.Options.KStatus asks for them. Both are abnormal-true: present
// and True only while the object is not settled.
const (
	// TypeReconciling is True while the controller works towards the
	// spec: a step is not done yet, or an error is being retried (with
	// ReasonRetrying while Ready is held True through it).
	TypeReconciling = "Reconciling"
	// TypeStalled is True when the controller has stopped trying until
	// the object changes: a terminal error.
	TypeStalled = "Stalled"
)

// TypeDeletionBlocked is True while the deletion of an object has passed
// its reconciler's deletion deadline with the cleanup not finished, or
// while the mass-deletion breaker holds the cleanup
// (ReasonDeletionHeld); its message says what blocks it and since when,
// and how to go on. The engine keeps it (bosun.Options.DeletionDeadline,
// bosun.Options.MassDeletion).
const TypeDeletionBlocked = "DeletionBlocked"

// Reason is the reason of a condition or of an Event: one CamelCase word
// that says why the condition has its status, or what happened, and that
// users, their tests and their alerts match. Conditions and Events share
// one vocabulary (a failed pass records the reason it gives Ready as its
// Warning event's, and FinalizerReleased or InvalidPolicy name a condition
// and an event alike), so one type serves both. Every reason bosun gives is a
// constant of this type in the package that gives it: the engine's are
// here, a step's are in its own package (children.ReasonNotReady,
// managed.ReasonCreatedExternalResource, ...), and each constant is named
// Reason followed by the word it holds (ReasonError, "ReconcileError", is
// the one exception). An operator declares its own the same way.
//
// The API server accepts a condition reason of 1 to 1024 characters, a
// letter first, then letters, digits, '_', ',' or ':', not ending in ','
// or ':'; FromError gives ReasonError in place of any other.
type Reason string

// Reasons the engine writes into conditions.
const (
	// ReasonInitializing marks a condition that is Unknown because the object has not
	// been reconciled far enough to know it.
	ReasonInitializing Reason = "Initializing"
	// ReasonSucceeded is the reason of Ready=True.
	ReasonSucceeded Reason = "Succeeded"
	// ReasonError is the reason of Ready=False for an error that carries no reason of
	// its own.
	ReasonError Reason = "ReconcileError"
	// ReasonPanic is the reason of Ready=False after a step panicked.
	ReasonPanic Reason = "Panic"
	// ReasonInvalidPolicy is the reason of Ready=False when the reconcile policy
	// annotation holds a value the engine does not know. Package managed
	// gives the same reason for its management and deletion policies; the
	// message names the annotation. The engine records a Warning event
	// with it too.
	ReasonInvalidPolicy Reason = "InvalidPolicy"
	// ReasonReconcilePaused marks a condition that is False because the object is
	// paused (the skip reconcile policy): nothing is being changed, by choice. Summarize does not let such a condition make Ready
	// worse, so Ready keeps reporting the health of what is observed. The engine
	// gives it to Ready itself under the skip policy when no step observes the
	// object, since no health is known then.
	ReasonReconcilePaused Reason = "ReconcilePaused"
	// ReasonProgressing is the reason of Ready=False when a step asked to
	// come back later before the steps after it ran: what they report is
	// not known for this generation yet.
	ReasonProgressing Reason = "Progressing"
	// ReasonRetrying is the reason of Reconciling=True while the engine
	// keeps Ready True through a failure it retries, within
	// bosun.Options.ReadyGrace; the message holds the error and when
	// Ready turns False if the failures go on.
	ReasonRetrying Reason = "Retrying"
	// ReasonInvalidReleaseFinalizer is the reason of Ready=False when the
	// annotation bosun.dev/release-finalizer holds a value the engine does
	// not know. The cleanup goes on being retried meanwhile.
	ReasonInvalidReleaseFinalizer Reason = "InvalidReleaseFinalizer"
	// ReasonFinalizerReleased is the reason of Ready=False on an object
	// being deleted that the engine has let go (its cleanup finished, or
	// bosun.dev/release-finalizer released it) while other finalizers
	// still hold it. The engine removes DeletionBlocked, and the kstatus
	// conditions, in the same write. It is also the reason of the Warning
	// event the engine records when bosun.dev/release-finalizer released
	// the finalizer.
	ReasonFinalizerReleased Reason = "FinalizerReleased"
	// ReasonNotReady is the reason Summarize gives Ready when the worst
	// condition has an empty reason.
	ReasonNotReady Reason = "NotReady"
	// ReasonCleanupPending is the reason of DeletionBlocked=True when the
	// cleanup waits (a step asked to come back) rather than fails; a
	// failing cleanup gives its error's reason.
	ReasonCleanupPending Reason = "CleanupPending"
	// ReasonDeletionHeld is the reason of DeletionBlocked=True and
	// Ready=False, and of a Warning event, when the mass-deletion breaker
	// holds the cleanup of an object being deleted
	// (bosun.Options.MassDeletion): nothing is deleted until an
	// administrator lets it go on.
	ReasonDeletionHeld Reason = "DeletionHeld"
	// ReasonInvalidResyncInterval is the reason of Ready=False for an
	// object whose bosun.dev/resync-interval annotation cannot be read. The
	// steps still run; the object is reconciled again when it changes.
	ReasonInvalidResyncInterval Reason = "InvalidResyncInterval"
	// ReasonClaimFailed is the reason of Ready=False, and of a Warning
	// event, when the engine's claim of the object (its finalizer and
	// instance annotation, written before any step acts) failed.
	ReasonClaimFailed Reason = "ClaimFailed"
	// ReasonReleaseFailed is the reason of Ready=False, and of a Warning
	// event, when removing the engine's finalizer failed.
	ReasonReleaseFailed Reason = "ReleaseFailed"
	// ReasonSaveFailed is the reason of Ready=False, and of a Warning
	// event, when writing what the steps changed in metadata and spec
	// failed.
	ReasonSaveFailed Reason = "SaveFailed"
)

// Reasons of the events the engine records. A failed pass records a Warning
// event with the reason of the condition it sets (see FromError), and the
// engine's own writes record theirs (ReasonInvalidPolicy,
// ReasonFinalizerReleased, ReasonClaimFailed, ...).
const (
	// ReasonClaimed is the reason of the Normal event the engine records
	// when it committed its finalizer or instance claim.
	ReasonClaimed Reason = "Claimed"
	// ReasonCleanedUp is the reason of the Normal event the engine records
	// when every Cleanup finished and the finalizer was released.
	ReasonCleanedUp Reason = "CleanedUp"
	// ReasonDetached is the reason of the Normal event the engine records
	// when the object was deleted under a policy that runs no Cleanup, and
	// the finalizer was released.
	ReasonDetached Reason = "Detached"
	// ReasonReconcileSkipped is the reason of the Normal event the engine
	// records when the skip reconcile policy applies to the object: the
	// engine only observes it.
	ReasonReconcileSkipped Reason = "ReconcileSkipped"
	// ReasonOwnedByOtherInstance is the reason of the Warning event the
	// engine records when another operator instance owns the object.
	ReasonOwnedByOtherInstance Reason = "OwnedByOtherInstance"
	// ReasonDeletionBlocked is the reason of the Warning event the engine
	// records when the deletion passed the reconciler's deletion deadline
	// with the cleanup not finished (the condition TypeDeletionBlocked says
	// what blocks it).
	ReasonDeletionBlocked Reason = "DeletionBlocked"
	// ReasonSuccessfulCreate is the reason of the Normal event
	// Pass.CreateChild records when it created a child (the reason
	// Kubernetes' own controllers record for the objects they create).
	ReasonSuccessfulCreate Reason = "SuccessfulCreate"
)

// MessageInitializing is the message of a condition added by Init.
const MessageInitializing = "not reported yet"

// MaxMessageLength is the longest message the API server accepts in a condition;
// FromError cuts longer error texts to it.
const MaxMessageLength = 32768

// CutMarker ends a message that Set or Summarize cut to MaxMessageLength.
const CutMarker = " [...]"

// Bound returns msg cut to at most MaxMessageLength bytes, never inside a
// UTF-8 sequence, ending with CutMarker when it was cut. Set and Summarize
// bound every message, so no condition they write can exceed the API
// server's limit.
func Bound(msg string) string {
	if len(msg) <= MaxMessageLength {
		return msg
	}
	return truncate(msg, MaxMessageLength-len(CutMarker)) + CutMarker
}

// Find returns the condition of the given type in conds, or nil, as
// meta.FindStatusCondition does. The pointer refers to the element in
// conds, so changes through it change conds.
func Find(conds []metav1.Condition, condType string) *metav1.Condition {
	return meta.FindStatusCondition(conds, condType)
}

// Set inserts c into *conds, or updates the condition of the same Type, and reports
// whether Status, Reason, Message or ObservedGeneration changed (or the condition is
// new), as meta.SetStatusCondition does, with two differences: the message is bounded
// first (see Bound), and LastTransitionTime is taken from now, not from c.
//
// LastTransitionTime is set to now when the condition is new or its Status changes and
// is left alone otherwise. now is taken in UTC and cut to whole seconds, the precision
// the API server stores, so a condition read back from the server compares equal to the
// one set here. A zero now means the current time. A nil conds is left alone and Set
// returns false.
func Set(conds *[]metav1.Condition, c metav1.Condition, now metav1.Time) (changed bool) {
	if conds == nil {
		return false
	}
	c.Message = Bound(c.Message)
	c.LastTransitionTime = transitionTime(now)
	return meta.SetStatusCondition(conds, c)
}

// transitionTime returns now in UTC cut to whole seconds, or the current time when now
// is zero.
func transitionTime(now metav1.Time) metav1.Time {
	t := now.Time
	if t.IsZero() {
		t = time.Now()
	}
	return metav1.NewTime(t.UTC().Truncate(time.Second))
}

// Init adds every type in types that *conds does not have yet, as Unknown with
// ReasonInitializing and MessageInitializing, observing generation, with
// LastTransitionTime now (see Set). Existing conditions, empty types and repeated types
// are left alone. Init reports whether it added anything; a nil conds is left alone.
func Init(conds *[]metav1.Condition, generation int64, now metav1.Time, types ...string) bool {
	if conds == nil {
		return false
	}
	added := false
	for _, t := range types {
		if t == "" || Find(*conds, t) != nil {
			continue
		}
		Set(conds, metav1.Condition{
			Type:               t,
			Status:             metav1.ConditionUnknown,
			Reason:             string(ReasonInitializing),
			Message:            MessageInitializing,
			ObservedGeneration: generation,
		}, now)
		added = true
	}
	return added
}

// StampGeneration sets ObservedGeneration to generation on every condition in conds.
func StampGeneration(conds []metav1.Condition, generation int64) {
	for i := range conds {
		conds[i].ObservedGeneration = generation
	}
}

// Summarize derives the Ready condition from the conditions whose types are listed in
// order; TypeReady in order and conditions not listed are ignored.
//
// When every listed condition is True, or order lists none, Ready is True with
// ReasonSucceeded and no message. Otherwise Ready takes the status, reason and message
// of the worst listed condition: False is worse than Unknown, and among equals the first
// in order wins. A listed type missing from conds counts as Unknown with
// ReasonInitializing, and a status other than True or False counts as Unknown. An empty
// reason becomes ReasonNotReady and an empty message names the condition, so the result
// always passes the API server's validation. A condition with ReasonReconcilePaused is
// skipped: a paused object is not unready for being paused.
//
// The result observes generation; its LastTransitionTime is zero, for Set to fill in.
func Summarize(conds []metav1.Condition, order []string, generation int64) metav1.Condition {
	ready := metav1.Condition{
		Type:               TypeReady,
		Status:             metav1.ConditionTrue,
		Reason:             string(ReasonSucceeded),
		ObservedGeneration: generation,
	}
	var worst *metav1.Condition
	worstRank := rankTrue
	for _, t := range order {
		if t == TypeReady {
			continue
		}
		c := Find(conds, t)
		if c == nil {
			c = &metav1.Condition{
				Type:    t,
				Status:  metav1.ConditionUnknown,
				Reason:  string(ReasonInitializing),
				Message: MessageInitializing,
			}
		}
		if c.Reason == string(ReasonReconcilePaused) {
			continue
		}
		if r := rank(c.Status); r > worstRank {
			worst, worstRank = c, r
		}
	}
	if worst == nil {
		return ready
	}
	ready.Status = metav1.ConditionUnknown
	if worstRank == rankFalse {
		ready.Status = metav1.ConditionFalse
	}
	ready.Reason = worst.Reason
	if ready.Reason == "" {
		ready.Reason = string(ReasonNotReady)
	}
	ready.Message = Bound(worst.Message)
	if ready.Message == "" {
		ready.Message = fmt.Sprintf("condition %s is %s", worst.Type, ready.Status)
	}
	return ready
}

// Ranks of condition statuses for Summarize; a higher rank is worse.
const (
	rankTrue = iota
	rankUnknown
	rankFalse
)

// rank returns how bad a condition status is.
func rank(s metav1.ConditionStatus) int {
	switch s {
	case metav1.ConditionTrue:
		return rankTrue
	case metav1.ConditionFalse:
		return rankFalse
	default:
		return rankUnknown
	}
}
