package watch

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
)

// names turns requests into "namespace/name" strings, for cmp.
func names(reqs []reconcile.Request) []string {
	out := []string{}
	for _, r := range reqs {
		out = append(out, r.String())
	}
	return out
}

// recordingQueue is a work queue that records what handlers add to it.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	added []reconcile.Request
}

func (q *recordingQueue) Add(r reconcile.Request) { q.added = append(q.added, r) }

func cm(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func cmLabelled(ns, name string, lbls map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls}}
}

func secret(ns, name string, lbls map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls}}
}

// builtinScheme returns a scheme of client-go's built-in kinds only
// (clientgoscheme.Scheme is global, and other packages may add to it).
func builtinScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	return s
}

var (
	gvkConfigMap = corev1.SchemeGroupVersion.WithKind("ConfigMap")
	gvkSecret    = corev1.SchemeGroupVersion.WithKind("Secret")
)

// trackerStep is one step of a tracker scenario.
type trackerStep func(t *testing.T, tr *Tracker, clk *clocktesting.FakeClock)

// track makes parent (in namespace "ns") track ref.
func track(parent string, gvk schema.GroupVersionKind, ref client.ObjectKey) trackerStep {
	return func(_ *testing.T, tr *Tracker, _ *clocktesting.FakeClock) {
		tr.Track(cm("ns", parent, nil), gvk, ref)
	}
}

func advance(d time.Duration) trackerStep {
	return func(_ *testing.T, _ *Tracker, clk *clocktesting.FakeClock) { clk.Step(d) }
}

func forget(parent string) trackerStep {
	return func(_ *testing.T, tr *Tracker, _ *clocktesting.FakeClock) {
		tr.Forget(client.ObjectKey{Namespace: "ns", Name: parent})
	}
}

// eventOn sends an event on obj and checks the parents it maps to.
func eventOn(obj client.Object, want ...string) trackerStep {
	return func(t *testing.T, tr *Tracker, _ *clocktesting.FakeClock) {
		t.Helper()
		if want == nil {
			want = []string{}
		}
		got := names(tr.requests(context.Background(), obj))
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("event on %s %s: parents (-want +got):\n%s", obj.GetObjectKind().GroupVersionKind().Kind, client.ObjectKeyFromObject(obj), diff)
		}
	}
}

func key(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

func TestTrackerLease(t *testing.T) {
	const lease = time.Minute
	settings := cm("ns", "settings", nil)
	tests := []struct {
		name  string
		steps []trackerStep
	}{{
		name: "nothing tracked wakes nobody",
		steps: []trackerStep{
			eventOn(settings),
		},
	}, {
		name: "a fresh reference wakes its parent at every event",
		steps: []trackerStep{
			track("app", gvkConfigMap, key("ns", "settings")),
			eventOn(settings, "ns/app"),
			advance(lease - time.Second),
			eventOn(settings, "ns/app"),
			eventOn(settings, "ns/app"),
		},
	}, {
		name: "an expired reference wakes its parent once more, then no more",
		steps: []trackerStep{
			track("app", gvkConfigMap, key("ns", "settings")),
			advance(lease + time.Second),
			eventOn(settings, "ns/app"),
			eventOn(settings),
			advance(time.Hour),
			eventOn(settings),
		},
	}, {
		name: "the lease runs out at exactly its length",
		steps: []trackerStep{
			track("app", gvkConfigMap, key("ns", "settings")),
			advance(lease),
			eventOn(settings, "ns/app"),
			eventOn(settings),
		},
	}, {
		name: "each track renews the lease",
		steps: []trackerStep{
			track("app", gvkConfigMap, key("ns", "settings")),
			advance(50 * time.Second),
			track("app", gvkConfigMap, key("ns", "settings")),
			advance(50 * time.Second),
			eventOn(settings, "ns/app"),
			eventOn(settings, "ns/app"),
			advance(10 * time.Second),
			eventOn(settings, "ns/app"),
			eventOn(settings),
		},
	}, {
		name: "a parent that tracks again after the last call stays",
		steps: []trackerStep{
			track("app", gvkConfigMap, key("ns", "settings")),
			advance(2 * lease),
			eventOn(settings, "ns/app"),
			track("app", gvkConfigMap, key("ns", "settings")),
			eventOn(settings, "ns/app"),
		},
	}, {
		name: "leases are per parent",
		steps: []trackerStep{
			track("old", gvkConfigMap, key("ns", "settings")),
			advance(lease),
			track("new", gvkConfigMap, key("ns", "settings")),
			eventOn(settings, "ns/new", "ns/old"),
			eventOn(settings, "ns/new"),
		},
	}, {
		name: "objects are told apart by kind, namespace and name",
		steps: []trackerStep{
			track("a", gvkConfigMap, key("ns", "settings")),
			track("b", gvkSecret, key("ns", "settings")),
			track("c", gvkConfigMap, key("other", "settings")),
			track("d", gvkConfigMap, key("ns", "other")),
			eventOn(settings, "ns/a"),
			eventOn(secret("ns", "settings", nil), "ns/b"),
			eventOn(cm("other", "settings", nil), "ns/c"),
		},
	}, {
		name: "the version of the tracked kind does not matter",
		steps: []trackerStep{
			track("app", schema.GroupVersionKind{Group: "apps", Version: "v1beta2", Kind: "Deployment"}, key("ns", "web")),
			eventOn(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}, "ns/app"),
		},
	}, {
		name: "several parents of one object are woken in order",
		steps: []trackerStep{
			track("c", gvkConfigMap, key("ns", "settings")),
			track("a", gvkConfigMap, key("ns", "settings")),
			track("b", gvkConfigMap, key("ns", "settings")),
			eventOn(settings, "ns/a", "ns/b", "ns/c"),
		},
	}, {
		name: "forget drops every reference of a parent",
		steps: []trackerStep{
			track("app", gvkConfigMap, key("ns", "settings")),
			track("app", gvkSecret, key("ns", "tls")),
			track("other", gvkConfigMap, key("ns", "settings")),
			forget("app"),
			eventOn(settings, "ns/other"),
			eventOn(secret("ns", "tls", nil)),
		},
	}, {
		name: "an object of a kind outside the scheme wakes nobody",
		steps: []trackerStep{
			track("app", apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), key("", "widgets.example.com")),
			eventOn(&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.com"}}),
		},
	}, {
		name: "an unstructured object carries its kind",
		steps: []trackerStep{
			track("app", apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"), key("", "widgets.example.com")),
			eventOn(func() client.Object {
				u := &unstructured.Unstructured{}
				u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
				u.SetName("widgets.example.com")
				return u
			}(), "ns/app"),
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			tr := NewTracker(builtinScheme(t), WithLease(lease), WithClock(clk))
			for _, step := range tc.steps {
				step(t, tr, clk)
			}
		})
	}
}

func TestTrackerReferences(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tr := NewTracker(nil, WithClock(clk))
	app := cm("ns", "app", nil)
	tr.Track(app, gvkSecret, key("ns", "tls"))
	tr.Track(app, gvkConfigMap, key("ns", "b"))
	tr.Track(app, gvkConfigMap, key("ns", "a"))
	tr.Track(app, gvkConfigMap, key("ns", "a"))
	tr.Track(app, appsv1.SchemeGroupVersion.WithKind("Deployment"), key("ns", "web"))

	refs := func() []string {
		var out []string
		for _, r := range tr.References(client.ObjectKeyFromObject(app)) {
			out = append(out, r.String())
		}
		return out
	}
	want := []string{"ConfigMap ns/a", "ConfigMap ns/b", "Secret ns/tls", "Deployment.apps ns/web"}
	if diff := cmp.Diff(want, refs()); diff != "" {
		t.Errorf("References (-want +got):\n%s", diff)
	}

	// The default lease is defaultLease; past it, an event drops the
	// reference it wakes the parent for.
	clk.Step(defaultLease)
	if got := names(tr.requests(context.Background(), cm("ns", "a", nil))); !cmp.Equal(got, []string{"ns/app"}) {
		t.Errorf("last call: got %v, want [ns/app]", got)
	}
	want = []string{"ConfigMap ns/b", "Secret ns/tls", "Deployment.apps ns/web"}
	if diff := cmp.Diff(want, refs()); diff != "" {
		t.Errorf("References after a last call (-want +got):\n%s", diff)
	}

	tr.Forget(client.ObjectKeyFromObject(app))
	if diff := cmp.Diff([]string(nil), refs()); diff != "" {
		t.Errorf("References after Forget (-want +got):\n%s", diff)
	}
	if len(tr.parents) != 0 || len(tr.refs) != 0 {
		t.Errorf("after Forget the tracker still holds %d objects and %d parents", len(tr.parents), len(tr.refs))
	}
}

func TestTrackerGet(t *testing.T) {
	var gets int
	c := fake.NewClientBuilder().
		WithObjects(cm("ns", "settings", map[string]string{"color": "blue"})).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets++
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	tr := NewTracker(builtinScheme(t))
	app := cm("ns", "app", nil)
	ctx := context.Background()

	got := &corev1.ConfigMap{}
	if err := tr.Get(ctx, c, app, key("ns", "settings"), got); err != nil {
		t.Fatalf("Get settings: %v", err)
	}
	if got.Data["color"] != "blue" {
		t.Errorf("Get read %v, want the settings", got.Data)
	}
	err := tr.Get(ctx, c, app, key("ns", "tls"), &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Get of a missing Secret: %v, want NotFound", err)
	}
	err = tr.Get(ctx, c, app, key("", "widgets.example.com"), &apiextensionsv1.CustomResourceDefinition{})
	if err == nil || !strings.HasPrefix(err.Error(), "watch: tracking /widgets.example.com: ") {
		t.Errorf("Get of a kind outside the scheme: %v, want an error from watch", err)
	}
	if gets != 2 {
		t.Errorf("the reader was called %d times, want 2 (not for a kind the tracker cannot name)", gets)
	}

	var refs []string
	for _, r := range tr.References(client.ObjectKeyFromObject(app)) {
		refs = append(refs, r.String())
	}
	if diff := cmp.Diff([]string{"ConfigMap ns/settings", "Secret ns/tls"}, refs); diff != "" {
		t.Errorf("References (-want +got): the found and the missing object\n%s", diff)
	}
	if got := names(tr.requests(ctx, secret("ns", "tls", nil))); !cmp.Equal(got, []string{"ns/app"}) {
		t.Errorf("creating the missing Secret wakes %v, want [ns/app]", got)
	}
}

func TestTrackerHandlers(t *testing.T) {
	tr := NewTracker(nil)
	app, other := cm("ns", "app", nil), cm("ns", "other", nil)
	tr.Track(app, gvkSecret, key("ns", "tls"))
	tr.Track(other, gvkSecret, key("ns", "tls"))
	ctx := context.Background()

	q := &recordingQueue{}
	h := tr.Handler()
	tls := secret("ns", "tls", nil)
	h.Create(ctx, event.CreateEvent{Object: tls}, q)
	h.Update(ctx, event.UpdateEvent{ObjectOld: tls, ObjectNew: tls}, q)
	h.Delete(ctx, event.DeleteEvent{Object: tls}, q)
	h.Generic(ctx, event.GenericEvent{Object: tls}, q)
	want := []string{"ns/app", "ns/other", "ns/app", "ns/other", "ns/app", "ns/other", "ns/app", "ns/other"}
	if diff := cmp.Diff(want, names(q.added)); diff != "" {
		t.Errorf("enqueued (-want +got): one request per parent and event\n%s", diff)
	}

	q = &recordingQueue{}
	f := tr.ForgetOnDelete()
	f.Create(ctx, event.CreateEvent{Object: app}, q)
	f.Update(ctx, event.UpdateEvent{ObjectOld: app, ObjectNew: app}, q)
	f.Generic(ctx, event.GenericEvent{Object: app}, q)
	if n := len(tr.References(client.ObjectKeyFromObject(app))); n != 1 {
		t.Errorf("after create, update and generic events the parent holds %d references, want 1", n)
	}
	f.Delete(ctx, event.DeleteEvent{Object: app}, q)
	if refs := tr.References(client.ObjectKeyFromObject(app)); len(refs) != 0 {
		t.Errorf("after the parent's deletion it holds %v, want nothing", refs)
	}
	if len(q.added) != 0 {
		t.Errorf("ForgetOnDelete enqueued %v, want nothing", names(q.added))
	}
	if got := names(tr.requests(ctx, tls)); !cmp.Equal(got, []string{"ns/other"}) {
		t.Errorf("after the deletion the Secret wakes %v, want [ns/other]", got)
	}
}

// TestTrackerConcurrent runs tracks, events and forgets at once; with -race
// it shows the Tracker is safe for concurrent use.
func TestTrackerConcurrent(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tr := NewTracker(nil, WithLease(time.Minute), WithClock(clk))
	const parents, objects, rounds = 8, 5, 200
	var wg sync.WaitGroup
	for p := range parents {
		wg.Go(func() {
			parent := cm("ns", fmt.Sprintf("p%d", p), nil)
			for i := range rounds {
				tr.Track(parent, gvkConfigMap, key("ns", fmt.Sprintf("o%d", i%objects)))
				if i%50 == 49 {
					tr.Forget(client.ObjectKeyFromObject(parent))
				}
				_ = tr.References(client.ObjectKeyFromObject(parent))
			}
		})
	}
	for o := range objects {
		wg.Go(func() {
			for range rounds {
				tr.requests(context.Background(), cm("ns", fmt.Sprintf("o%d", o), nil))
			}
		})
	}
	wg.Go(func() {
		for range rounds {
			clk.Step(time.Second)
		}
	})
	wg.Wait()

	// Whatever survived, the two maps of the tracker must agree.
	for ref, ps := range tr.parents {
		for parent := range ps {
			if _, ok := tr.refs[parent][ref]; !ok {
				t.Errorf("%s tracks %s in one map and not the other", parent, ref)
			}
		}
	}
	for parent, rs := range tr.refs {
		for ref := range rs {
			if _, ok := tr.parents[ref][parent]; !ok {
				t.Errorf("%s tracks %s in one map and not the other", parent, ref)
			}
		}
	}
}

func TestByLabels(t *testing.T) {
	const nameLabel, nsLabel = "example.com/parent", "example.com/parent-namespace"
	tests := []struct {
		name           string
		namespaceLabel string
		obj            client.Object
		want           []string
	}{{
		name: "parent in the object's namespace",
		obj:  secret("ns", "s", map[string]string{nameLabel: "app"}),
		want: []string{"ns/app"},
	}, {
		name:           "parent in the namespace the label names",
		namespaceLabel: nsLabel,
		obj:            secret("vault", "s", map[string]string{nameLabel: "app", nsLabel: "shop"}),
		want:           []string{"shop/app"},
	}, {
		name:           "no namespace label on the object: its own namespace",
		namespaceLabel: nsLabel,
		obj:            secret("ns", "s", map[string]string{nameLabel: "app"}),
		want:           []string{"ns/app"},
	}, {
		name:           "an empty namespace label names a cluster-scoped parent",
		namespaceLabel: nsLabel,
		obj:            secret("ns", "s", map[string]string{nameLabel: "app", nsLabel: ""}),
		want:           []string{"/app"},
	}, {
		name: "namespace label ignored when the handler has none",
		obj:  secret("ns", "s", map[string]string{nameLabel: "app", nsLabel: "shop"}),
		want: []string{"ns/app"},
	}, {
		name: "cluster-scoped object, cluster-scoped parent",
		obj:  &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r", Labels: map[string]string{nameLabel: "app"}}},
		want: []string{"/app"},
	}, {
		name: "no name label",
		obj:  secret("ns", "s", map[string]string{"other": "x"}),
		want: []string{},
	}, {
		name: "empty name label",
		obj:  secret("ns", "s", map[string]string{nameLabel: ""}),
		want: []string{},
	}, {
		name: "no labels",
		obj:  secret("ns", "s", nil),
		want: []string{},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := names(labelMapper(nameLabel, tc.namespaceLabel)(context.Background(), tc.obj))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parents (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpdateWakesOldAndNewParents(t *testing.T) {
	const nameLabel = "example.com/parent"
	q := &recordingQueue{}
	ByLabels(nameLabel, "").Update(context.Background(), event.UpdateEvent{
		ObjectOld: secret("ns", "s", map[string]string{nameLabel: "before"}),
		ObjectNew: secret("ns", "s", map[string]string{nameLabel: "after"}),
	}, q)
	if diff := cmp.Diff([]string{"ns/before", "ns/after"}, names(q.added)); diff != "" {
		t.Errorf("enqueued (-want +got):\n%s", diff)
	}
}

// service returns a Service whose selector is sel (nil: none).
func service(ns, name string, sel map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.ServiceSpec{Selector: sel}}
}

var errBadSelector = errors.New("bad selector")

// serviceSelector is the selector of a Service: none when its map is
// empty; an error for a Service named "broken".
func serviceSelector(s *corev1.Service) (labels.Selector, error) {
	if s.Name == "broken" {
		return nil, errBadSelector
	}
	if len(s.Spec.Selector) == 0 {
		return nil, nil
	}
	return labels.SelectorFromSet(s.Spec.Selector), nil
}

func TestBySelector(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(
		service("shop", "web", map[string]string{"app": "web"}),
		service("shop", "canary", map[string]string{"app": "web", "track": "canary"}),
		service("shop", "db", map[string]string{"app": "db"}),
		service("shop", "none", nil),
		service("shop", "broken", map[string]string{"app": "web"}),
		service("blog", "web", map[string]string{"app": "web"}),
	).Build()
	mapper := selectorMapper(c, &corev1.ServiceList{}, serviceSelector)
	tests := []struct {
		name string
		obj  client.Object
		want []string
	}{{
		name: "labels of another kind of object",
		obj:  cmLabelled("shop", "x", map[string]string{"app": "db"}),
		want: []string{"shop/db"},
	}, {
		name: "labels matching one selector",
		obj:  &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "p", Labels: map[string]string{"app": "web"}}},
		want: []string{"shop/web"},
	}, {
		name: "labels matching two selectors; a failing selector is skipped",
		obj:  &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "p", Labels: map[string]string{"app": "web", "track": "canary", "extra": "x"}}},
		want: []string{"shop/canary", "shop/web"},
	}, {
		name: "other namespace",
		obj:  &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "blog", Name: "p", Labels: map[string]string{"app": "web"}}},
		want: []string{"blog/web"},
	}, {
		name: "no labels: no selector, nor an empty one, matches",
		obj:  &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "p"}},
		want: []string{},
	}, {
		name: "cluster-scoped object: parents of every namespace",
		obj:  &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"app": "web"}}},
		want: []string{"blog/web", "shop/web"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := names(mapper(context.Background(), tc.obj))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parents (-want +got):\n%s", diff)
			}
		})
	}
}

func TestByIndex(t *testing.T) {
	secretOf := func(o client.Object) []string {
		return strings.Split(o.(*corev1.ConfigMap).Data["secrets"], ",")
	}
	roleOf := func(o client.Object) []string { return []string{o.(*corev1.ConfigMap).Data["role"]} }
	c := fake.NewClientBuilder().
		WithIndex(&corev1.ConfigMap{}, "data.secrets", secretOf).
		WithIndex(&corev1.ConfigMap{}, "data.role", roleOf).
		WithObjects(
			cm("shop", "web", map[string]string{"secrets": "tls", "role": "reader"}),
			cm("shop", "api", map[string]string{"secrets": "tls,db", "role": "admin"}),
			cm("shop", "db", map[string]string{"secrets": "db"}),
			cm("shop", "none", nil),
			cm("blog", "web", map[string]string{"secrets": "tls", "role": "reader"}),
		).Build()
	tests := []struct {
		name  string
		field string
		obj   client.Object
		want  []string
	}{{
		name:  "parents naming the object in its namespace",
		field: "data.secrets",
		obj:   secret("shop", "tls", nil),
		want:  []string{"shop/api", "shop/web"},
	}, {
		name:  "one of several names",
		field: "data.secrets",
		obj:   secret("shop", "db", nil),
		want:  []string{"shop/api", "shop/db"},
	}, {
		name:  "other namespace",
		field: "data.secrets",
		obj:   secret("blog", "tls", nil),
		want:  []string{"blog/web"},
	}, {
		name:  "named by nobody",
		field: "data.secrets",
		obj:   secret("shop", "unused", nil),
		want:  []string{},
	}, {
		name:  "cluster-scoped object: parents of every namespace",
		field: "data.role",
		obj:   &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reader"}},
		want:  []string{"blog/web", "shop/web"},
	}, {
		name:  "an index the reader does not have: logged, nothing enqueued",
		field: "data.missing",
		obj:   secret("shop", "tls", nil),
		want:  []string{},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := names(indexMapper(c, &corev1.ConfigMapList{}, tc.field)(context.Background(), tc.obj))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parents (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNonEmpty(t *testing.T) {
	in := []string{"a", "", "b", ""}
	if diff := cmp.Diff([]string{"a", "b"}, nonEmpty(in)); diff != "" {
		t.Errorf("nonEmpty (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "", "b", ""}, in); diff != "" {
		t.Errorf("nonEmpty changed its argument (-want +got):\n%s", diff)
	}
}

func TestListFor(t *testing.T) {
	list, err := listFor(clientgoscheme.Scheme, &corev1.ConfigMap{})
	if err != nil {
		t.Fatalf("listFor ConfigMap: %v", err)
	}
	if _, ok := list.(*corev1.ConfigMapList); !ok {
		t.Errorf("listFor ConfigMap = %T, want *v1.ConfigMapList", list)
	}
	_, err = listFor(runtime.NewScheme(), &corev1.ConfigMap{})
	if err == nil || !strings.Contains(err.Error(), "kind of *v1.ConfigMap") {
		t.Errorf("listFor with an empty scheme: %v, want an error naming the type", err)
	}
}

// panicMessage runs fn and returns what it panicked with, or "".
func panicMessage(fn func()) (msg string) {
	defer func() {
		if v := recover(); v != nil {
			msg = fmt.Sprint(v)
		}
	}()
	fn()
	return ""
}

func TestSetupMistakes(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	nopSelector := func(*corev1.Service) (labels.Selector, error) { return labels.Everything(), nil }
	panics := []struct {
		name string
		fn   func()
		want string
	}{
		{"ByIndex without reader", func() { ByIndex(nil, &corev1.ConfigMapList{}, "f") }, "watch: ByIndex: reader is nil"},
		{"ByIndex without list", func() { ByIndex(c, nil, "f") }, "watch: ByIndex: list is nil"},
		{"ByIndex without field", func() { ByIndex(c, &corev1.ConfigMapList{}, "") }, "watch: ByIndex: field is empty"},
		{"BySelector without reader", func() { BySelector(nil, &corev1.ServiceList{}, nopSelector) }, "watch: BySelector: reader is nil"},
		{"BySelector without list", func() { BySelector(c, nil, nopSelector) }, "watch: BySelector: list is nil"},
		{"BySelector without selector", func() { BySelector[*corev1.Service](c, &corev1.ServiceList{}, nil) }, "watch: BySelector: selector is nil"},
		{"BySelector with a list of another type", func() { BySelector(c, &corev1.PodList{}, nopSelector) },
			"watch: BySelector: list *v1.PodList holds v1.Pod, not *v1.Service"},
		{"ByLabels without name label", func() { ByLabels("", "ns") }, "watch: ByLabels: name label is empty"},
		{"BySelector with unstructured objects", func() {
			BySelector(c, &unstructured.UnstructuredList{}, func(*unstructured.Unstructured) (labels.Selector, error) { return nil, nil })
		}, ""},
		{"BySelector with the right list", func() { BySelector(c, &corev1.ServiceList{}, nopSelector) }, ""},
	}
	for _, tc := range panics {
		t.Run(tc.name, func(t *testing.T) {
			if got := panicMessage(tc.fn); got != tc.want {
				t.Errorf("panic %q, want %q", got, tc.want)
			}
		})
	}

	ctx := context.Background()
	extract := func(*corev1.ConfigMap) []string { return nil }
	errs := []struct {
		name string
		fn   func() error
		want string
	}{
		{"IndexField without manager", func() error { return IndexField(ctx, nil, "f", extract) }, `watch: IndexField "f": manager is nil`},
		{"IndexField without field", func() error { return IndexField(ctx, nil, "", extract) }, "watch: IndexField: field is empty"},
		{"IndexField without extract", func() error {
			return IndexField[*corev1.ConfigMap](ctx, nil, "f", nil)
		}, `watch: IndexField "f": extract is nil`},
		{"IndexField of an interface type", func() error {
			return IndexField(ctx, nil, "f", func(client.Object) []string { return nil })
		}, fmt.Sprintf(`watch: IndexField "f": type %v is not a pointer to a struct`, reflect.TypeFor[client.Object]())},
		{"Referenced of an interface type", func() error {
			return Referenced(&corev1.Secret{}, "f", func(client.Object) []string { return nil })(bosun.ControllerManagedBy[client.Object](nil))
		}, fmt.Sprintf(`watch: Referenced "f": type %v is not a pointer to a struct`, reflect.TypeFor[client.Object]())},
		{"Referenced without builder", func() error {
			return Referenced(&corev1.Secret{}, "f", extract)(nil)
		}, "watch: Referenced: builder is nil"},
		{"Referenced without related object", func() error {
			return Referenced(nil, "f", extract)(bosun.ControllerManagedBy[*corev1.ConfigMap](nil))
		}, `watch: Referenced "f": related object is nil`},
		{"Referenced without manager", func() error {
			return Referenced(&corev1.Secret{}, "f", extract)(bosun.ControllerManagedBy[*corev1.ConfigMap](nil))
		}, `watch: Referenced "f": builder has no manager`},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.fn()
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
