package ref

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun/internal/testapi"
)

func TestIndexValues(t *testing.T) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}
	for _, tc := range []struct {
		name string
		r    Reference
		own  string
		want []string
	}{
		{name: "none", r: Reference{}, own: "a", want: nil},
		{name: "name in own namespace", r: ByName("r"), own: "a", want: []string{"a/r", "/r"}},
		{name: "name in another namespace", r: ByName("r").InNamespace("b"), own: "a", want: []string{"b/r", "/r"}},
		{name: "name from a cluster-scoped object", r: ByName("r"), own: "", want: []string{"/r"}},
		{name: "selector", r: BySelector(sel), own: "a", want: []string{"a/*", "/*"}},
		{name: "selector into another namespace", r: BySelector(sel).InNamespace("b"), own: "a", want: []string{"b/*", "/*"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, indexValues(tc.r, tc.own)); diff != "" {
				t.Errorf("indexValues (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReferenceString(t *testing.T) {
	for _, tc := range []struct {
		r    Reference
		want string
	}{
		{Reference{}, "none"},
		{ByName("db"), "db"},
		{ByName("db").InNamespace("a"), "a/db"},
		{ByLabels(map[string]string{"app": "db", "tier": "1"}), "selector app=db,tier=1"},
		{BySelector(&metav1.LabelSelector{}).InNamespace("a"), "a/selector <everything>"},
	} {
		if got := tc.r.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.r, got, tc.want)
		}
	}
}

// The watch's mapping finds, for an event on an object, the referrers
// that name it or select it, in any namespace they refer from.
func TestMapper(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, testapi.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	refOf := func(w *testapi.Widget) Reference {
		r := Reference{Name: w.Annotations["name"], Namespace: w.Annotations["namespace"]}
		if v, ok := w.Annotations["app"]; ok {
			r.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": v}}
		}
		return r
	}
	referrer := func(ns, name string, kv ...string) *testapi.Widget {
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{}}}
		for i := 0; i+1 < len(kv); i += 2 {
			w.Annotations[kv[i]] = kv[i+1]
		}
		return w
	}
	step := Resolve[*testapi.Widget, *testapi.Widget]("owner", refOf)
	extract := func(o client.Object) []string { return indexValues(refOf(o.(*testapi.Widget)), o.GetNamespace()) }
	c := fake.NewClientBuilder().WithScheme(s).WithIndex(&testapi.Widget{}, step.field, extract).WithObjects(
		referrer("a", "by-name", "name", "r"),
		referrer("a", "by-other-name", "name", "q"),
		referrer("b", "same-name-other-ns", "name", "r"),
		referrer("b", "across", "name", "r", "namespace", "a"),
		referrer("a", "selects-db", "app", "db"),
		referrer("a", "selects-web", "app", "web"),
		referrer("b", "selects-db-in-b", "app", "db"),
		referrer("a", "none"),
	).Build()
	mapFn := step.mapper(c, &testapi.WidgetList{})

	for _, tc := range []struct {
		name string
		obj  client.Object
		want []string
	}{
		{name: "named", obj: &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "r"}}, want: []string{"a/by-name", "b/across"}},
		{
			name: "named and selected",
			obj:  &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "r", Labels: map[string]string{"app": "db"}}},
			want: []string{"a/by-name", "a/selects-db", "b/across"},
		},
		{name: "selected only", obj: &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "x", Labels: map[string]string{"app": "db"}}}, want: []string{"b/selects-db-in-b"}},
		{name: "nobody refers to it", obj: &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "c", Name: "r"}}, want: []string{}},
		{
			name: "cluster-scoped: every namespace's name references and matching selectors",
			obj:  &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r", Labels: map[string]string{"app": "web"}}},
			want: []string{"a/by-name", "a/selects-web", "b/across", "b/same-name-other-ns"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := []string{}
			for _, req := range mapFn(t.Context(), tc.obj) {
				got = append(got, req.String())
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConditionType(t *testing.T) {
	for name, want := range map[string]string{"owner": "OwnerResolved", "Theme": "ThemeResolved", "": "Resolved", "évent": "ÉventResolved"} {
		if got := conditionType(name); got != want {
			t.Errorf("conditionType(%q) = %q, want %q", name, got, want)
		}
	}
}
