package managed

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bosunkit/bosun/conditions"
)

// policy is one thing the step may do to the external resource.
type policy string

// The management policies.
const (
	// policyObserve lets the step observe the resource and report it. Every
	// set of policies includes it.
	policyObserve policy = "observe"
	// policyCreate lets the step create the resource when it is missing.
	policyCreate policy = "create"
	// policyUpdate lets the step update the resource when it is not up to
	// date.
	policyUpdate policy = "update"
	// policyDelete lets the step delete the resource when the object is
	// deleted (and the deletion policy is DeletionDelete).
	policyDelete policy = "delete"
	// policyLateInitialize lets the step commit spec fields that Observe
	// filled in.
	policyLateInitialize policy = "late-initialize"
	// policyAll is every policy.
	policyAll policy = "*"
)

// Policies is a set of management policies.
type Policies struct {
	// Create, Update, Delete and LateInitialize are allowed when true.
	// Observing is always allowed.
	Create, Update, Delete, LateInitialize bool
}

// AllPolicies allows everything; it is the default.
func AllPolicies() Policies {
	return Policies{Create: true, Update: true, Delete: true, LateInitialize: true}
}

// ObserveOnly allows observing only: the external resource is never created,
// changed or deleted, and the spec is never late-initialised.
func ObserveOnly() Policies { return Policies{} }

// ErrInvalidPolicy is wrapped by the errors of ParsePolicies and
// ParseDeletionPolicy.
var ErrInvalidPolicy = errors.New("invalid policy")

// ParsePolicies parses a comma-separated list of management policies, as in
// AnnotationManagementPolicies. "*" means all of them; "observe" alone
// means observe-only. Like every policy value of bosun, names are read
// without regard to case, and the Crossplane spelling "LateInitialize" is
// taken for "late-initialize"; blanks around them are ignored.
func ParsePolicies(s string) (Policies, error) {
	var p Policies
	if strings.TrimSpace(s) == "" {
		return p, fmt.Errorf("%w: empty management policies", ErrInvalidPolicy)
	}
	for _, part := range strings.Split(s, ",") {
		switch policy(normalise(part)) {
		case policyAll:
			p = AllPolicies()
		case policyObserve:
		case policyCreate:
			p.Create = true
		case policyUpdate:
			p.Update = true
		case policyDelete:
			p.Delete = true
		case policyLateInitialize:
			p.LateInitialize = true
		default:
			return Policies{}, fmt.Errorf("%w: unknown management policy %q: want %s, %s, %s, %s, %s or %s",
				ErrInvalidPolicy, normalise(part), policyObserve, policyCreate, policyUpdate, policyDelete, policyLateInitialize, policyAll)
		}
	}
	return p, nil
}

// String returns the policies as ParsePolicies reads them.
func (p Policies) String() string {
	if p == AllPolicies() {
		return string(policyAll)
	}
	parts := []string{string(policyObserve)}
	for _, x := range []struct {
		on bool
		p  policy
	}{{p.Create, policyCreate}, {p.Update, policyUpdate}, {p.Delete, policyDelete}, {p.LateInitialize, policyLateInitialize}} {
		if x.on {
			parts = append(parts, string(x.p))
		}
	}
	return strings.Join(parts, ",")
}

// DeletionPolicy says what happens to the external resource when the object
// is deleted.
type DeletionPolicy string

// The deletion policies.
const (
	// DeletionDelete deletes the external resource, and keeps the object
	// until it is gone. It is the default.
	DeletionDelete DeletionPolicy = "delete"
	// DeletionOrphan leaves the external resource in place.
	DeletionOrphan DeletionPolicy = "orphan"
)

// ParseDeletionPolicy parses "delete" or "orphan", in any case.
func ParseDeletionPolicy(s string) (DeletionPolicy, error) {
	switch p := DeletionPolicy(normalise(s)); p {
	case DeletionDelete, DeletionOrphan:
		return p, nil
	default:
		return "", fmt.Errorf("%w: unknown deletion policy %q: want %s or %s", ErrInvalidPolicy, s, DeletionDelete, DeletionOrphan)
	}
}

// DeletionOrder says when, in the deletion of the object, the step deletes
// the external resource.
type DeletionOrder string

// The deletion orders.
const (
	// DeletionOrderImmediate deletes the external resource as soon as the
	// object is being deleted. It is the default.
	DeletionOrderImmediate DeletionOrder = "immediate"
	// DeletionOrderLast deletes the external resource only once every
	// other finalizer of the object is gone: whatever else holds the
	// object (a controller that still uses the resource, the garbage
	// collector's foregroundDeletion) finishes first, as Crossplane does
	// for managed resources that are in use.
	DeletionOrderLast DeletionOrder = "last"
)

// ParseDeletionOrder parses "immediate" or "last", in any case.
func ParseDeletionOrder(s string) (DeletionOrder, error) {
	switch o := DeletionOrder(normalise(s)); o {
	case DeletionOrderImmediate, DeletionOrderLast:
		return o, nil
	default:
		return "", fmt.Errorf("%w: unknown deletion order %q: want %s or %s", ErrInvalidPolicy, s, DeletionOrderImmediate, DeletionOrderLast)
	}
}

// normalise returns a policy value as bosun spells it: lower case,
// without surrounding blanks, with "lateinitialize" (Crossplane's
// LateInitialize) written "late-initialize".
func normalise(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "lateinitialize" {
		return string(policyLateInitialize)
	}
	return s
}

// invalidPolicy reports a bad policy annotation as a terminal error on the
// Synced condition.
func invalidPolicy(syncedType string, err error) error {
	return &conditions.Error{Type: syncedType, Reason: conditions.ReasonInvalidPolicy, Severity: conditions.SeverityError, Err: err}
}

// observing reports whether the policies only observe: the step changes
// nothing outside, and an unmarked resource under the external name is
// reported as the object's.
func (p Policies) observing() bool { return !p.Create && !p.Update && !p.Delete }
