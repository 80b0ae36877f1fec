// Package simple is the smallest operator built on the bosun engine: a Simple
// custom resource (simple.bosun.dev/v1alpha1) whose spec names a dividend and
// a divisor, and whose status receives their quotient and remainder.
//
// The reconciler only reads its spec and writes its status. It has two steps:
//
//	ensureNonZeroDivisor  owns DivisorValid; a zero divisor makes it False
//	                      with reason ZeroDivisor and stops the pass
//	divide                writes status.quotient and status.remainder
//
// Everything else is the engine's: loading the object, initialising
// DivisorValid and Ready to Unknown on the first visit, deriving Ready from
// DivisorValid (so a zero divisor shows as Ready=False, reason ZeroDivisor),
// stamping observedGeneration, and writing the status only when it changed.
// A zero divisor stops the pass with bosun.ErrStop, which is not a
// failure, so it is neither logged as one nor retried: the next reconcile
// comes with the next spec change. No step cleans up, so the engine adds no finalizer.
//
// The entry points used by tests and by `bosun demo` are AddToScheme, CRDs,
// SetupWithManager and Samples. The API types live in package v1alpha1 under
// api/, the generated CRD manifest in config/crd.
package simple
