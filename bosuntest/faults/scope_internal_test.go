package faults

import (
	"reflect"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/shard"
)

// selectorString prints a selector, "<nil>" for none.
func selectorString(s labels.Selector) string {
	if s == nil {
		return "<nil>"
	}
	return s.String()
}

// TestClusterScopedCache: a process caches the objects of a kind of
// Options.ClusterScoped labelled ScenarioLabel with its namespace,
// keeping a label selector its Manager set for the kind; the namespaced
// kinds keep the namespace alone, and a process of no namespace caches
// everything.
func TestClusterScopedCache(t *testing.T) {
	team := func(o *ctrl.Options) {
		o.Cache.ByObject = map[client.Object]cache.ByObject{&rbacv1.ClusterRole{}: {Label: labels.SelectorFromSet(labels.Set{"team": "a"})}}
	}
	tests := []struct {
		name string
		opts Options
		// want is the label selector of each kind of the cache's
		// ByObject, by Go type; namespaces the DefaultNamespaces.
		want       map[string]string
		namespaces []string
	}{
		{"namespaced kinds", Options{Namespace: "ns"}, map[string]string{}, []string{"ns"}},
		{"a cluster-scoped kind", Options{Namespace: "ns", ClusterScoped: []client.Object{&rbacv1.ClusterRole{}}},
			map[string]string{"*v1.ClusterRole": ScenarioLabel + "=ns"}, []string{"ns"}},
		{"a cluster-scoped kind the Manager selects already", Options{Namespace: "ns", ClusterScoped: []client.Object{&rbacv1.ClusterRole{}}, Manager: team},
			map[string]string{"*v1.ClusterRole": ScenarioLabel + "=ns,team=a"}, []string{"ns"}},
		{"no namespace, no scenario", Options{ClusterScoped: []client.Object{&rbacv1.ClusterRole{}}}, map[string]string{}, nil},
	}
	cp := &controlplane.ControlPlane{Scheme: runtime.NewScheme()}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mopts := managerOptions(cp, tt.opts, logr.Discard())
			got := map[string]string{}
			for obj, by := range mopts.Cache.ByObject {
				got[reflect.TypeOf(obj).String()] = selectorString(by.Label)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("the label selectors of the cache's kinds (-want +got):\n%s", diff)
			}
			var namespaces []string
			for ns := range mopts.Cache.DefaultNamespaces {
				namespaces = append(namespaces, ns)
			}
			if diff := cmp.Diff(tt.namespaces, namespaces); diff != "" {
				t.Errorf("the cache's namespaces (-want +got):\n%s", diff)
			}
		})
	}
}

// TestClusterScopedRing: the ring of a kind of Options.ClusterScoped
// assigns the objects labelled ScenarioLabel with the process's
// namespace, beside the ring's own selector; a namespaced kind's ring
// assigns those of the namespace, unless the ring names namespaces of
// its own.
func TestClusterScopedRing(t *testing.T) {
	scoped := []client.Object{&rbacv1.ClusterRole{}}
	type got struct {
		Namespaces []string
		Selector   string
	}
	tests := []struct {
		name string
		ring shard.Options
		want got
	}{
		{"a namespaced kind", shard.Options{Ring: "r", Object: &testapi.Widget{}}, got{Namespaces: []string{"ns"}, Selector: "<nil>"}},
		{"a namespaced kind, namespaces of its own", shard.Options{Ring: "r", Object: &testapi.Widget{}, ObjectNamespaces: []string{"other"}},
			got{Namespaces: []string{"other"}, Selector: "<nil>"}},
		{"a cluster-scoped kind", shard.Options{Ring: "r", Object: &rbacv1.ClusterRole{}}, got{Selector: ScenarioLabel + "=ns"}},
		{"a cluster-scoped kind, a selector of its own",
			shard.Options{Ring: "r", Object: &rbacv1.ClusterRole{}, ObjectSelector: labels.SelectorFromSet(labels.Set{"team": "a"})},
			got{Selector: ScenarioLabel + "=ns,team=a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := memberOptions(tt.ring, "r0", "ns", scoped)
			if diff := cmp.Diff(tt.want, got{Namespaces: o.ObjectNamespaces, Selector: selectorString(o.ObjectSelector)}); diff != "" {
				t.Errorf("the ring's objects (-want +got):\n%s", diff)
			}
			if o.Identity != "r0" || o.Namespace != "ns" {
				t.Errorf("Identity %q, Namespace %q, want the process's r0 and ns", o.Identity, o.Namespace)
			}
		})
	}
}

// TestPlannedChangeFindsClusterScopedObjects: the plan names a namespaced
// object by namespace and name, a cluster-scoped one by its name.
func TestPlannedChangeFindsClusterScopedObjects(t *testing.T) {
	report := "plan: 2 objects, 2 would change\n" +
		"Widget ns/w0 (controller widgets)\n  update ConfigMap ns/w0\n" +
		"Bundle ns-b0 (controller trust)\n  apply ConfigMap ns/ns-b0\n"
	tests := []struct {
		name, ns, obj string
		ok            bool
	}{
		{"namespaced", "ns", "w0", true},
		{"cluster-scoped", "", "ns-b0", true},
		{"cluster-scoped named as namespaced", "ns", "ns-b0", false},
		{"absent", "", "w0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := plannedChange(report, tt.ns, tt.obj, true)
			if (err == nil) != tt.ok {
				t.Errorf("plannedChange(%s, %s) = %v, want found %v", tt.ns, tt.obj, err, tt.ok)
			}
		})
	}
}
