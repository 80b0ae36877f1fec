package ref

import (
	"errors"

	"github.com/bosunkit/bosun/conditions"
)

// Reasons of the condition a step owns.
const (
	// ReasonResolved is the reason of the step's condition True: the
	// reference names one object, and it is ready.
	ReasonResolved conditions.Reason = "Resolved"
	// ReasonNoReference is the reason of the step's condition when the
	// referring object names no object: True for an Optional reference,
	// else False.
	ReasonNoReference conditions.Reason = "NoReference"
	// ReasonReferenceNotFound is the reason of the step's condition False
	// when no object has the name, or none matches the selector.
	ReasonReferenceNotFound conditions.Reason = "ReferenceNotFound"
	// ReasonReferenceAmbiguous is the reason of the step's condition False
	// when several objects match the selector.
	ReasonReferenceAmbiguous conditions.Reason = "ReferenceAmbiguous"
	// ReasonReferenceNotReady is the reason of the step's condition False
	// when the object exists but is not ready (see Readiness), or is being
	// deleted.
	ReasonReferenceNotReady conditions.Reason = "ReferenceNotReady"
	// ReasonReferenceInvalid is the reason of the step's condition False
	// when the reference cannot name an object: a name and a selector
	// both, a selector that does not parse, or no namespace for a
	// namespaced kind.
	ReasonReferenceInvalid conditions.Reason = "ReferenceInvalid"
	// ReasonReferenceNotAllowed is the reason of the step's condition False
	// when the reference leads into another namespace, and the step was
	// not made with AllowCrossNamespace.
	ReasonReferenceNotAllowed conditions.Reason = "ReferenceNotAllowed"
	// ReasonReferenceReadFailed is the reason of the step's condition False
	// when reading the referenced object failed; the pass fails with the
	// error and is retried with backoff.
	ReasonReferenceReadFailed conditions.Reason = "ReferenceReadFailed"
)

// Sentinels that the errors of Step.Lookup wrap, one per way a reference
// can fail to resolve; test them with errors.Is.
var (
	// ErrNoReference: the referring object names no object.
	ErrNoReference = errors.New("no reference")
	// ErrNotFound: no object has the name, or none matches the selector.
	ErrNotFound = errors.New("referenced object not found")
	// ErrAmbiguous: several objects match the selector.
	ErrAmbiguous = errors.New("reference is ambiguous")
	// ErrInvalid: the reference cannot name an object.
	ErrInvalid = errors.New("reference is invalid")
	// ErrNotAllowed: the reference leads into another namespace, which
	// the step does not allow.
	ErrNotAllowed = errors.New("reference is not allowed")
)

// Error is a reference that does not resolve: Err is one of the
// sentinels, Message says why in words fit for a condition.
type Error struct {
	// Err is ErrNoReference, ErrNotFound, ErrAmbiguous, ErrInvalid or
	// ErrNotAllowed.
	Err error
	// Message describes the failure, naming the kind and the object or
	// selector: `Role "team-a/owner" does not exist`.
	Message string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// Reason returns the condition reason of the failure: ReasonReferenceNotFound
// for ErrNotFound, and so on.
func (e *Error) Reason() conditions.Reason {
	switch {
	case errors.Is(e.Err, ErrNoReference):
		return ReasonNoReference
	case errors.Is(e.Err, ErrNotFound):
		return ReasonReferenceNotFound
	case errors.Is(e.Err, ErrAmbiguous):
		return ReasonReferenceAmbiguous
	case errors.Is(e.Err, ErrNotAllowed):
		return ReasonReferenceNotAllowed
	default:
		return ReasonReferenceInvalid
	}
}
