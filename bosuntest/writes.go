package bosuntest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// The verbs of a Write.
const (
	VerbCreate      = "create"
	VerbUpdate      = "update"
	VerbPatch       = "patch"
	VerbApply       = "apply"
	VerbDelete      = "delete"
	VerbDeleteAllOf = "deleteallof"
)

// errWatchUnsupported is returned by Watch on a client from WriteCounter.Wrap
// or ConflictInjector.Wrap when the wrapped client cannot watch, as a
// manager's client cannot.
var errWatchUnsupported = errors.New("bosuntest: the wrapped client cannot watch")

// Write describes one write made through a client.
type Write struct {
	// Verb is one of the Verb constants.
	Verb string
	// Subresource is the subresource written, such as "status", or empty
	// for the object itself.
	Subresource string
	// Kind is the object's kind, from the client's scheme or the object's
	// own type information; the Go type when neither knows it.
	Kind string
	// Namespace and Name identify the object. Name is empty for
	// VerbDeleteAllOf.
	Namespace, Name string
}

// Op returns the verb, the subresource if any, and the kind, separated by
// spaces: "patch status Greeting". It is the key of WriteCounter.Counts.
func (w Write) Op() string {
	if w.Subresource == "" {
		return w.Verb + " " + w.Kind
	}
	return w.Verb + " " + w.Subresource + " " + w.Kind
}

// verbOp returns the verb and the subresource if any: "patch status". It is
// what ConflictInjector.Verbs lists.
func (w Write) verbOp() string {
	if w.Subresource == "" {
		return w.Verb
	}
	return w.Verb + " " + w.Subresource
}

// String returns the operation and the object: "patch status Greeting ns/name".
func (w Write) String() string {
	if w.Namespace == "" {
		return w.Op() + " " + w.Name
	}
	return w.Op() + " " + w.Namespace + "/" + w.Name
}

// WriteCounter counts the writes made through the clients it wraps: creates,
// updates, patches, server-side applies and deletes, of objects and of their
// subresources such as status. Reads are not counted. A write counts when the
// client is asked to make it, whether or not the API server accepts it.
//
// The zero value is ready to use and is safe for concurrent use. One counter
// may wrap several clients, which then share the counts.
type WriteCounter struct {
	mu     sync.Mutex
	writes []Write
}

// Wrap returns a client that makes its calls through c and counts its writes.
func (w *WriteCounter) Wrap(c client.Client) client.WithWatch {
	return wrapWrites(c, func(_ context.Context, wr Write, _ schema.GroupVersionKind) error {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.writes = append(w.writes, wr)
		return nil
	})
}

// Total returns the number of writes counted since the counter was made or
// last Reset.
func (w *WriteCounter) Total() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.writes)
}

// Counts returns the number of writes per operation, keyed by Write.Op:
// "create ConfigMap", "patch status Greeting". Operations never seen are
// absent. The map is the caller's.
func (w *WriteCounter) Counts() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	counts := make(map[string]int)
	for _, wr := range w.writes {
		counts[wr.Op()]++
	}
	return counts
}

// Writes returns the counted writes in the order they were made. The slice
// is the caller's.
func (w *WriteCounter) Writes() []Write {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Write(nil), w.writes...)
}

// Reset forgets every counted write.
func (w *WriteCounter) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = nil
}

// NewClientFunc returns a function for ctrl.Options.NewClient (or
// cluster.Options.NewClient) that creates a client as client.New does and
// wraps it with each of wraps in turn: the first wrapper sits next to the API
// server, the last one sees every call first. So
//
//	NewClientFunc(injector.Wrap, counter.Wrap)
//
// counts the writes the injector answers with a conflict as well as the ones
// it lets through.
func NewClientFunc(wraps ...func(client.Client) client.WithWatch) client.NewClientFunc {
	return func(cfg *rest.Config, opts client.Options) (client.Client, error) {
		c, err := client.New(cfg, opts)
		if err != nil {
			return nil, fmt.Errorf("bosuntest: creating client: %w", err)
		}
		for _, wrap := range wraps {
			c = wrap(c)
		}
		return c, nil
	}
}

// writeHook is called before each write made through a client from
// wrapWrites, with the write and its object's group, version and kind (zero
// when unknown). A non-nil error is returned to the caller instead of making
// the write.
type writeHook func(ctx context.Context, w Write, gvk schema.GroupVersionKind) error

// wrapWrites returns a client that calls hook before every write it makes
// through c.
func wrapWrites(c client.Client, hook writeHook) client.WithWatch {
	ww, ok := c.(client.WithWatch)
	if !ok {
		ww = watchless{c}
	}
	funcs := objectWrites(hook)
	subResourceWrites(&funcs, hook)
	return interceptor.NewClient(ww, funcs)
}

// objectWrites returns the interceptor functions that call hook before
// each write of an object.
func objectWrites(hook writeHook) interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			w, gvk := describe(c, VerbCreate, "", obj)
			if err := hook(ctx, w, gvk); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			w, gvk := describe(c, VerbUpdate, "", obj)
			if err := hook(ctx, w, gvk); err != nil {
				return err
			}
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			w, gvk := describe(c, patchVerb(patch), "", obj)
			if err := hook(ctx, w, gvk); err != nil {
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			w, gvk := describeApply("", obj)
			if err := hook(ctx, w, gvk); err != nil {
				return err
			}
			return c.Apply(ctx, obj, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			w, gvk := describe(c, VerbDelete, "", obj)
			if err := hook(ctx, w, gvk); err != nil {
				return err
			}
			return c.Delete(ctx, obj, opts...)
		},
		DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
			w, gvk := describe(c, VerbDeleteAllOf, "", obj)
			o := &client.DeleteAllOfOptions{}
			o.ApplyOptions(opts)
			w.Name = ""
			if o.Namespace != "" {
				w.Namespace = o.Namespace
			}
			if err := hook(ctx, w, gvk); err != nil {
				return err
			}
			return c.DeleteAllOf(ctx, obj, opts...)
		},
	}
}

// subResourceWrites sets in funcs the interceptor functions that call hook
// before each write of a subresource.
func subResourceWrites(funcs *interceptor.Funcs, hook writeHook) {
	funcs.SubResourceCreate = func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
		w, gvk := describe(c, VerbCreate, sub, obj)
		if err := hook(ctx, w, gvk); err != nil {
			return err
		}
		return c.SubResource(sub).Create(ctx, obj, subObj, opts...)
	}
	funcs.SubResourceUpdate = func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		w, gvk := describe(c, VerbUpdate, sub, obj)
		if err := hook(ctx, w, gvk); err != nil {
			return err
		}
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}
	funcs.SubResourcePatch = func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
		w, gvk := describe(c, patchVerb(patch), sub, obj)
		if err := hook(ctx, w, gvk); err != nil {
			return err
		}
		return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
	}
	funcs.SubResourceApply = func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
		w, gvk := describeApply(sub, obj)
		if err := hook(ctx, w, gvk); err != nil {
			return err
		}
		return c.SubResource(sub).Apply(ctx, obj, opts...)
	}
}

// describe returns the Write of verb on obj's subresource sub, and obj's
// group, version and kind.
func describe(c client.Client, verb, sub string, obj client.Object) (Write, schema.GroupVersionKind) {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		gvk = schema.GroupVersionKind{}
	}
	w := Write{Verb: verb, Subresource: sub, Kind: gvk.Kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if w.Kind == "" {
		w.Kind = goTypeName(obj)
	}
	return w, gvk
}

// patchVerb is the verb of a write of patch: VerbApply for a server-side
// apply sent as a patch (an apply whose answer is asked for as metadata
// only), VerbPatch otherwise.
func patchVerb(patch client.Patch) string {
	if patch.Type() == types.ApplyPatchType {
		return VerbApply
	}
	return VerbPatch
}

// applyConfiguration is what server-side apply configurations, typed and
// unstructured, tell about their object.
type applyConfiguration interface {
	GetAPIVersion() *string
	GetKind() *string
	GetName() *string
	GetNamespace() *string
}

// describeApply returns the Write of a server-side apply of obj's
// subresource sub, and obj's group, version and kind.
func describeApply(sub string, obj runtime.ApplyConfiguration) (Write, schema.GroupVersionKind) {
	w := Write{Verb: VerbApply, Subresource: sub}
	var gvk schema.GroupVersionKind
	switch ac := obj.(type) {
	case client.Object: // unstructured, from client.ApplyConfigurationFromUnstructured
		w.Namespace = ac.GetNamespace()
		w.Name = ac.GetName()
		gvk = ac.GetObjectKind().GroupVersionKind()
	case applyConfiguration:
		w.Namespace = ptr.Deref(ac.GetNamespace(), "")
		w.Name = ptr.Deref(ac.GetName(), "")
		if gv, err := schema.ParseGroupVersion(ptr.Deref(ac.GetAPIVersion(), "")); err == nil {
			gvk = gv.WithKind(ptr.Deref(ac.GetKind(), ""))
		}
	}
	w.Kind = gvk.Kind
	if w.Kind == "" {
		w.Kind = goTypeName(obj)
	}
	return w, gvk
}

// goTypeName names the type of v without package path or pointer star.
func goTypeName(v any) string {
	name := fmt.Sprintf("%T", v)
	name = strings.TrimLeft(name, "*")
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// watchless gives a client that cannot watch the Watch method of
// client.WithWatch.
type watchless struct {
	client.Client
}

// Watch implements client.WithWatch by failing: the wrapped client cannot
// watch.
func (watchless) Watch(context.Context, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	return nil, errWatchUnsupported
}
