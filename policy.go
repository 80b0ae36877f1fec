package bosun

import (
	"errors"
	"fmt"
	"strings"
)

// Annotations the engine reads and writes.
const (
	// AnnotationReconcilePolicy selects the reconcile policy of an object, or of every
	// object of a Namespace that has no annotation of its own.
	AnnotationReconcilePolicy = "bosun.dev/reconcile-policy"
	// AnnotationOperatorInstance names the operator instance that owns an object.
	AnnotationOperatorInstance = "bosun.dev/operator-instance"
	// AnnotationReleaseFinalizer on an object being deleted releases the
	// engine's finalizer on purpose, with a Warning event that says so:
	// "true" runs the cleanup once more and releases the finalizer
	// whatever its outcome; "orphan" releases it without cleanup, leaving
	// what the cleanup would delete. For a deletion that a cleanup blocks
	// (see Options.DeletionDeadline); the engine never releases it on its
	// own.
	AnnotationReleaseFinalizer = "bosun.dev/release-finalizer"
	// AnnotationAllowMassDeletion "true" on an object being deleted lets
	// its cleanup go on although the mass-deletion breaker holds it (see
	// MassDeletion).
	AnnotationAllowMassDeletion = "bosun.dev/allow-mass-deletion"
	// AnnotationReconciledBy names, for each bosun controller that
	// reconciles the object, the build of the operator that last did
	// (Options.Build), so that an upgrade's progress and the objects a
	// misbehaving build touched can be traced: "<controller>=<build>"
	// entries separated by commas, sorted by controller, such as
	// "widget=v1.4.2". The engine writes its controller's entry after a
	// pass that ran the steps for the live object, and only when it names
	// another build: one write per object per build, whatever other
	// controllers of other builds reconcile the object too.
	AnnotationReconciledBy = "bosun.dev/reconciled-by"
)

// Policy says how far the engine may act on an object.
type Policy string

// The reconcile policies.
const (
	// PolicyManage lets every step act: Do while the object lives, Cleanup when
	// it is deleted. It is the policy when nothing else is said.
	PolicyManage Policy = "manage"
	// PolicySkip changes nothing outside the object's status: only Observers and
	// Posters run, and no finalizer is added. The object is paused: Ready's
	// message says so, and with no Observer Ready is False with
	// conditions.ReasonReconcilePaused (see the package doc).
	PolicySkip Policy = "skip"
	// PolicyDetachOnDelete is PolicyManage while the object lives; when it is
	// deleted no Cleanup runs and the finalizer is released, so whatever the
	// steps made stays behind.
	PolicyDetachOnDelete Policy = "detach-on-delete"
)

// errUnknownPolicy is wrapped by the error parsePolicy returns for a value that
// is not a known policy.
var errUnknownPolicy = errors.New("unknown reconcile policy")

// parsePolicy returns the Policy named by s. The empty string is not a policy;
// callers fall back to their default for it.
//
// Like every policy value of bosun (see package managed's management and
// deletion policies), it is read without regard to case or surrounding
// blanks.
func parsePolicy(s string) (Policy, error) {
	switch p := Policy(strings.ToLower(strings.TrimSpace(s))); p {
	case PolicyManage, PolicySkip, PolicyDetachOnDelete:
		return p, nil
	default:
		return "", fmt.Errorf("%w %q: want %q, %q or %q", errUnknownPolicy, s, PolicyManage, PolicySkip, PolicyDetachOnDelete)
	}
}

// String returns the policy's annotation value.
func (p Policy) String() string { return string(p) }
