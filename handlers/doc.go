// Package handlers lets independent parts of an operator react to the
// objects of one kind through named handlers run by one controller, in the
// style of wrangler's OnChange and OnRemove: a thin layer over the engine
// of package bosun, for operators that prefer a callback per concern to a
// Reconciler of their own.
//
// New makes a Set for a kind on a manager; every part of the operator that
// adds handlers for that kind is handed the same Set. The OnChange
// handlers of a Set run as the steps of one bosun.Reconciler (so they
// change p.Object and the engine writes what changed, once, after all of
// them), and its OnRemove handlers run with the key of every object that
// is gone. Configure reaches the Builder and the Reconciler of the Set's
// controller, for predicates, watches, policies and options.
//
// Each handler has the engine's step metrics under its name: phase "do"
// for OnChange handlers, phase "remove" for OnRemove ones. The step that
// runs the OnChange handlers is named "handlers", a name no handler may
// take.
//
// Maturity: experimental. The layer is young and its few names may still
// change; the engine below it is stable.
package handlers
