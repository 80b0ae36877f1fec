package plan

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/yaml"
)

// Client returns c sending every write with dryRun=All and recording in r
// what it would change. live reads the objects as the API server holds them
// before each write (a client without a cache); reads go to c.
func (r *Recorder) Client(c client.Client, live client.Reader) client.Client {
	return &recordingClient{Client: c, rec: r, live: live}
}

// recordingClient is the client of Recorder.Client.
type recordingClient struct {
	client.Client
	rec  *Recorder
	live client.Reader
}

var _ client.Client = (*recordingClient)(nil)

// Get reads obj, or its proposed edit (see Recorder.Edit).
func (c *recordingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Client.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	return c.rec.overlay(obj, c.Scheme())
}

// List reads list, each object with a proposed edit as edited.
func (c *recordingClient) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Client.List(ctx, list, opts...); err != nil {
		return err
	}
	return c.rec.overlayList(list, c.Scheme())
}

func (c *recordingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	sent, err := c.toMap(obj)
	if err != nil {
		return err
	}
	if err := c.Client.Create(ctx, obj, append(opts, client.DryRunAll)...); err != nil {
		return err
	}
	c.rec.add(ctx, Write{Verb: "create", Object: c.name(obj, sent), Fields: fields(c.rec.sensitive.hide(c.kind(obj), sent))})
	return nil
}

func (c *recordingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	return c.changed(ctx, "update", "", obj, func(ctx context.Context, obj client.Object) error {
		return c.Client.Update(ctx, obj, append(opts, client.DryRunAll)...)
	})
}

func (c *recordingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if patch.Type() == types.ApplyPatchType {
		return c.applyPatch(ctx, obj, patch, opts...)
	}
	return c.changed(ctx, "patch", "", obj, func(ctx context.Context, obj client.Object) error {
		return c.Client.Patch(ctx, obj, patch, append(opts, client.DryRunAll)...)
	})
}

func (c *recordingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if err := c.Client.Delete(ctx, obj, append(opts, client.DryRunAll)...); err != nil {
		return err
	}
	c.rec.add(ctx, Write{Verb: "delete", Object: c.name(obj, nil)})
	return nil
}

func (c *recordingClient) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	if err := c.Client.DeleteAllOf(ctx, obj, append(opts, client.DryRunAll)...); err != nil {
		return err
	}
	o := &client.DeleteAllOfOptions{}
	o.ApplyOptions(opts)
	what := c.name(obj, nil)
	if o.LabelSelector != nil {
		what += " with labels " + o.LabelSelector.String()
	}
	c.rec.add(ctx, Write{Verb: "delete all of", Object: what})
	return nil
}

func (c *recordingClient) Apply(ctx context.Context, ac runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	sent, err := jsonMap(ac)
	if err != nil {
		return err
	}
	return c.applied(ctx, sent, func() (map[string]any, error) {
		if err := c.Client.Apply(ctx, ac, append(opts, client.DryRunAll)...); err != nil {
			return nil, err
		}
		return jsonMap(ac)
	})
}

// applyPatch records a server-side apply sent as a patch, as Apply does. An
// apply whose obj asks for metadata only is sent with an object of obj's
// kind, whose answer is whole, and obj takes the metadata of that answer.
func (c *recordingClient) applyPatch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	body, err := patch.Data(obj)
	if err != nil {
		return err
	}
	// An apply patch is YAML, or JSON, which YAML reads too.
	sent := map[string]any{}
	if err := yaml.Unmarshal(body, &sent); err != nil {
		return fmt.Errorf("decoding an apply patch: %w", err)
	}
	return c.applied(ctx, sent, func() (map[string]any, error) {
		whole := &unstructured.Unstructured{}
		whole.SetGroupVersionKind((&unstructured.Unstructured{Object: sent}).GroupVersionKind())
		whole.SetNamespace(obj.GetNamespace())
		whole.SetName(obj.GetName())
		if err := c.Client.Patch(ctx, whole, patch, append(opts, client.DryRunAll)...); err != nil {
			return nil, err
		}
		into, from := any(obj), whole.Object
		if partial, ok := obj.(*metav1.PartialObjectMetadata); ok {
			into = &partial.ObjectMeta
			from, _ = whole.Object["metadata"].(map[string]any)
		}
		return whole.Object, runtime.DefaultUnstructuredConverter.FromUnstructured(from, into)
	})
}

// applied runs write, the dry run of a server-side apply of sent, which
// returns the server's answer, and records the child it would create or
// the fields it would change, read from the live object before.
func (c *recordingClient) applied(ctx context.Context, sent map[string]any, write func() (map[string]any, error)) error {
	u := &unstructured.Unstructured{Object: sent}
	before := &unstructured.Unstructured{}
	before.SetGroupVersionKind(u.GroupVersionKind())
	err := c.live.Get(ctx, client.ObjectKey{Namespace: u.GetNamespace(), Name: u.GetName()}, before)
	missing := apierrors.IsNotFound(err)
	if err != nil && !missing {
		return err
	}
	after, err := write()
	if err != nil {
		return err
	}
	name := u.GetKind() + " " + ref(u.GetNamespace(), u.GetName())
	gk := u.GroupVersionKind().GroupKind()
	if missing {
		c.rec.add(ctx, Write{Verb: "create", Object: name, Fields: fields(c.rec.sensitive.hide(gk, sent))})
		return nil
	}
	if d := diff(c.rec.sensitive.hide(gk, before.Object), c.rec.sensitive.hide(gk, after)); len(d) > 0 {
		c.rec.add(ctx, Write{Verb: "apply", Object: name, Fields: d})
	}
	return nil
}

func (c *recordingClient) Status() client.SubResourceWriter { return c.SubResource("status") }

func (c *recordingClient) SubResource(sub string) client.SubResourceClient {
	return &recordingSubResource{SubResourceClient: c.Client.SubResource(sub), c: c, sub: sub}
}

// recordingSubResource is the subresource client of a recordingClient.
type recordingSubResource struct {
	client.SubResourceClient
	c   *recordingClient
	sub string
}

func (s *recordingSubResource) Create(ctx context.Context, obj, subResource client.Object, opts ...client.SubResourceCreateOption) error {
	if err := s.SubResourceClient.Create(ctx, obj, subResource, append(opts, client.DryRunAll)...); err != nil {
		return err
	}
	s.c.rec.add(ctx, Write{Verb: "create " + s.sub, Object: s.c.name(obj, nil)})
	return nil
}

func (s *recordingSubResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.c.changed(ctx, "update", s.sub, obj, func(ctx context.Context, obj client.Object) error {
		return s.SubResourceClient.Update(ctx, obj, append(opts, client.DryRunAll)...)
	})
}

func (s *recordingSubResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	return s.c.changed(ctx, "patch", s.sub, obj, func(ctx context.Context, obj client.Object) error {
		return s.SubResourceClient.Patch(ctx, obj, patch, append(opts, client.DryRunAll)...)
	})
}

func (s *recordingSubResource) Apply(ctx context.Context, ac runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	if err := s.SubResourceClient.Apply(ctx, ac, append(opts, client.DryRunAll)...); err != nil {
		return err
	}
	what := fmt.Sprintf("%T", ac)
	if m, err := jsonMap(ac); err == nil {
		u := &unstructured.Unstructured{Object: m}
		what = u.GetKind() + " " + ref(u.GetNamespace(), u.GetName())
	}
	s.c.rec.add(ctx, Write{Verb: "apply " + s.sub, Object: what})
	return nil
}

// changed runs write, a dry-run write of obj (of its subresource sub, when
// not empty) with the context it is given, and records the fields it
// would change, read from the live object before and from the server's
// answer, which write leaves in the object it is handed. A write whose
// obj asks for metadata only (the engine's status write,
// metav1.PartialObjectMetadata) is sent with an object of obj's kind,
// whose answer is whole, and obj takes the metadata of that answer.
func (c *recordingClient) changed(ctx context.Context, verb, sub string, obj client.Object, write func(context.Context, client.Object) error) error {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return err
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(gvk)
	err = c.live.Get(ctx, client.ObjectKeyFromObject(obj), live)
	missing := apierrors.IsNotFound(err)
	if err != nil && !missing {
		return err
	}
	partial, _ := obj.(*metav1.PartialObjectMetadata)
	if partial != nil {
		whole := &unstructured.Unstructured{}
		whole.SetGroupVersionKind(gvk)
		whole.SetNamespace(partial.GetNamespace())
		whole.SetName(partial.GetName())
		obj = whole
	}
	if err := write(ctx, obj); err != nil {
		return err
	}
	if partial != nil {
		m, _ := obj.(*unstructured.Unstructured).Object["metadata"].(map[string]any)
		var meta metav1.ObjectMeta
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &meta); err != nil {
			return err
		}
		partial.ObjectMeta = meta
	}
	if sub != "" {
		verb += " " + sub
	}
	after, err := c.toMap(obj)
	if err != nil {
		return err
	}
	gk := gvk.GroupKind()
	if missing {
		c.rec.add(ctx, Write{Verb: "create", Object: c.name(obj, after), Fields: fields(c.rec.sensitive.hide(gk, after))})
		return nil
	}
	before, err := c.normal(obj, live.Object)
	if err != nil {
		return err
	}
	if d := diff(c.rec.sensitive.hide(gk, before), c.rec.sensitive.hide(gk, after)); len(d) > 0 {
		c.rec.add(ctx, Write{Verb: verb, Object: c.name(obj, after), Fields: d})
	}
	return nil
}

// toMap returns obj as a map.
func (c *recordingClient) toMap(obj client.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.DeepCopy().Object, nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

// normal returns m, an object read as unstructured, in the form toMap
// gives obj's type: through the Go type when obj has one, so that both
// sides of a diff show the same zero values.
func (c *recordingClient) normal(obj client.Object, m map[string]any) (map[string]any, error) {
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return m, nil
	}
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return nil, err
	}
	typed, err := c.Scheme().New(gvk)
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, typed); err != nil {
		return nil, err
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
}

// kind returns the kind of obj, from the scheme when it knows obj's type.
func (c *recordingClient) kind(obj client.Object) schema.GroupKind {
	if gvk, err := apiutil.GVKForObject(obj, c.Scheme()); err == nil {
		return gvk.GroupKind()
	}
	return obj.GetObjectKind().GroupVersionKind().GroupKind()
}

// name names obj as "Kind namespace/name".
func (c *recordingClient) name(obj client.Object, m map[string]any) string {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if gvk, err := apiutil.GVKForObject(obj, c.Scheme()); err == nil {
		kind = gvk.Kind
	}
	if k, ok := m["kind"].(string); ok && kind == "" {
		kind = k
	}
	return kind + " " + ref(obj.GetNamespace(), obj.GetName())
}

func jsonMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	return m, json.Unmarshal(b, &m)
}
