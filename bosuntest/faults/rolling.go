package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// rollWatch judges every version of the children of Rolling's kind the
// API server stores while a cell's change rolls out: no parent may have
// more than Rolling.MaxUnavailable of them not ready at once.
type rollWatch struct {
	ready func(client.Object) bool
	most  int

	mu       sync.Mutex
	children map[types.UID]rollChild
	versions int
	unready  int // versions seen of a child not ready
	worst    int // the most children of one parent not ready at once
	bad      []string
	failed   []string // the watch's errors
	ended    bool     // the watch ended
	stopped  bool     // check stopped the watch: what follows is not judged
	stop     func()
}

// rollChild is what the watch knows of one child.
type rollChild struct {
	name   string
	parent types.UID
	ready  bool
}

// watchRollout starts watching the children of Rolling's kind in the
// namespace of cell c.
func watchRollout(c *cell) *rollWatch {
	r := c.b.op.Rolling
	wc, err := client.NewWithWatch(c.b.cp.Config, client.Options{Scheme: c.b.cp.Scheme})
	if err != nil {
		c.t.Fatal(err)
	}
	list, _ := r.List.DeepCopyObject().(client.ObjectList)
	wi, err := wc.Watch(c.t.Context(), list, client.InNamespace(c.ns))
	if err != nil {
		c.t.Fatalf("watching the children: %v", err)
	}
	w := &rollWatch{ready: r.Ready, most: r.MaxUnavailable, children: map[types.UID]rollChild{}, stop: wi.Stop}
	c.t.Cleanup(wi.Stop)
	go w.judge(wi.ResultChan())
	return w
}

// judge reads the watch to its end.
func (w *rollWatch) judge(events <-chan watch.Event) {
	for ev := range events {
		w.see(ev)
	}
	w.mu.Lock()
	w.ended = !w.stopped
	w.mu.Unlock()
}

// see takes in one event and judges the parent of its child.
func (w *rollWatch) see(ev watch.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	obj, ok := ev.Object.(client.Object)
	if !ok {
		if st, isStatus := ev.Object.(*metav1.Status); isStatus {
			w.failed = append(w.failed, st.Message)
		}
		return
	}
	switch ev.Type {
	case watch.Added, watch.Modified:
	case watch.Deleted:
		delete(w.children, obj.GetUID())
		return
	default:
		return
	}
	w.versions++
	owner := metav1.GetControllerOf(obj)
	if owner == nil {
		return
	}
	ch := rollChild{name: obj.GetName(), parent: owner.UID, ready: obj.GetDeletionTimestamp() == nil && w.ready(obj)}
	w.children[obj.GetUID()] = ch
	if ch.ready {
		return
	}
	w.unready++
	var down []string
	for _, o := range w.children {
		if o.parent == ch.parent && !o.ready {
			down = append(down, o.name)
		}
	}
	w.worst = max(w.worst, len(down))
	if len(down) > w.most {
		slices.Sort(down)
		w.bad = append(w.bad, fmt.Sprintf("%d children of %s not ready at once, at most %d: %s (at resourceVersion %s)",
			len(down), owner.Name, w.most, strings.Join(down, ", "), obj.GetResourceVersion()))
	}
}

// changeMidRollout changes the objects' specs again once the watch saw
// a child not ready, the first change's roll-out under way: the second
// change must not take more children down, although the cache may still
// show the children the first one took down as they were, ready.
func (w *rollWatch) changeMidRollout(c *cell, objs []client.Object) {
	err := poll(c.t.Context(), c.b.bound(), func(context.Context) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.unready == 0 {
			return errors.New("no child seen not ready yet")
		}
		return nil
	})
	if err != nil {
		c.t.Fatalf("the roll-out of the spec change did not start within %s: %v", c.b.bound(), err)
	}
	if err := c.b.change(c.t.Context(), objs); err != nil {
		c.t.Fatal(err)
	}
}

// check stops the watch and checks what it saw in cell c: never more than
// MaxUnavailable children of one parent not ready at once, and at least
// one child not ready, the roll-out's own work.
func (w *rollWatch) check(c *cell) {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	if w.ended || len(w.failed) > 0 {
		errs = append(errs, fmt.Errorf("the watch of the children ended early, versions may be missing: %s", strings.Join(w.failed, "; ")))
	}
	if len(w.bad) > 0 {
		errs = append(errs, fmt.Errorf("the roll-out took too many children down at once in %d of %d versions: %s", len(w.bad), w.versions, strings.Join(w.bad, "; ")))
	}
	if w.unready == 0 {
		errs = append(errs, fmt.Errorf("no child was seen not ready in %d versions: the roll-out showed nothing to judge", w.versions))
	}
	if err := errors.Join(errs...); err != nil {
		c.t.Error(err)
	}
	c.result.extra = append(c.result.extra,
		"children versions judged", strconv.Itoa(w.versions), "",
		"most children of one object not ready at once", strconv.Itoa(w.worst), strconv.Itoa(w.most))
	c.result.oracles++
}
