package managed

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/managed/changelog"
)

// logChange adds to the object's change log, when its type keeps one
// (changelog.Object), that the step performed op on the external resource
// name with the given outcome; err is the call's error, if any. The entry
// is written with the pass's status.
func (s *Step[T]) logChange(req *bosun.Pass[T], op, name string, outcome changelog.Outcome, err error) {
	l, ok := any(req.Object).(changelog.Object)
	if !ok {
		return
	}
	entries := l.GetChangeLog()
	if n := len(entries); op == OpDelete && outcome == changelog.OutcomeSucceeded && n > 0 {
		// Cleanup asks again at each pass until the resource is gone: one
		// entry says it all.
		if last := entries[n-1]; last.Operation == op && last.ExternalName == name && last.Outcome == outcome {
			return
		}
	}
	e := changelog.Entry{
		Time:         metav1.NewTime(s.cfg.now()),
		Controller:   req.Controller,
		Instance:     req.Object.GetAnnotations()[bosun.AnnotationOperatorInstance],
		Operation:    op,
		ExternalName: name,
		Generation:   req.Object.GetGeneration(),
		Outcome:      outcome,
	}
	if err != nil {
		e.Message = err.Error()
	}
	l.SetChangeLog(changelog.Append(entries, e, s.cfg.changeLogLength))
}

// outcomeOf returns the outcome of a call that returned err.
func outcomeOf(err error) changelog.Outcome {
	switch {
	case err == nil:
		return changelog.OutcomeSucceeded
	case outcomeUnknown(err):
		return changelog.OutcomeUnknown
	default:
		return changelog.OutcomeFailed
	}
}
