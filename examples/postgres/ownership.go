package postgres

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/managed"
)

// OwnerMarkPrefix starts the comment by which the operator marks a role or
// database as an object's: the prefix, then the object's UID
// (managed.Identity), such as "bosun-owner:0c8f2f9e-...".
const OwnerMarkPrefix = "bosun-owner:"

// ownerMark returns the mark of obj's roles and databases.
func ownerMark(obj client.Object) string { return OwnerMarkPrefix + managed.Identity(obj) }

// ownerOf returns the identity a comment marks its role or database with;
// empty when the comment is not a mark.
func ownerOf(comment string) string {
	id, ok := strings.CutPrefix(comment, OwnerMarkPrefix)
	if !ok {
		return ""
	}
	return id
}

// markDiff describes, for the Diff of an observation, how the identity a
// resource is marked with differs from obj's; empty when it is obj's.
func markDiff(owner string, obj client.Object) string {
	switch owner {
	case managed.Identity(obj):
		return ""
	case "":
		return "the owner mark is missing"
	default:
		return "the owner mark names another object"
	}
}

// markStatement returns the statement that marks the role or database
// (kind "ROLE" or "DATABASE") name as obj's, replacing its comment.
func markStatement(kind, name string, obj client.Object) string {
	return "COMMENT ON " + kind + " " + quote(name) + " IS " + literal(ownerMark(obj))
}

// createError wraps err, the error of a create. An error after which the
// create may have happened or not (the connection broke, the context ended
// before the answer came) is marked with managed.OutcomeUnknown, so that
// the managed step looks for the resource instead of taking the create
// for failed; an error the server answered with, or one raised before
// anything was sent, is a known failure.
func createError(what string, err error) error {
	werr := fmt.Errorf("%s: %w", what, err)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) || pgconn.SafeToRetry(err) {
		return werr
	}
	return managed.OutcomeUnknown(werr)
}
