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
// Run drives a running operator through such a sequence, one object at a
// time, and checks it between the steps: it settles on each change (its
// Ready condition is for the object's generation, True or False with a
// reason other than work under way, such as a managed step's Creating), a
// pass that finds nothing new writes nothing (one that changes a
// condition found something new, such as a resource become available or a
// Deployment's pods come up, and the step settles again), a step takes no more than its budget of passes (no hot
// loop), no error is logged behind a Ready True, and the object goes once
// deleted, leaving nothing behind.
// A failing sequence comes back as a *Failure with its seed and its steps,
// shrunk. In a test of an operator, with the operator's client wrapped by
// a WriteCounter and a ReconcileCounter (see package bosuntest):
//
//	spec, _ := explore.SpecSchema(crd, "v1")
//	target := explore.Target{Client: c, GVK: gvk, Spec: spec, Base: base, Passes: passes, Writes: writes}
//	stats := &explore.Stats{}
//	for seed := range uint64(4) {
//		if err := explore.Run(t.Context(), target, ns, explore.Options{Seed: seed, Stats: stats}); err != nil {
//			t.Error(err)
//		}
//	}
//	t.Logf("%d sequences, %d steps, %d spec shapes", stats.Sequences(), stats.Steps(), stats.Shapes())
//
// Stats counts what the runs reached: sequences, the steps the API server
// admitted, and distinct spec shapes (each field reached absent, or with a
// valid, boundary or other value), for a test to report how far it went.
//
// It follows the approach of exploring an operator from the schema of its
// resources, as Acto does, on a smaller scale: the changes are read off
// the schema alone (no model of what the operator should make), and the
// checks are those any operator must pass.
//
// Limits: a string field with a pattern gets only its enum values and its
// default, since the package does not generate strings from a regular
// expression; fields under x-kubernetes-preserve-unknown-fields and
// validation rules (x-kubernetes-validations) are not read.
//
// Maturity: experimental. Which values are drawn from a schema, and the
// checks between steps, still change as the examples find new failures.
package explore
