// Package rwexternal is a bosun example operator that reads and writes
// objects outside its own custom resource: an RWExternal
// (rwexternal.bosun.dev/v1alpha1) names an input Secret, and the operator
// keeps an output Secret derived from it (see Derive: each key in upper case
// holds the SHA-256 digest of the value).
//
// The reconciler has two steps:
//
//	readInput    owns InputReady; reads the input Secret, or reports it
//	             missing (reason InputMissing) and stops without an error
//	writeOutput  owns OutputReady; creates or updates the output Secret and
//	             deletes it in Cleanup
//
// Because writeOutput cleans up, the engine commits the finalizer
// rwexternal.bosun.dev/output before any step runs, and on deletion runs
// Cleanup before releasing it. A missing input is not retried on a timer:
// each step watches the Secrets it deals with (it sets up its own watch):
// readInput maps an input Secret back to the RWExternals that read it,
// through a field index on spec.inputSecret (watch.Referenced), and
// writeOutput an output Secret to the RWExternal that wrote it, through the
// OwnerAnnotation on the output.
//
// The reconcile policy (annotation bosun.dev/reconcile-policy on the
// RWExternal, else on its Namespace) changes what happens:
//
//	manage            the default: output kept in step, removed on deletion
//	skip              nothing is written; both steps only observe, and
//	                  OutputReady tells whether the output is up to date
//	detach-on-delete  as manage, but on deletion the output stays behind
//
// The output Secret is marked as ours by OwnerAnnotation, not by an owner
// reference: on a cluster with a garbage collector an owner reference would
// delete the output together with its RWExternal, so detach-on-delete could
// not leave it behind. Deletion is the finalizer's job instead.
//
// The controller reads Secrets through the manager's cache, which then holds
// the Secrets of every namespace the manager sees; an operator meant for a
// few namespaces would restrict its manager's cache to them.
//
// The entry points used by tests and by `bosun demo` are AddToScheme, CRDs,
// SetupWithManager, PrepareSamples and Samples. The API types live in
// package v1alpha1 under api/, the generated CRD manifest in config/crd.
package rwexternal
