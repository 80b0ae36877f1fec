package bosun_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/internal/trim"
	"github.com/bosunkit/bosun/tuning"
)

// TestLeanCache checks that a manager whose cache options went through
// LeanCache caches Widgets without their managedFields, which the API
// server still has, after a transform set before.
func TestLeanCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	transformed := make(chan struct{}, 1)
	mgr := bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{Configure: func(o *ctrl.Options) {
		o.Cache.DefaultTransform = func(in any) (any, error) {
			select {
			case transformed <- struct{}{}:
			default:
			}
			return in, nil
		}
		tuning.LeanCache(&o.Cache)
	}}, func(ctrl.Manager) error { return nil })
	f.create("lean", 1, 1, nil)
	key := client.ObjectKey{Namespace: f.ns, Name: "lean"}

	var live testapi.Widget
	if err := mgr.GetAPIReader().Get(t.Context(), key, &live); err != nil {
		t.Fatal(err)
	}
	if len(live.ManagedFields) == 0 {
		t.Fatal("the API server returned no managedFields: nothing to strip")
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var cached testapi.Widget
		if err := mgr.GetClient().Get(ctx, key, &cached); err != nil {
			return err
		}
		if cached.ManagedFields != nil {
			return errors.New("the cached Widget has managedFields")
		}
		return nil
	})
	select {
	case <-transformed:
	default:
		t.Error("the transform set before LeanCache did not run")
	}
}

// TestLeanCacheTrimsBeforeDecoding checks that a lean cache made in the
// manager's NewCache, whose options carry the manager's HTTP client,
// receives objects without managedFields from the API server: a transform
// that runs before LeanCache's sees none on a Widget, and sees them on a
// child of a set, which keeps them.
func TestTuningTrimsBeforeDecoding(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var mu sync.Mutex
	arrived := map[string]int{} // name: most managedFields entries decoded
	mgr := bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{Configure: func(o *ctrl.Options) {
		o.NewCache = func(cfg *rest.Config, co cache.Options) (cache.Cache, error) {
			if co.HTTPClient == nil {
				return nil, errors.New("the manager passed no HTTP client")
			}
			co.DefaultTransform = func(in any) (any, error) {
				if obj, ok := in.(client.Object); ok {
					mu.Lock()
					arrived[obj.GetName()] = max(arrived[obj.GetName()], len(obj.GetManagedFields()))
					mu.Unlock()
				}
				return in, nil
			}
			tuning.LeanCache(&co)
			return cache.New(cfg, co)
		}
		tuning.Enable(o)
	}}, func(ctrl.Manager) error { return nil })
	f.create("trimmed", 1, 1, nil)
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "child", Labels: map[string]string{trim.KeepLabel: "s"}}}
	if err := f.c.Create(t.Context(), child); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var w testapi.Widget
		if err := mgr.GetClient().Get(ctx, client.ObjectKey{Namespace: f.ns, Name: "trimmed"}, &w); err != nil {
			return err
		}
		var cm corev1.ConfigMap
		if err := mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(child), &cm); err != nil {
			return err
		}
		if len(cm.ManagedFields) == 0 {
			return errors.New("the cached child has no managedFields")
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	if n := arrived["trimmed"]; n != 0 {
		t.Errorf("the Widget arrived with %d managedFields entries; want them dropped before decoding", n)
	}
	if n := arrived["child"]; n == 0 {
		t.Error("the child of a set arrived without managedFields; want them kept")
	}
}

// TestLeanCacheKeepsTransformErrors checks that an error of the transform
// set before LeanCache is returned, with no object.
func TestLeanCacheKeepsTransformErrors(t *testing.T) {
	boom := errors.New("boom")
	o := cache.Options{DefaultTransform: func(any) (any, error) { return nil, boom }}
	tuning.LeanCache(&o)
	out, err := o.DefaultTransform(&metav1.PartialObjectMetadata{})
	if !errors.Is(err, boom) || out != nil {
		t.Errorf("transform = %v, %v; want nil, %v", out, err, boom)
	}
	o = cache.Options{}
	tuning.LeanCache(&o)
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	out, err = o.DefaultTransform(obj)
	if err != nil || out != obj || obj.ManagedFields != nil {
		t.Errorf("transform = %v, %v; want the object without managedFields", out, err)
	}
}

// countingMapper counts the lookups of RESTMapping.
type countingMapper struct {
	meta.RESTMapper
	calls int
}

func (m *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	m.calls++
	return m.RESTMapper.RESTMapping(gk, versions...)
}

// TestLeanCacheRemembersMappings checks that the mapper of LeanCache's
// options asks the one it wraps once per kind and version, and each time
// for anything else.
func TestTuningRemembersMappings(t *testing.T) {
	widget := schema.GroupVersionKind{Group: "example.bosun.dev", Version: "v1", Kind: "Widget"}
	gadget := schema.GroupVersionKind{Group: "example.bosun.dev", Version: "v1", Kind: "Gadget"}
	tests := []struct {
		name string
		// look looks up mappings through m and returns the scopes found,
		// or the error.
		look      func(m meta.RESTMapper, add func(schema.GroupVersionKind)) []string
		wantCalls int
		want      []string
	}{{
		name: "one kind and version, looked up three times",
		look: func(m meta.RESTMapper, _ func(schema.GroupVersionKind)) []string {
			var out []string
			for range 3 {
				out = append(out, scopeOf(m.RESTMapping(widget.GroupKind(), widget.Version)))
			}
			return out
		},
		wantCalls: 1,
		want:      []string{"namespace", "namespace", "namespace"},
	}, {
		name: "a kind not found yet is asked for again",
		look: func(m meta.RESTMapper, add func(schema.GroupVersionKind)) []string {
			out := []string{scopeOf(m.RESTMapping(gadget.GroupKind(), gadget.Version))}
			add(gadget)
			out = append(out, scopeOf(m.RESTMapping(gadget.GroupKind(), gadget.Version)))
			return append(out, scopeOf(m.RESTMapping(gadget.GroupKind(), gadget.Version)))
		},
		wantCalls: 2,
		want:      []string{"no match", "namespace", "namespace"},
	}, {
		name: "no version or several: asked each time",
		look: func(m meta.RESTMapper, _ func(schema.GroupVersionKind)) []string {
			return []string{
				scopeOf(m.RESTMapping(widget.GroupKind())),
				scopeOf(m.RESTMapping(widget.GroupKind())),
				scopeOf(m.RESTMapping(widget.GroupKind(), "v1", "v2")),
				scopeOf(m.RESTMapping(widget.GroupKind(), "v1", "v2")),
			}
		},
		wantCalls: 4,
		want:      []string{"namespace", "namespace", "namespace", "namespace"},
	}, {
		name: "a changed answer does not change the one kept",
		look: func(m meta.RESTMapper, _ func(schema.GroupVersionKind)) []string {
			first, err := m.RESTMapping(widget.GroupKind(), widget.Version)
			if err != nil {
				return []string{err.Error()}
			}
			first.Scope = meta.RESTScopeRoot
			return []string{scopeOf(m.RESTMapping(widget.GroupKind(), widget.Version))}
		},
		wantCalls: 1,
		want:      []string{"namespace"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := meta.NewDefaultRESTMapper([]schema.GroupVersion{widget.GroupVersion()})
			inner.Add(widget, meta.RESTScopeNamespace)
			counting := &countingMapper{RESTMapper: inner}
			o := tunedCacheOptions(t, cache.Options{Mapper: counting})
			got := tt.look(o.Mapper, func(gvk schema.GroupVersionKind) { inner.Add(gvk, meta.RESTScopeNamespace) })
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scopes (-want +got):\n%s", diff)
			}
			if counting.calls != tt.wantCalls {
				t.Errorf("the wrapped mapper asked %d times, want %d", counting.calls, tt.wantCalls)
			}
		})
	}
}

// tunedCacheOptions returns co as tuning.Enable hands it to the cache the
// manager makes.
func tunedCacheOptions(t *testing.T, co cache.Options) cache.Options {
	t.Helper()
	var got cache.Options
	o := ctrl.Options{NewCache: func(_ *rest.Config, co cache.Options) (cache.Cache, error) {
		got = co
		return nil, nil
	}}
	tuning.Enable(&o)
	if _, err := o.NewCache(nil, co); err != nil {
		t.Fatal(err)
	}
	return got
}

// scopeOf returns the scope of a mapping, or "no match".
func scopeOf(m *meta.RESTMapping, err error) string {
	if meta.IsNoMatchError(err) {
		return "no match"
	}
	if err != nil {
		return err.Error()
	}
	return string(m.Scope.Name())
}

// TestLeanCacheTransform checks what the transform of LeanCache keeps of
// managedFields: nothing, but the entries of a set's children that are
// not of a subresource, which the children step reads to find drift.
func TestLeanCacheTransform(t *testing.T) {
	t.Parallel()
	apply := metav1.ManagedFieldsEntry{Manager: "bosun", Operation: metav1.ManagedFieldsOperationApply}
	update := metav1.ManagedFieldsEntry{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}
	status := metav1.ManagedFieldsEntry{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}
	tests := []struct {
		name   string
		labels map[string]string
		in     []metav1.ManagedFieldsEntry
		want   []metav1.ManagedFieldsEntry
	}{
		{"object", nil, []metav1.ManagedFieldsEntry{apply, update, status}, nil},
		{"object with other labels", map[string]string{"app": "web"}, []metav1.ManagedFieldsEntry{apply, update}, nil},
		{"child of a set", map[string]string{"bosun.dev/set": "web"}, []metav1.ManagedFieldsEntry{update, status, apply},
			[]metav1.ManagedFieldsEntry{update, apply}},
		{"child of a set, only updates", map[string]string{"bosun.dev/set": "web"}, []metav1.ManagedFieldsEntry{update}, []metav1.ManagedFieldsEntry{update}},
		{"child of a set, only status", map[string]string{"bosun.dev/set": "web"}, []metav1.ManagedFieldsEntry{status}, nil},
		{"no managedFields", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o cache.Options
			tuning.LeanCache(&o)
			in := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Labels: tt.labels, ManagedFields: tt.in}}
			out, err := o.DefaultTransform(in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.(*testapi.Widget).ManagedFields); diff != "" {
				t.Errorf("managedFields (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLeanCacheSharesStrings checks that the transform of LeanCache gives
// two objects decoded apart one copy of the strings they hold alike, and
// changes no value: the objects compare equal to what they were.
func TestLeanCacheSharesStrings(t *testing.T) {
	t.Parallel()
	decode := func(name string) *testapi.Widget {
		t.Helper()
		// Decoded from JSON, as a cache gets it: every string its own copy.
		body := `{"apiVersion":"test.bosun.dev/v1","kind":"Widget","metadata":{"name":"` + name + `","namespace":"shop",` +
			`"labels":{"app.kubernetes.io/name":"web","tier":"front"},"annotations":{"note":"` + strings.Repeat("x", 100) + `"},` +
			`"finalizers":["test.bosun.dev/cleanup"],"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"u1"}]},` +
			`"status":{"conditions":[{"type":"Ready","status":"True","reason":"Succeeded","message":"all good","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`
		var w testapi.Widget
		if err := json.Unmarshal([]byte(body), &w); err != nil {
			t.Fatal(err)
		}
		return &w
	}
	var o cache.Options
	tuning.LeanCache(&o)
	a, b := decode("a"), decode("b")
	wantA, wantB := a.DeepCopy(), b.DeepCopy()
	for _, w := range []*testapi.Widget{a, b} {
		if _, err := o.DefaultTransform(w); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(wantA, a); diff != "" {
		t.Errorf("the transform changed a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantB, b); diff != "" {
		t.Errorf("the transform changed b (-want +got):\n%s", diff)
	}
	labelKey := func(w *testapi.Widget, k string) string {
		for key := range w.Labels {
			if key == k {
				return key
			}
		}
		return ""
	}
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	for _, c := range []struct {
		what string
		x, y string
		want bool
	}{
		{"apiVersion", a.APIVersion, b.APIVersion, true},
		{"kind", a.Kind, b.Kind, true},
		{"namespace", a.Namespace, b.Namespace, true},
		{"a label key", labelKey(a, "app.kubernetes.io/name"), labelKey(b, "app.kubernetes.io/name"), true},
		{"a label value", a.Labels["tier"], b.Labels["tier"], true},
		{"a finalizer", a.Finalizers[0], b.Finalizers[0], true},
		{"an owner's kind", a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind, true},
		{"a condition's type", a.Status.Conditions[0].Type, b.Status.Conditions[0].Type, true},
		{"a condition's reason", a.Status.Conditions[0].Reason, b.Status.Conditions[0].Reason, true},
		{"a condition's message", a.Status.Conditions[0].Message, b.Status.Conditions[0].Message, true},
		{"a long annotation value", a.Annotations["note"], b.Annotations["note"], false},
	} {
		if got := same(c.x, c.y); got != c.want {
			t.Errorf("%s shared: %v, want %v", c.what, got, c.want)
		}
	}
}

// BenchmarkLeanCacheTransform measures the transform of LeanCache on a
// Widget as a watch event brings it: managedFields to drop, and strings
// to share.
func BenchmarkLeanCacheTransform(b *testing.B) {
	var o cache.Options
	tuning.LeanCache(&o)
	in := &testapi.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "shop", Labels: map[string]string{"app": "web"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "bosun"}}},
		Status: testapi.WidgetStatus{Conditions: []metav1.Condition{{Type: "Ready", Status: "True", Reason: string(conditions.ReasonSucceeded)}, {Type: "Computed", Status: "True", Reason: "Divided"}}},
	}
	b.ReportAllocs()
	for b.Loop() {
		w := in.DeepCopy()
		if _, err := o.DefaultTransform(w); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLeanCacheListsByNamespace checks that a lean cache lists the objects
// of a namespace, with or without a label selector, whether it watches
// the whole cluster or given namespaces, as controller-runtime's does and
// with tuning (whose informers of given namespaces keep no namespace
// index).
func TestLeanCacheListsByNamespace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	other := bosuntest.Namespace(t, f.c)
	want := map[string][]string{f.ns: {"a1", "a2", "a3"}, other: {"b1", "b2"}}
	for ns, names := range want {
		for i, name := range names {
			w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: testapi.WidgetSpec{Value: 1, Divisor: 1}}
			if i == 0 {
				w.Labels = map[string]string{"first": "yes"}
			}
			if err := f.c.Create(t.Context(), w); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		namespaces []string
		tuned      bool
	}{{nil, false}, {[]string{f.ns, other}, false}, {nil, true}, {[]string{f.ns, other}, true}} {
		namespaces := c.namespaces
		mgr := bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{Namespaces: namespaces, Configure: func(o *ctrl.Options) {
			tuning.LeanCache(&o.Cache)
			if c.tuned {
				tuning.Enable(o)
			}
		}}, func(ctrl.Manager) error { return nil })
		for ns, names := range want {
			bosuntest.Eventually(t, func(ctx context.Context) error {
				var all, first testapi.WidgetList
				if err := mgr.GetClient().List(ctx, &all, client.InNamespace(ns)); err != nil {
					return err
				}
				if err := mgr.GetClient().List(ctx, &first, client.InNamespace(ns), client.MatchingLabels{"first": "yes"}); err != nil {
					return err
				}
				if diff := cmp.Diff(names, widgetNames(all.Items)); diff != "" {
					return fmt.Errorf("cache over %v, namespace %s (-want +got):\n%s", namespaces, ns, diff)
				}
				if diff := cmp.Diff(names[:1], widgetNames(first.Items)); diff != "" {
					return fmt.Errorf("cache over %v, namespace %s, first only (-want +got):\n%s", namespaces, ns, diff)
				}
				return nil
			})
		}
	}
}

// widgetNames returns the sorted names of ws.
func widgetNames(ws []testapi.Widget) []string {
	out := make([]string, 0, len(ws))
	for i := range ws {
		out = append(out, ws[i].Name)
	}
	slices.Sort(out)
	return out
}

// TestLeanCacheMatchesUpstream is LeanCache's differential test: Widgets
// and ConfigMaps read from a lean cache, with and without tuning (Enable
// called before LeanCache or after it, or twice), are the objects
// controller-runtime's cache holds, but for managedFields (kept for a
// set's child, without the status entries). The objects carry what the
// lean cache shares: labels, annotations, finalizers, owner references
// and conditions.
func TestLeanCacheMatchesUpstream(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "owner"}}
	if err := f.c.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}
	for i := range 3 {
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{
			Namespace: f.ns, Name: fmt.Sprintf("w%d", i),
			Labels:          map[string]string{"app": "web", "tier": fmt.Sprint(i)},
			Annotations:     map[string]string{"note": strings.Repeat("x", 100), "short": "yes"},
			Finalizers:      []string{"test.bosun.dev/keep"},
			OwnerReferences: []metav1.OwnerReference{ref},
		}, Spec: testapi.WidgetSpec{Value: int64(i), Divisor: 1}}
		if err := f.c.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		w.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), Message: "done", LastTransitionTime: metav1.Now()}}
		if err := f.c.Status().Update(ctx, w); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			w.Finalizers = nil
			_ = f.c.Update(context.Background(), w)
		})
	}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "child", Labels: map[string]string{trim.KeepLabel: "s"}}, Data: map[string]string{"k": "v"}}
	if err := f.c.Create(ctx, child); err != nil {
		t.Fatal(err)
	}
	read := func(c client.Reader) (map[string]testapi.Widget, map[string]corev1.ConfigMap, error) {
		var ws testapi.WidgetList
		var cms corev1.ConfigMapList
		if err := c.List(ctx, &ws, client.InNamespace(f.ns)); err != nil {
			return nil, nil, err
		}
		if err := c.List(ctx, &cms, client.InNamespace(f.ns)); err != nil {
			return nil, nil, err
		}
		wm, cm := map[string]testapi.Widget{}, map[string]corev1.ConfigMap{}
		for _, w := range ws.Items {
			wm[w.Name] = w
		}
		for _, c := range cms.Items {
			if c.Name != "kube-root-ca.crt" {
				cm[c.Name] = c
			}
		}
		if len(wm) != 3 || len(cm) != 2 {
			return nil, nil, fmt.Errorf("%d Widgets and %d ConfigMaps cached, want 3 and 2", len(wm), len(cm))
		}
		return wm, cm, nil
	}
	managers := map[string]ctrl.Manager{}
	// The lean and tuned managers: LeanCache before Enable or after it, and
	// Enable called twice, change nothing.
	lean := []string{"lean", "lean, tuned", "tuned, then lean", "lean, tuned twice"}
	for _, name := range append([]string{"upstream"}, lean...) {
		managers[name] = bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{Namespaces: []string{f.ns}, Configure: func(o *ctrl.Options) {
			switch name {
			case "upstream":
			case "lean":
				tuning.LeanCache(&o.Cache)
			case "lean, tuned":
				tuning.LeanCache(&o.Cache)
				tuning.Enable(o)
			case "tuned, then lean":
				tuning.Enable(o)
				tuning.LeanCache(&o.Cache)
			case "lean, tuned twice":
				tuning.LeanCache(&o.Cache)
				tuning.Enable(o)
				tuning.Enable(o)
			}
		}}, func(ctrl.Manager) error { return nil })
	}
	var wantW map[string]testapi.Widget
	var wantCM map[string]corev1.ConfigMap
	bosuntest.Eventually(t, func(context.Context) error {
		var err error
		wantW, wantCM, err = read(managers["upstream"].GetClient())
		for _, w := range wantW {
			if len(w.Status.Conditions) == 0 {
				return fmt.Errorf("%s cached without its status yet", w.Name)
			}
		}
		return err
	})
	// What LeanCache keeps of managedFields: none, but a child's entries
	// that are not of a subresource.
	for name, w := range wantW {
		w.ManagedFields = nil
		wantW[name] = w
	}
	for name, c := range wantCM {
		var kept []metav1.ManagedFieldsEntry
		for _, e := range c.ManagedFields {
			if name == "child" && e.Subresource == "" {
				kept = append(kept, e)
			}
		}
		c.ManagedFields = kept
		wantCM[name] = c
	}
	for _, name := range lean {
		bosuntest.Eventually(t, func(context.Context) error {
			gotW, gotCM, err := read(managers[name].GetClient())
			if err != nil {
				return err
			}
			if diff := cmp.Diff(wantW, gotW); diff != "" {
				return fmt.Errorf("%s: Widgets (-controller-runtime's cache +%s):\n%s", name, name, diff)
			}
			if diff := cmp.Diff(wantCM, gotCM); diff != "" {
				return fmt.Errorf("%s: ConfigMaps (-controller-runtime's cache +%s):\n%s", name, name, diff)
			}
			return nil
		})
	}
}
