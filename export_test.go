package bosun

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/internal/statusfield"
)

// RememberedObjects counts the objects the engine of r remembers
// something of: own writes, versions written over, skip events recorded,
// other owners warned about.
func RememberedObjects[T client.Object](r *Reconciler[T]) int {
	n := 0
	r.memory.Range(func(_ types.NamespacedName, _ types.UID, m remembered) bool {
		if m.skipSeen || m.foreign != "" || m.written != nil || m.own != nil {
			n++
		}
		return true
	})
	return n
}

// ParsePolicy is parsePolicy, for the tests.
var ParsePolicy = parsePolicy

// Names the engine keeps to itself, for the tests of package bosun_test.
const (
	AttrController         = attrController
	AttrObject             = attrObject
	AttrTrigger            = attrTrigger
	AttrTriggerKind        = attrTriggerKind
	AttrResult             = attrResult
	AttrStep               = attrStep
	AttrPhase              = attrPhase
	MetricStepDuration     = metricStepDuration
	MetricStepErrors       = metricStepErrors
	MetricOwnWritesSkipped = metricOwnWritesSkipped
	MetricDeletionBlocked  = metricDeletionBlocked
	MetricDeletionHeld     = metricDeletionHeld
	StaleCacheRetry        = staleCacheRetry
	RetryPriority          = retryPriority
	ConflictRequeueDelay   = conflictRequeueDelay
)

var (
	ErrKindNotServed = errKindNotServed
	ErrUnknownPolicy = errUnknownPolicy
)

// The kinds of Trigger, for the tests of package bosun_test.
const (
	TriggerWatch     = triggerWatch
	TriggerRequeue   = triggerRequeue
	TriggerResync    = triggerResync
	TriggerRequested = triggerRequested
	TriggerEnqueued  = triggerEnqueued
)

// GateBackoff makes a Builder set up with WhenServed look at the API
// server's discovery first after first, then twice as long each time, up
// to longest.
func GateBackoff[T client.Object](b *Builder[T], first, longest time.Duration) *Builder[T] {
	b.gate = &gate{first: first, longest: max(first, longest)}
	return b
}

// RollbackStatus is the rollback of NewStatusStep.
func RollbackStatus[T client.Object](obj T, fn func() error) error {
	return statusfield.Rollback(obj, fn)
}
