// Package explain finds out why an object that a bosun operator reconciles
// is not Ready, and says it in a few lines a person reads: the logic of
// `bosun explain`.
//
// Gather reads the object and what bears on it, with nothing but a
// rest.Config: discovery (so that a kind is named as kubectl takes it), the
// dynamic client, and optionally the operator's debug page over HTTP. It
// needs no scheme and no type of the operator, so it works against any
// cluster that serves the operator's CRDs. It reads, only as far as they
// apply:
//
//   - the Ready condition, whether it describes the current generation,
//     the kstatus conditions Reconciling and Stalled, and the build of the
//     operator that last reconciled the object (bosun.dev/reconciled-by);
//   - the other conditions that are False or Unknown, worst first, with the
//     messages the engine wrote (which name the steps);
//   - a deletion under way: since when, its finalizers, and the
//     DeletionBlocked condition with the annotation that releases the
//     finalizer on purpose (bosun.dev/release-finalizer), or, for a cleanup
//     the mass-deletion breaker holds, the one that lets it go on
//     (bosun.dev/allow-mass-deletion);
//   - the reconcile policy in force (bosun.dev/reconcile-policy on the
//     object, else on its Namespace, else the default) and where it came
//     from;
//   - the children that are not ready: objects with a controller owner
//     reference to the object, listed by the label package children puts
//     on every member of a set (bosun.dev/owner, the parent's UID), in
//     the built-in workload kinds and in every kind that a condition
//     "<Kind>Ready" of the object names; for a workload that is not ready,
//     a summary of its pods;
//   - the external resource of a managed step: its name
//     (bosun.dev/external-name), Synced and Available, and a create whose
//     outcome was never recorded;
//   - the latest events about the object, warnings first, then newest
//     first;
//   - with a debug URL, the object's last passes from the debug page's JSON
//     (package debugpage): why each ran, how it ended, and the step that
//     failed with its error.
//
// What cannot be read (a list the user may not make, a debug page that
// does not answer) becomes a one-line note; the rest is still reported.
//
// Report.Write renders the explanation; it is a pure function of the
// Report and the time, so its text is tested in tables. Report.IsReady is
// the verdict a script reads from the exit status of `bosun explain`.
package explain
