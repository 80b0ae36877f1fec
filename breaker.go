package bosun

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/go-logr/logr"

	"github.com/bosunkit/bosun/conditions"
)

// MassDeletion is the mass-deletion breaker of a reconciler whose steps
// clean up (Options.MassDeletion). A deleted CustomResourceDefinition, a
// deleted namespace, an uninstall or a bad sync deletes many objects at
// once, and their cleanups would delete everything behind them: the
// breaker holds the cleanup of an object being deleted, deleting nothing,
// when
//
//   - the CustomResourceDefinition of the reconciled kind is itself being
//     deleted, or
//   - more than Count objects of the kind in the object's namespace (in
//     the cluster, for a cluster-scoped kind) entered deletion within
//     Window of the object's own deletion, before or after it, counted by
//     their metadata.deletionTimestamp, those already gone included; or
//     more than Share of them. An operator that was down while they were
//     deleted judges them all the same when it comes back.
//
// The count is of the objects the reconciler's cache holds, by namespace,
// so that one tenant's mass deletion holds nothing of another's; a
// replica of a shard ring counts its share.
//
// A held object has DeletionBlocked True and Ready False, both with
// conditions.ReasonDeletionHeld and a message that says why and how to go
// on, a Warning event of that reason, and counts in the metric
// bosun_deletion_held_total. It stays held, whatever the count does
// later, until an administrator lets its cleanup go on (the annotation
// AnnotationAllowMassDeletion "true" on the object, or Allow for the
// whole operator), releases its finalizer on purpose
// (AnnotationReleaseFinalizer: "orphan" keeps what it would delete), or
// the deletion is otherwise resolved. Objects whose cleanup began before
// the breaker tripped go on: at most Count cleanups begin within a window.
// A restarted operator knows of a cleanup that began only from a
// DeletionBlocked the deadline set (Options.DeletionDeadline); it holds
// the others whose deletion counts as a mass one, which are let go the
// same way. A reconciler registered
// without bosun's Builder has the breaker too, counting the deletions its
// passes see.
//
// The zero value is the default: on, Count 20, Window 10 minutes, no
// Share. See docs/OPERATIONS.md, "Mass deletions".
type MassDeletion struct {
	// Allow turns the breaker off: every cleanup goes on. Package
	// operator's --allow-mass-deletion turns it off for every reconciler
	// of the operator (Observation.AllowMassDeletion).
	Allow bool
	// Count is how many objects of the kind in one namespace may enter
	// deletion within Window before the breaker holds the cleanup of the
	// others. Zero
	// means 20; a negative Count holds every cleanup until it is allowed
	// (deletion protection).
	Count int
	// Share, when positive, also trips the breaker when more than this
	// share of the kind's objects in a namespace (those cached, and those
	// gone within Window) entered deletion within Window, and more than
	// one did. It must be below 1.
	Share float64
	// Window is how far apart deletions count together: an object's
	// deletion is judged with those within Window of it. Zero means 10
	// minutes.
	Window time.Duration
}

// The defaults of MassDeletion.
const (
	defaultMassDeletionCount  = 20
	defaultMassDeletionWindow = 10 * time.Minute
)

// count returns the breaker's Count with its default.
func (m MassDeletion) count() int {
	if m.Count == 0 {
		return defaultMassDeletionCount
	}
	return m.Count
}

// window returns the breaker's Window with its default.
func (m MassDeletion) window() time.Duration {
	if m.Window <= 0 {
		return defaultMassDeletionWindow
	}
	return m.Window
}

// check returns what is wrong with m, or "".
func (m MassDeletion) check() string {
	switch {
	case m.Share < 0 || m.Share >= 1:
		return fmt.Sprintf("MassDeletion.Share %g is not at least 0 and below 1", m.Share)
	case m.Window < 0:
		return fmt.Sprintf("MassDeletion.Window %s is negative", m.Window)
	}
	return ""
}

// deletionCount counts, from the events of the reconciled kind's
// informer, the objects in the cache and those that entered deletion, by
// namespace ("" for a cluster-scoped kind), for the mass-deletion breaker.
type deletionCount struct {
	mu sync.Mutex
	ns map[string]*namespaceCount
	// held holds the message of each object the breaker held, until the
	// informer drops the object: a hold stays for the process's life, also
	// for a kind without conditions, where its status cannot keep it.
	held map[types.UID]string
}

// namespaceCount is the count of one namespace.
type namespaceCount struct {
	// cached is how many objects the informer holds.
	cached int
	// entered holds when each object that entered deletion did (its
	// deletionTimestamp), and whether it is gone; entries older than the
	// window are dropped as the count is read.
	entered map[types.UID]enteredDeletion
}

// enteredDeletion is an object of namespaceCount.entered.
type enteredDeletion struct {
	at   time.Time
	gone bool
	// cleared is set once a pass let the object's cleanup begin: the
	// breaker does not hold a cleanup under way.
	cleared bool
}

func newDeletionCount() *deletionCount {
	return &deletionCount{ns: map[string]*namespaceCount{}, held: map[types.UID]string{}}
}

// handler returns the informer event handler that keeps the count.
func (d *deletionCount) handler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { d.note(obj, 1, false) },
		UpdateFunc: func(_, obj any) { d.note(obj, 0, false) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			d.note(obj, -1, true)
		},
	}
}

// note counts obj in or out of the cache by cached, and records its
// deletion, if it entered one; gone says the informer dropped it.
func (d *deletionCount) note(obj any, cached int, gone bool) {
	o, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.ns[o.GetNamespace()]
	if c == nil {
		c = &namespaceCount{entered: map[types.UID]enteredDeletion{}}
		d.ns[o.GetNamespace()] = c
	}
	c.cached += cached
	if gone {
		delete(d.held, o.GetUID())
	}
	e, seen := c.entered[o.GetUID()]
	switch {
	case seen:
		e.gone = e.gone || gone
	case o.GetDeletionTimestamp() != nil:
		e = enteredDeletion{at: o.GetDeletionTimestamp().Time, gone: gone}
	default:
		if c.cached <= 0 && len(c.entered) == 0 {
			delete(d.ns, o.GetNamespace())
		}
		return
	}
	c.entered[o.GetUID()] = e
}

// heldAs returns the message of obj's hold, if the breaker held it.
func (d *deletionCount) heldAs(obj client.Object) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	msg, ok := d.held[obj.GetUID()]
	return msg, ok
}

// hold records that the breaker held obj, with msg.
func (d *deletionCount) hold(obj client.Object, msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.held[obj.GetUID()] = msg
}

// cleared reports whether a pass let the cleanup of obj begin.
func (d *deletionCount) cleared(obj client.Object) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.ns[obj.GetNamespace()]
	return c != nil && c.entered[obj.GetUID()].cleared
}

// clear records that a pass let the cleanup of obj begin.
func (d *deletionCount) clear(obj client.Object) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if c := d.ns[obj.GetNamespace()]; c != nil {
		if e, ok := c.entered[obj.GetUID()]; ok {
			e.cleared = true
			c.entered[obj.GetUID()] = e
		}
	}
}

// within returns how many objects of self's namespace entered deletion
// within window of self's own deletion (before or after it, those gone
// included), and how many objects that makes in all: those cached and
// those gone. The object judged, self, is counted although the
// informer's event of its deletion may not have reached the count yet,
// so that of the objects a count lets through none is missed: at most
// the count of them. Gone objects are forgotten two windows after their
// deletion, as of now.
func (d *deletionCount) within(self client.Object, window time.Duration, now time.Time) (n, all int) {
	d.note(self, 0, false)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.forget(now.Add(-2 * window))
	c := d.ns[self.GetNamespace()]
	if c == nil {
		return 0, 0
	}
	at := self.GetDeletionTimestamp().Time
	from, to := at.Add(-window), at.Add(window)
	gone := 0
	for _, e := range c.entered {
		if e.at.Before(from) || e.at.After(to) {
			continue
		}
		n++
		if e.gone {
			gone++
		}
	}
	return n, max(c.cached, 0) + gone
}

// forget drops the gone objects that entered deletion before before, and
// the namespaces left with nothing. The caller holds d.mu.
func (d *deletionCount) forget(before time.Time) {
	for ns, c := range d.ns {
		for uid, e := range c.entered {
			if e.gone && e.at.Before(before) {
				delete(c.entered, uid)
			}
		}
		if c.cached <= 0 && len(c.entered) == 0 {
			delete(d.ns, ns)
		}
	}
}

// breaker is a reconciler's mass-deletion breaker at work: the count of
// its kind's deletions, and the name of the kind's
// CustomResourceDefinition.
type breaker struct {
	count *deletionCount
	// crd is the name of the kind's CustomResourceDefinition, empty for a
	// kind that has none.
	crd string
	// refused is set once the API server refused to show the
	// CustomResourceDefinition, which is then not asked for again.
	refused atomic.Bool
}

// crdName returns the name of the CustomResourceDefinition of the kind
// gvk, as mapper maps it to its resource; "" for the kinds Kubernetes
// serves itself.
func crdName(mapper meta.RESTMapper, gvk schema.GroupVersionKind) string {
	if builtInGroup(gvk.Group) || mapper == nil {
		return ""
	}
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return ""
	}
	return m.Resource.Resource + "." + gvk.Group
}

// builtInGroup reports whether group is one of Kubernetes' own, which no
// CustomResourceDefinition serves.
func builtInGroup(group string) bool {
	return !strings.Contains(group, ".") || group == "k8s.io" || strings.HasSuffix(group, ".k8s.io")
}

// hold returns why the breaker holds the cleanup of obj, being deleted,
// under the settings md, and whether this pass is the first to hold it;
// "" when it does not hold it. An object held before stays held; one an
// administrator allowed (allowed: the operator's switch or the object's
// annotation) is not, nor one whose cleanup is under way (a pass let it
// begin: this process remembers, or the deadline's DeletionBlocked says
// so); otherwise the count, then the kind's
// CustomResourceDefinition, read through reader, decide.
func (b *breaker) hold(ctx context.Context, obj client.Object, md MassDeletion, allowed bool, reader client.Reader, log logr.Logger) (msg string, fresh bool, err error) {
	if b == nil || md.Allow || allowed {
		return "", false, nil
	}
	if co, ok := obj.(conditions.Object); ok {
		if c := conditions.Find(co.GetConditions(), conditions.TypeDeletionBlocked); c != nil {
			if c.Status == metav1.ConditionTrue && c.Reason == string(conditions.ReasonDeletionHeld) {
				return c.Message, false, nil
			}
			// A deadline's DeletionBlocked: the cleanup began.
			return "", false, nil
		}
	}
	if msg, ok := b.count.heldAs(obj); ok {
		return msg, false, nil
	}
	if b.count.cleared(obj) {
		return "", false, nil
	}
	why := b.tripped(md, obj, time.Now())
	if why == "" {
		if why, err = b.crdDeleting(ctx, reader, log); err != nil {
			return "", false, err
		}
	}
	if why == "" {
		b.count.clear(obj)
		return "", false, nil
	}
	msg = fmt.Sprintf("the cleanup is held, nothing is deleted: %s, as a deleted CustomResourceDefinition or namespace, an uninstall or a bad sync would do; "+
		"to let it go on, annotate the object %s=true (or run the operator with --allow-mass-deletion); "+
		"to keep what it would delete, annotate it %s=orphan",
		why, AnnotationAllowMassDeletion, AnnotationReleaseFinalizer)
	b.count.hold(obj, msg)
	return msg, true, nil
}

// crdDeleting says why the cleanup is held when the reconciled kind's
// CustomResourceDefinition is being deleted, "" when it is not; an API
// server that refuses to show it turns the check off, with a log line.
func (b *breaker) crdDeleting(ctx context.Context, reader client.Reader, log logr.Logger) (string, error) {
	if b.crd == "" || b.refused.Load() {
		return "", nil
	}
	crd := &metav1.PartialObjectMetadata{}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	switch err := reader.Get(ctx, client.ObjectKey{Name: b.crd}, crd); {
	case apierrors.IsForbidden(err):
		if !b.refused.Swap(true) {
			log.Info("mass-deletion breaker cannot read the kind's CustomResourceDefinition: its deletion will not hold cleanups; grant get on it",
				"customResourceDefinition", b.crd, "error", err.Error())
		}
		return "", nil
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("mass-deletion breaker: reading CustomResourceDefinition %s: %w", b.crd, err)
	}
	if crd.GetDeletionTimestamp() == nil {
		return "", nil
	}
	return fmt.Sprintf("the CustomResourceDefinition %s is being deleted (asked at %s)",
		b.crd, crd.GetDeletionTimestamp().UTC().Format(time.RFC3339)), nil
}

// tripped returns why md holds the cleanup of obj, being deleted, judged
// at now by the deletions within md's window of obj's; "" when it does
// not.
func (b *breaker) tripped(md MassDeletion, obj client.Object, now time.Time) string {
	count := md.count()
	if count < 0 {
		return "every cleanup of the kind waits to be allowed (MassDeletion.Count is negative)"
	}
	window := md.window()
	ns := obj.GetNamespace()
	// Deletion times are stored to the second.
	n, all := b.count.within(obj, window+time.Second, now)
	where := "in namespace " + ns
	if ns == "" {
		where = "in the cluster"
	}
	switch {
	case n > count:
		return fmt.Sprintf("%d objects of the kind %s entered deletion within %s, more than %d", n, where, window, count)
	case md.Share > 0 && n > 1 && float64(n) > md.Share*float64(all):
		return fmt.Sprintf("%d of the kind's %d objects %s entered deletion within %s, more than a share of %g", n, all, where, window, md.Share)
	}
	return ""
}
