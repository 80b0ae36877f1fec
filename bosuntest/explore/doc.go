// Package explore generates the spec changes that an exploration of an
// operator drives it through: values read off the OpenAPI schema of its
// CRD, at the leaves of the spec, each within every bound the schema
// states (Valid), at a bound (Boundary: a minimum or maximum, an empty or
// longest string or list, a null), or the removal of an optional field
// (Removed). Values the schema admits are what a user can write, so the
// operator must either converge on each or report the object invalid with
// a condition and back off.
//
// Changes lists every change a schema admits, in a fixed order. Sequence
// draws a reproducible sequence of them from a seed: a failing sequence is
// replayed from its seed alone. Shrink cuts a failing sequence down to a
// short one that still fails, by removing ever smaller runs of changes
// while the failure holds, so that what a test reports is the few steps
// that matter.
//
// The package generates and shrinks; it does not run anything. A test
// applies each Change to the spec of an object (Change.Apply), writes it,
// and checks the operator between steps.
//
// Limits: a string field with a pattern gets only its enum values and its
// default, since the package does not generate strings from a regular
// expression; fields under x-kubernetes-preserve-unknown-fields and
// validation rules (x-kubernetes-validations) are not read.
package explore
