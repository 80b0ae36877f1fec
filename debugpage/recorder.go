package debugpage

import (
	"container/list"
	"context"
	"slices"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/bosunkit/bosun"
)

// The default bounds of the history a Page keeps.
const (
	// defaultPassesPerObject is how many passes of each object are kept.
	defaultPassesPerObject = 20
	// defaultObjectsPerController is how many objects of each reconciler
	// are kept; beyond it, the one reconciled least recently is dropped.
	defaultObjectsPerController = 1000
)

// Options bound the history of a Page.
type Options struct {
	// PassesPerObject is how many passes of each object are kept. Zero
	// means 20.
	PassesPerObject int
	// ObjectsPerController is how many objects of each reconciler are
	// kept. Zero means 1000.
	ObjectsPerController int
}

// recorder keeps the recent passes of each object of each reconciler.
type recorder struct {
	perObject, perController int

	mu    sync.Mutex
	ctrls map[string]*controllerLog
}

// controllerLog is the history of one reconciler's objects.
type controllerLog struct {
	objects map[types.NamespacedName]*list.Element // of *objectLog
	// recent orders the objects by their last pass, most recent first.
	recent *list.List
	passes int
}

// objectLog is the history of one object: its passes, oldest first.
type objectLog struct {
	key    types.NamespacedName
	passes []bosun.PassReport
}

func newRecorder(o Options) *recorder {
	r := &recorder{perObject: o.PassesPerObject, perController: o.ObjectsPerController, ctrls: map[string]*controllerLog{}}
	if r.perObject <= 0 {
		r.perObject = defaultPassesPerObject
	}
	if r.perController <= 0 {
		r.perController = defaultObjectsPerController
	}
	return r
}

// ObservePass keeps a copy of the report.
func (r *recorder) ObservePass(_ context.Context, report bosun.PassReport) {
	report.Steps = slices.Clone(report.Steps)
	report.Conditions = slices.Clone(report.Conditions)
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.ctrls[report.Controller]
	if c == nil {
		c = &controllerLog{objects: map[types.NamespacedName]*list.Element{}, recent: list.New()}
		r.ctrls[report.Controller] = c
	}
	c.passes++
	el, ok := c.objects[report.Object]
	if ok {
		c.recent.MoveToFront(el)
	} else {
		el = c.recent.PushFront(&objectLog{key: report.Object})
		c.objects[report.Object] = el
		for c.recent.Len() > r.perController {
			last := c.recent.Back()
			c.recent.Remove(last)
			delete(c.objects, last.Value.(*objectLog).key)
		}
	}
	ol := el.Value.(*objectLog)
	ol.passes = append(ol.passes, report)
	if n := len(ol.passes) - r.perObject; n > 0 {
		ol.passes = slices.Delete(ol.passes, 0, n)
	}
}

// ObjectSummary is an object of a reconciler, with its last pass.
type ObjectSummary struct {
	Object   types.NamespacedName
	LastPass bosun.PassReport
	// Passes is how many of its passes are kept.
	Passes int
}

// objects returns the objects of controller, most recently reconciled
// first, and how many passes of the controller were seen in all.
func (r *recorder) objects(controller string) ([]ObjectSummary, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.ctrls[controller]
	if c == nil {
		return nil, 0
	}
	out := make([]ObjectSummary, 0, c.recent.Len())
	for el := c.recent.Front(); el != nil; el = el.Next() {
		ol := el.Value.(*objectLog)
		out = append(out, ObjectSummary{Object: ol.key, LastPass: ol.passes[len(ol.passes)-1], Passes: len(ol.passes)})
	}
	return out, c.passes
}

// passes returns the kept passes of one object, newest first.
func (r *recorder) passes(controller string, key types.NamespacedName) []bosun.PassReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.ctrls[controller]
	if c == nil {
		return nil
	}
	el, ok := c.objects[key]
	if !ok {
		return nil
	}
	ps := slices.Clone(el.Value.(*objectLog).passes)
	slices.Reverse(ps)
	return ps
}

// controllers returns the names of the reconcilers with passes, sorted.
func (r *recorder) controllers() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.ctrls))
	for n := range r.ctrls {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// since formats how long ago t was, for people.
func since(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	switch {
	case d < time.Second:
		return "just now"
	case d < time.Minute:
		return d.Round(time.Second).String() + " ago"
	default:
		return d.Round(time.Minute).String() + " ago"
	}
}
