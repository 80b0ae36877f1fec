// Package ref resolves references from one object to another: a Database
// naming the Role that is to own it, an App selecting the one Secret
// labelled for it. It gives the engine one generic step for it, Resolve,
// which finds the referenced object, waits until it is ready, hands it to
// the later steps of the pass, and wires the watch that brings the next
// pass when the referenced object changes.
//
// # References
//
// A Reference names its object by name (ByName) or by a label selector
// that must match exactly one object (BySelector, ByLabels). It looks in
// the referring object's namespace unless it names another
// (Reference.InNamespace), which the step allows only when made with
// AllowCrossNamespace; for a cluster-scoped kind the namespace does not
// matter.
//
// # The step
//
//	owner := ref.Resolve[*v1.Database, *v1.Role]("owner",
//		func(d *v1.Database) ref.Reference { return ref.ByName(d.Spec.Owner) })
//	r := &bosun.Reconciler[*v1.Database]{
//		Name:  "database",
//		Steps: []bosun.Step[*v1.Database]{owner, createDatabase{owner: owner}},
//	}
//	// in createDatabase.Do:
//	role, _ := s.owner.Resolved(req)
//
// The step owns one condition, "OwnerResolved" here (WithCondition names
// another: by default the step's name with its first letter in upper case
// and "Resolved"). While the reference does not resolve to a ready object,
// the condition is False with a reason that says why (see Reasons) and a
// message that names the kind and the object or selector, Ready summarises
// it, and the pass ends quietly: no error log, no event, no retry timer.
// The watch brings the next pass when the referenced object appears,
// changes or goes, so an object waiting for its reference costs nothing
// until then. When the reference resolves, the condition is True
// ("Resolved", naming the object) and the object is in Pass.Values under
// the step's Key, which Resolved reads.
//
// An object is ready, by default, when its Ready condition is True and
// describes its current generation; an object whose type keeps no
// conditions is ready once it exists. ReadyWhen says otherwise; a function
// that returns true takes any object that exists. An object being deleted
// is never ready. A read that fails fails the pass, with the reason
// "ReferenceReadFailed" on the condition, and is retried with backoff.
//
// # Reasons
//
// The reasons of the condition the step owns (Error.Reason gives that of a
// Lookup error), each a conditions.Reason constant of this package:
//
//	| reason              | constant                  | when                                                                     |
//	|---------------------|---------------------------|--------------------------------------------------------------------------|
//	| Resolved            | ReasonResolved            | the reference names one object, and it is ready (True)                   |
//	| NoReference         | ReasonNoReference         | the referring object names no object (True with Optional, else False)    |
//	| ReferenceNotFound   | ReasonReferenceNotFound   | no object has the name, or none matches the selector                     |
//	| ReferenceAmbiguous  | ReasonReferenceAmbiguous  | several objects match the selector                                       |
//	| ReferenceNotReady   | ReasonReferenceNotReady   | the object exists but is not ready, or is being deleted                  |
//	| ReferenceInvalid    | ReasonReferenceInvalid    | the reference cannot name an object: a name and a selector both, a selector that does not parse, or no namespace for a namespaced kind |
//	| ReferenceNotAllowed | ReasonReferenceNotAllowed | the reference leads into another namespace without AllowCrossNamespace   |
//	| ReferenceReadFailed | ReasonReferenceReadFailed | reading the referenced object failed; the pass fails and is retried      |
//
// # Wiring
//
// The step sets itself up when the controller is built (bosun.Setuper),
// once per builder: a field index on the referring kind that holds where
// each reference leads, and a watch of the referenced kind whose handler
// looks the changed object up in that index. A name reference is found in
// the index directly; a selector reference is found among the referrers
// selecting in the object's namespace, by matching its labels, before and
// after the change. Nothing else needs wiring:
//
//	bosun.ControllerManagedBy[*v1.Database](mgr).Complete(r)
//
// # Deletion
//
// Do does not run while the referring object is being deleted; a Cleanup
// that needs the referenced object finds it with Step.Lookup, which
// resolves without checking readiness or touching the conditions.
//
// Maturity: stable. Its API and conditions have held through the examples.
package ref
