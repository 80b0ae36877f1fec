package managed

import (
	"fmt"
	"time"

	"github.com/bosunkit/bosun/conditions"
)

// claim is what the step knows, at the start of a pass, about how the
// object came to its external name.
type claim struct {
	// created: the step created the resource, or may have (a create was
	// started and its outcome never recorded).
	created bool
	// asked: the user asked for adoption: the external name was set by
	// hand (the step records a name it chose only with a pending create).
	asked bool
}

// claimOf reads the claim from the object's annotations.
func claimOf(ann map[string]string) claim {
	_, pending := ann[AnnotationCreatePending]
	return claim{created: createdHere(ann), asked: ann[AnnotationExternalName] != "" && !pending}
}

// createdHere reports whether the annotations record a create of the
// step's own that may have made the resource now under the external name:
// the last recorded outcome is a success, or a create was started after the
// last recorded outcome (a stop in the crash window, or an answer that was
// lost). A pending time that does not parse counts as the most recent.
func createdHere(ann map[string]string) bool {
	pending, hasPending := annotationTime(ann, AnnotationCreatePending, time.Unix(1<<40, 0))
	succeeded, hasSucceeded := annotationTime(ann, AnnotationCreateSucceeded, time.Time{})
	failed, hasFailed := annotationTime(ann, AnnotationCreateFailed, time.Time{})
	if hasPending && (!hasSucceeded || pending.After(succeeded)) && (!hasFailed || pending.After(failed)) {
		return true
	}
	return hasSucceeded && (!hasFailed || succeeded.After(failed))
}

// ours decides whether the existing resource obs describes is obj's to
// manage, and returns the conflict to report when it is not:
//
//   - a resource marked with obj's identity is obj's;
//   - one marked with another identity never is;
//   - an unmarked one is obj's when the step created it (or may have, in
//     the crash window), when the user asked for adoption, and when the
//     policies only observe (observing is always allowed).
func (s *Step[T]) ours(obj T, name string, obs Observation, pol Policies, c claim) error {
	switch {
	case obs.Owner == Identity(obj):
		return nil
	case obs.Owner != "":
		return s.conflict(fmt.Errorf("%s is marked as another object's: this object leaves it alone; "+
			"give this object another external name (annotation %s, or the operator's naming), or remove the other object's resource",
			describe(name), AnnotationExternalName))
	case c.created || c.asked || pol.observing():
		return nil
	default:
		return s.conflict(fmt.Errorf("%s exists and was not created for this object: to adopt it, set annotation %s to %q by hand; "+
			"otherwise give this object another external name", describe(name), AnnotationExternalName, name))
	}
}

// conflict is the error of a resource that is not the object's.
func (s *Step[T]) conflict(err error) error {
	return &conditions.Error{Type: s.cfg.synced, Reason: ReasonExternalConflict, Severity: conditions.SeverityWarning, Err: err}
}

// named returns a copy of obj that carries the external name the step uses
// for it: the recorded one or, when the step chooses names, a new one. A
// chosen name is not put on obj here: it is committed with the pending mark
// of a create, or with the object once the resource under it proved to be
// the object's. So a recorded name without a pending mark is one the user
// set.
func (s *Step[T]) named(obj T) T {
	t := obj.DeepCopyObject().(T)
	if ExternalName(t) == "" && !s.cfg.providerNames {
		SetExternalName(t, s.cfg.nameFn(t))
	}
	return t
}
