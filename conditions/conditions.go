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
// its reconciler's deletion deadline with the cleanup not finished; its
// message says what blocks it and since when, and how to release the
// finalizer on purpose. The engine keeps it (bosun.Options.DeletionDeadline).
const TypeDeletionBlocked = "DeletionBlocked"

// Reasons the engine writes into conditions.
const (
	// ReasonInitializing marks a condition that is Unknown because the object has not
	// been reconciled far enough to know it.
	ReasonInitializing = "Initializing"
	// ReasonSucceeded is the reason of Ready=True.
	ReasonSucceeded = "Succeeded"
	// ReasonError is the reason of Ready=False for an error that carries no reason of
	// its own.
	ReasonError = "ReconcileError"
	// ReasonPanic is the reason of Ready=False after a step panicked.
	ReasonPanic = "Panic"
	// ReasonInvalidPolicy is the reason of Ready=False when the reconcile policy
	// annotation holds a value the engine does not know. Package managed
	// gives the same reason for its management and deletion policies; the
	// message names the annotation.
	ReasonInvalidPolicy = "InvalidPolicy"
	// ReasonReconcilePaused marks a condition that is False because the object is
	// paused (the skip reconcile policy): nothing is being changed, by choice. Summarize does not let such a condition make Ready
	// worse, so Ready keeps reporting the health of what is observed. The engine
	// gives it to Ready itself under the skip policy when no step observes the
	// object, since no health is known then.
	ReasonReconcilePaused = "ReconcilePaused"
	// ReasonProgressing is the reason of Ready=False when a step asked to
	// come back later before the steps after it ran: what they report is
	// not known for this generation yet.
	ReasonProgressing = "Progressing"
	// ReasonRetrying is the reason of Reconciling=True while the engine
	// keeps Ready True through a failure it retries, within
	// bosun.Options.ReadyGrace; the message holds the error and when
	// Ready turns False if the failures go on.
	ReasonRetrying = "Retrying"
	// ReasonInvalidReleaseFinalizer is the reason of Ready=False when the
	// annotation bosun.dev/release-finalizer holds a value the engine does
	// not know. The cleanup goes on being retried meanwhile.
	ReasonInvalidReleaseFinalizer = "InvalidReleaseFinalizer"
	// ReasonFinalizerReleased is the reason of Ready=False on an object
	// being deleted that the engine has let go (its cleanup finished, or
	// bosun.dev/release-finalizer released it) while other finalizers
	// still hold it. The engine removes DeletionBlocked, and the kstatus
	// conditions, in the same write.
	ReasonFinalizerReleased = "FinalizerReleased"
)

// reasonNotReady is the reason Summarize gives when the worst condition has an
// empty reason.
const reasonNotReady = "NotReady"

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
			Reason:             ReasonInitializing,
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
// reason becomes "NotReady" and an empty message names the condition, so the result
// always passes the API server's validation. A condition with ReasonReconcilePaused is
// skipped: a paused object is not unready for being paused.
//
// The result observes generation; its LastTransitionTime is zero, for Set to fill in.
func Summarize(conds []metav1.Condition, order []string, generation int64) metav1.Condition {
	ready := metav1.Condition{
		Type:               TypeReady,
		Status:             metav1.ConditionTrue,
		Reason:             ReasonSucceeded,
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
				Reason:  ReasonInitializing,
				Message: MessageInitializing,
			}
		}
		if c.Reason == ReasonReconcilePaused {
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
		ready.Reason = reasonNotReady
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
