package managed

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
)

// Operations of the ExternalClient, as ExternalCall.Op names them.
const (
	opObserve           = "observe"
	opCreate            = "create"
	opUpdate            = "update"
	opDelete            = "delete"
	opRepairCredentials = "repair credentials"
	opPollOperation     = "poll operation"
	// opObserveBatch is a call of BatchObserver.ObserveBatch, for many
	// objects at once.
	opObserveBatch = "observe batch"
	// opConnect is the call of the Connector, which CallHook does not
	// see; metrics and the Limiter count it.
	opConnect = "connect"
)

// ExternalCall describes one call the step makes of its ExternalClient.
type ExternalCall struct {
	// Step is the step's name (WithName).
	Step string
	// Op names the operation: "observe", "create", "update", "delete",
	// "repair credentials", "poll operation" or "observe batch" (see the
	// package documentation).
	Op string
	// Namespace and Name identify the object the call is for, UID which
	// incarnation of it; all three are empty for "observe batch", a call
	// for many objects.
	Namespace, Name string
	UID             types.UID
	// ExternalName is the object's external name when the call starts; it
	// may be empty before a Create of a provider-named resource.
	ExternalName string
}

// Mutating reports whether the call may change the external system: every
// operation but Observe, PollOperation and ObserveBatch.
func (c ExternalCall) Mutating() bool {
	return c.Op != opObserve && c.Op != opPollOperation && c.Op != opObserveBatch
}

// CallHook sees every call the step makes of its ExternalClient (not Connect or
// Disconnect). BeforeCall runs first: a non-nil error is what the call
// returns, and the ExternalClient is not called. AfterCall runs once the call has
// returned, with its error; what it returns replaces that error. Both run
// on the call's goroutine with the call's context.
//
// Tests use it to record what an operator does to an external system and to
// inject faults there: a crash after the k-th mutating call, or a call that
// took effect and whose answer was lost (AfterCall returning an error that
// wraps ErrOutcomeUnknown). Package bosuntest/faults provides one.
type CallHook interface {
	BeforeCall(ctx context.Context, call ExternalCall) error
	AfterCall(ctx context.Context, call ExternalCall, err error) error
}
