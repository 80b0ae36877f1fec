// Package tuning is the one place where bosun changes how
// controller-runtime and client-go behave beneath the reconciler.
//
// A bosun operator runs on their plumbing as they come: their cache and
// informers, their queue, their client and their logger. Two pieces are
// on by default because they pay their way through an extension point
// upstream offers, and are checked against upstream behaviour:
//
//   - LeanCache, which package operator sets on its managers: the
//     cache's DefaultTransform drops managedFields and shares the short
//     strings objects hold alike, halving the heap of a cache of small
//     custom resources;
//   - the engine dropping the watch events of its own writes (see
//     bosun.Options.ReconcileOwnWrites), which halves the reconciles an
//     object takes to converge.
//
// Everything else is off unless Enable is called on a manager's options
// (package operator's --tuning flag calls it): answers trimmed on the
// wire before they are decoded, workers that start before the informers
// have listed, log keys encoded only when a line is logged, REST mappings
// kept per kind, namespace indexes built when a list needs one. Each of
// them saves less than the rule asks of a default, or rewrites bytes on
// the wire. docs/TUNING.md lists every piece with what it replaces, the
// extension point it uses, what it saves on the end-to-end bench and its
// test.
//
// The package is stable: LeanCache, Enable and Enabled keep their
// meaning; what Enable turns on may grow, each piece listed in
// docs/TUNING.md.
package tuning
