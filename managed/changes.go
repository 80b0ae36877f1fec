package managed

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/managed/changelog"
)

// changes is the stage that keeps the object's change log (see package
// changelog): it adds an entry for each operation and puts back those a
// failed status write lost.
type changes[T client.Object] struct {
	// length bounds the log (WithChangeLogLength).
	length int
	now    func() time.Time
	// memory keeps the entries added until a pass sees them saved.
	memory *memory
}

// newChanges returns the change log stage of a step configured by cfg,
// which remembers in m.
func newChanges[T client.Object](cfg *config, m *memory) *changes[T] {
	return &changes[T]{length: cfg.changeLogLength, now: cfg.now, memory: m}
}

// add adds to the object's change log, when its type keeps one
// (changelog.Object), that the step performed op on the external resource
// name with the given outcome; err is the call's error, if any. The entry
// is written with the pass's status, and kept in the step's memory until
// a later pass sees it saved (see restore).
func (s *changes[T]) add(req *bosun.Pass[T], op, name string, outcome changelog.Outcome, err error) {
	l, ok := any(req.Object).(changelog.Object)
	if !ok {
		return
	}
	entries := l.GetChangeLog()
	if n := len(entries); op == opDelete && outcome == changelog.OutcomeSucceeded && n > 0 {
		// Cleanup asks again at each pass until the resource is gone: one
		// entry says it all.
		if last := entries[n-1]; last.Operation == op && last.ExternalName == name && last.Outcome == outcome {
			return
		}
	}
	e := changelog.Entry{
		Time:         metav1.NewTime(s.now()),
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
	entries = changelog.Append(entries, e, s.length)
	l.SetChangeLog(entries)
	s.memory.change(req.Object, func(m *memo) {
		m.changes = append(slices.Clip(m.changes), entries[len(entries)-1])
	})
}

// restore puts back into the object's change log the entries the
// step added in earlier passes and does not find there: the status write
// that carried them failed (a conflict, an API server that refused it, a
// stop before it). It forgets the entries it finds, which are saved, and
// those that the log's bound would drop anyway. Call it before anything
// else of a pass: it reads the log as loaded.
func (s *changes[T]) restore(req *bosun.Pass[T]) {
	l, ok := any(req.Object).(changelog.Object)
	if !ok {
		return
	}
	pending := s.memory.get(req.Object).changes
	if len(pending) == 0 {
		return
	}
	entries := l.GetChangeLog()
	var lost []changelog.Entry
	for _, e := range pending {
		if !slices.ContainsFunc(entries, func(x changelog.Entry) bool { return sameEntry(x, e) }) {
			lost = append(lost, e)
		}
	}
	if len(lost) > 0 {
		merged := append(slices.Clone(entries), lost...)
		slices.SortStableFunc(merged, func(a, b changelog.Entry) int { return a.Time.Compare(b.Time.Time) })
		if n := s.length; len(merged) > n {
			merged = merged[len(merged)-n:]
		}
		lost = slices.DeleteFunc(lost, func(e changelog.Entry) bool {
			return !slices.ContainsFunc(merged, func(x changelog.Entry) bool { return sameEntry(x, e) })
		})
		l.SetChangeLog(merged)
		req.Log.V(1).Info("restored change log entries whose status write was lost", "entries", len(lost))
	}
	s.memory.change(req.Object, func(m *memo) { m.changes = lost })
}

// sameEntry reports whether a and b are one entry, one of them perhaps as
// the API server stored it: its time to the second.
func sameEntry(a, b changelog.Entry) bool {
	at, bt := a.Time.Truncate(time.Second), b.Time.Truncate(time.Second)
	a.Time, b.Time = metav1.Time{}, metav1.Time{}
	return at.Equal(bt) && a == b
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
