package plan

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/bosunkit/bosun"
)

// Write is one write a pass would make.
type Write struct {
	// Verb is what the write does: "create", "update", "patch", "apply",
	// "delete", "delete all of", with " status" (or the subresource) for a
	// write of a subresource; "external create", "external update",
	// "external delete" or "external repair credentials" for a call of a
	// managed step.
	Verb string
	// Object names what is written: "ConfigMap ns/name", or, for an
	// external resource, its external name and the step.
	Object string
	// Fields are the fields of a create ("path: value") and the changes of
	// the other writes ("path: old -> new"), each value of a sensitive
	// field shown as "(sensitive value)".
	Fields []string
}

// Key names a reconciled object in the plan.
type Key struct {
	// Controller is the reconciler's name.
	Controller string
	// Kind is the object's kind.
	Kind string
	// Object is its namespace and name.
	Object types.NamespacedName
}

// Outcome is what the first pass of an object would do.
type Outcome struct {
	Writes []Write
	// Error is the pass's error; empty when it succeeded.
	Error string
}

// Recorder collects the writes of the passes of one plan. The zero value
// is not usable: call NewRecorder.
type Recorder struct {
	// sensitive are the fields whose values the plan does not print.
	sensitive Sensitive

	mu sync.Mutex
	// pending holds the writes of passes that have not ended, by reconcile ID.
	pending map[types.UID][]Write
	// stray holds the writes made outside any pass.
	stray []Write
	// done holds the first pass of each object, by controller and object.
	done map[passKey]Outcome
	// edits are the proposed edits of objects (see Edit).
	edits map[editKey]edit
}

type passKey struct {
	controller string
	object     types.NamespacedName
}

// NewRecorder returns an empty Recorder that prints the fields of
// sensitive, and those of Secrets, without their values.
func NewRecorder(sensitive Sensitive) *Recorder {
	return &Recorder{sensitive: sensitive, pending: map[types.UID][]Write{}, done: map[passKey]Outcome{}}
}

var _ bosun.PassObserver = (*Recorder)(nil)

type ctxKey struct{}

// Into returns ctx carrying r.
func Into(ctx context.Context, r *Recorder) context.Context {
	return context.WithValue(ctx, ctxKey{}, r)
}

// From returns the Recorder ctx carries, or nil.
func From(ctx context.Context) *Recorder {
	r, _ := ctx.Value(ctxKey{}).(*Recorder)
	return r
}

// add notes w, made with ctx.
func (r *Recorder) add(ctx context.Context, w Write) {
	id := controller.ReconcileIDFromContext(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if id == "" {
		r.stray = append(r.stray, w)
		return
	}
	r.pending[id] = append(r.pending[id], w)
}

// External records a call of a managed step that plan mode does not make:
// op ("create", "update", "delete" or "repair credentials") of the external
// resource name, by the step called step.
func (r *Recorder) External(ctx context.Context, step, op, name string) {
	if name == "" {
		name = "(not named yet)"
	}
	r.add(ctx, Write{Verb: "external " + op, Object: fmt.Sprintf("%q (step %s)", name, step)})
}

// ObservePass files the writes of the pass that ctx ran under the object
// it reconciled, when it is the object's first pass.
func (r *Recorder) ObservePass(ctx context.Context, report bosun.PassReport) {
	id := controller.ReconcileIDFromContext(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	writes := r.pending[id]
	delete(r.pending, id)
	k := passKey{report.Controller, report.Object}
	if _, ok := r.done[k]; ok {
		return
	}
	r.done[k] = Outcome{Writes: writes, Error: report.Error}
}

// Passed reports whether the object of k has had its pass.
func (r *Recorder) Passed(k Key) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.done[passKey{k.Controller, k.Object}]
	return ok
}

// Report writes the plan of the objects keys, sorted, to w and returns
// how many of them had no pass and how many failed.
func (r *Recorder) Report(w io.Writer, keys []Key) (missing, failed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys = append([]Key(nil), keys...)
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Controller != b.Controller {
			return a.Controller < b.Controller
		}
		if a.Object.Namespace != b.Object.Namespace {
			return a.Object.Namespace < b.Object.Namespace
		}
		return a.Object.Name < b.Object.Name
	})
	changing := 0
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %s (controller %s)\n", k.Kind, ref(k.Object.Namespace, k.Object.Name), k.Controller)
		for ek, e := range r.edits {
			if ek.gk.Kind != k.Kind || ek.obj != k.Object {
				continue
			}
			if len(e.changes) == 0 {
				b.WriteString("  edit: changes nothing\n")
			}
			for _, c := range e.changes {
				fmt.Fprintf(&b, "  edit: %s\n", c)
			}
		}
		out, ok := r.done[passKey{k.Controller, k.Object}]
		switch {
		case !ok:
			missing++
			b.WriteString("  no pass ran: nothing is known\n")
			continue
		case out.Error != "":
			failed++
			fmt.Fprintf(&b, "  the pass failed: %s\n", out.Error)
		}
		if len(out.Writes) == 0 {
			if out.Error == "" {
				b.WriteString("  no change\n")
			}
			continue
		}
		changing++
		writeAll(&b, out.Writes)
	}
	if len(r.stray) > 0 {
		b.WriteString("writes outside any pass\n")
		writeAll(&b, r.stray)
	}
	fmt.Fprintf(w, "plan: %d objects, %d would change, %d failed, %d had no pass\n%s", len(keys), changing, failed, missing, b.String())
	return missing, failed
}

func writeAll(b *strings.Builder, ws []Write) {
	for _, w := range ws {
		fmt.Fprintf(b, "  %s %s\n", w.Verb, w.Object)
		for _, f := range w.Fields {
			fmt.Fprintf(b, "      %s\n", f)
		}
	}
}

// ref is "namespace/name", or the name alone without a namespace.
func ref(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// Edit makes edited, an object as a proposed edit would leave it (the
// answer of a dry run of the edit), stand in for the live object live in
// every read through the clients and readers of r, and records what the
// edit changes, each value of a sensitive field hidden, for the report.
// edited keeps live's resourceVersion, so that the passes' dry-run
// writes are made against the live object.
func (r *Recorder) Edit(live, edited *unstructured.Unstructured) {
	edited = edited.DeepCopy()
	edited.SetResourceVersion(live.GetResourceVersion())
	gk := edited.GroupVersionKind().GroupKind()
	changes := diff(r.sensitive.hide(gk, withoutStatus(live.Object)), r.sensitive.hide(gk, withoutStatus(edited.Object)))
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.edits == nil {
		r.edits = map[editKey]edit{}
	}
	r.edits[editKey{gk, types.NamespacedName{Namespace: edited.GetNamespace(), Name: edited.GetName()}}] = edit{obj: edited, changes: changes}
}

// edited returns the edit of the object of kind gk called key, if there
// is one.
func (r *Recorder) edited(gk schema.GroupKind, key types.NamespacedName) (edit, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.edits[editKey{gk, key}]
	return e, ok
}

// Reader returns rd, but that an edited object (see Edit) reads as edited.
func (r *Recorder) Reader(rd client.Reader, scheme *runtime.Scheme) client.Reader {
	return editedReader{Reader: rd, rec: r, scheme: scheme}
}

// overlay replaces obj, as read, with its edit, if it has one.
func (r *Recorder) overlay(obj client.Object, scheme *runtime.Scheme) error {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil //nolint:nilerr // a kind the scheme does not know is no edited kind
	}
	e, ok := r.edited(gvk.GroupKind(), client.ObjectKeyFromObject(obj))
	if !ok {
		return nil
	}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		o.Object = e.obj.DeepCopy().Object
	case *metav1.PartialObjectMetadata:
		md, _ := e.obj.Object["metadata"].(map[string]any)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(runtime.DeepCopyJSON(md), &o.ObjectMeta); err != nil {
			return fmt.Errorf("reading the edit of %s: %w", obj.GetName(), err)
		}
	default:
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(e.obj.DeepCopy().Object, obj); err != nil {
			return fmt.Errorf("reading the edit of %s: %w", obj.GetName(), err)
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
	}
	return nil
}

// overlayList replaces the items of list, as read, with their edits.
func (r *Recorder) overlayList(list client.ObjectList, scheme *runtime.Scheme) error {
	r.mu.Lock()
	none := len(r.edits) == 0
	r.mu.Unlock()
	if none {
		return nil
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil //nolint:nilerr // not a list of objects
	}
	for _, it := range items {
		if obj, ok := it.(client.Object); ok {
			if err := r.overlay(obj, scheme); err != nil {
				return err
			}
		}
	}
	return meta.SetList(list, items)
}

// Sensitive reports whether the plan hides fields of objects of the kind
// gk: a Secret's, or the fields the operator marks.
func (r *Recorder) Sensitive(gk schema.GroupKind) bool {
	return gk == secret || len(r.sensitive[gk]) > 0
}
