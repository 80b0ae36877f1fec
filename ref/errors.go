package ref

import "errors"

// Reasons of the condition a step owns.
const (
	// reasonResolved: the reference names one object, and it is ready.
	reasonResolved = "Resolved"
	// reasonNoReference: the referring object names no object. The
	// condition is True with it for an Optional reference, else False.
	reasonNoReference = "NoReference"
	// reasonNotFound: no object has the name, or none matches the
	// selector.
	reasonNotFound = "ReferenceNotFound"
	// reasonAmbiguous: several objects match the selector.
	reasonAmbiguous = "ReferenceAmbiguous"
	// reasonNotReady: the object exists but is not ready (see
	// Readiness), or is being deleted.
	reasonNotReady = "ReferenceNotReady"
	// reasonInvalid: the reference cannot name an object: a name and a
	// selector both, a selector that does not parse, or no namespace for a
	// namespaced kind.
	reasonInvalid = "ReferenceInvalid"
	// reasonNotAllowed: the reference leads into another namespace, and
	// the step was not made with AllowCrossNamespace.
	reasonNotAllowed = "ReferenceNotAllowed"
	// reasonReadFailed: reading the referenced object failed; the pass
	// fails with the error and is retried with backoff.
	reasonReadFailed = "ReferenceReadFailed"
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

// Reason returns the condition reason of the failure: "ReferenceNotFound" for
// ErrNotFound, and so on.
func (e *Error) Reason() string {
	switch {
	case errors.Is(e.Err, ErrNoReference):
		return reasonNoReference
	case errors.Is(e.Err, ErrNotFound):
		return reasonNotFound
	case errors.Is(e.Err, ErrAmbiguous):
		return reasonAmbiguous
	case errors.Is(e.Err, ErrNotAllowed):
		return reasonNotAllowed
	default:
		return reasonInvalid
	}
}
