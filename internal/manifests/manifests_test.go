package manifests_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/examples/simple"
	"github.com/bosunkit/bosun/internal/manifests"
)

var examples = []string{"cronjob", "hello", "postgres", "rwexternal", "simple", "site"}

func defaultDir(example string) string {
	return filepath.Join("..", "..", "examples", example, "config", "default")
}

// find returns the rendered object of kind, or nil.
func find(objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind {
			return o
		}
	}
	return nil
}

// TestBuildExamples: each example's config/default renders the CRDs, the
// RBAC and a hardened Deployment, in the example's namespace.
func TestBuildExamples(t *testing.T) {
	for _, ex := range examples {
		t.Run(ex, func(t *testing.T) {
			_, objs, err := manifests.Build(defaultDir(ex))
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, o := range objs {
				if !slices.Contains(kinds, o.GetKind()) {
					kinds = append(kinds, o.GetKind())
				}
			}
			slices.Sort(kinds)
			want := []string{"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "Deployment", "Namespace", "Role", "RoleBinding", "ServiceAccount"}
			if diff := cmp.Diff(want, kinds); diff != "" {
				t.Errorf("kinds (-want +got):\n%s", diff)
			}
			ns := ex + "-system"
			if got := find(objs, "Namespace").GetName(); got != ns {
				t.Errorf("namespace %q, want %q", got, ns)
			}
			dep := find(objs, "Deployment")
			if dep.GetNamespace() != ns {
				t.Errorf("the Deployment is in %q, want %q", dep.GetNamespace(), ns)
			}
			for _, path := range [][]string{
				{"spec", "template", "spec", "securityContext", "runAsNonRoot"},
			} {
				if v, _, _ := unstructured.NestedBool(dep.Object, path...); !v {
					t.Errorf("the Deployment lacks %v: true", path)
				}
			}
			containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
			if len(containers) != 1 {
				t.Fatalf("the Deployment has %d containers, want 1", len(containers))
			}
			c := containers[0].(map[string]any)
			for _, path := range [][]string{{"livenessProbe", "httpGet", "path"}, {"readinessProbe", "httpGet", "path"}, {"resources", "limits", "memory"}} {
				if v, _, _ := unstructured.NestedString(c, path...); v == "" {
					t.Errorf("the manager container lacks %v", path)
				}
			}
			if v, _, _ := unstructured.NestedBool(c, "securityContext", "allowPrivilegeEscalation"); v {
				t.Errorf("the manager container allows privilege escalation")
			}
			if v, _, _ := unstructured.NestedBool(c, "securityContext", "readOnlyRootFilesystem"); !v {
				t.Errorf("the manager container's root file system is writable")
			}
			role := &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(find(objs, "ClusterRole").Object, role); err != nil {
				t.Fatal(err)
			}
			for _, crd := range objs {
				if crd.GetKind() != "CustomResourceDefinition" {
					continue
				}
				plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
				group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
				if !grants(role, group, plural+"/finalizers", "update") || !grants(role, group, plural+"/status", "patch") {
					t.Errorf("the ClusterRole does not grant update of %s/finalizers and patch of its status", plural)
				}
			}
		})
	}
}

// grants reports whether role allows verb on resource of group.
func grants(role *rbacv1.ClusterRole, group, resource, verb string) bool {
	for _, r := range role.Rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

// TestApplyAndRunAsServiceAccount applies every example's manifests
// server-side to a real API server (twice: a second apply changes
// nothing), then runs the simple example's controller as its
// ServiceAccount, with leader election, until its samples are Ready: the
// role it ships is enough. Access reviews as the ServiceAccounts show what
// the roles grant and refuse.
func TestApplyAndRunAsServiceAccount(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := simple.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cp := bosuntest.Start(t, controlplane.Options{Scheme: scheme})
	ctx := t.Context()
	for _, ex := range examples {
		_, objs, err := manifests.Build(defaultDir(ex))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := manifests.Apply(ctx, cp.Client, objs, "bosun-test"); err != nil {
				t.Fatalf("%s: %v", ex, err)
			}
		}
	}

	sa := func(ex string) *rest.Config {
		cfg := rest.CopyConfig(cp.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s-system:%s-controller-manager", ex, ex)}
		return cfg
	}
	for _, tc := range []struct {
		example                                string
		group, resource, subresource, verb, ns string
		want                                   bool
	}{
		{"simple", "simple.bosun.dev", "simples", "finalizers", "update", "default", true},
		{"simple", "simple.bosun.dev", "simples", "status", "patch", "default", true},
		{"simple", "coordination.k8s.io", "leases", "", "create", "simple-system", true},
		{"simple", "coordination.k8s.io", "leases", "", "create", "default", false},
		{"simple", "", "secrets", "", "get", "default", false},
		{"hello", "", "configmaps", "", "create", "default", true},
		{"hello", "", "secrets", "", "list", "default", false},
		{"postgres", "", "secrets", "", "create", "default", true},
		{"postgres", "postgres.bosun.dev", "databases", "finalizers", "update", "default", true},
		{"cronjob", "batch", "jobs", "", "create", "default", true},
		{"cronjob", "", "configmaps", "", "create", "default", false},
	} {
		c, err := client.New(sa(tc.example), client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: tc.ns, Verb: tc.verb, Group: tc.group, Resource: tc.resource, Subresource: tc.subresource},
		}}
		if err := c.Create(ctx, review); err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed != tc.want {
			t.Errorf("%s may %s %s/%s in %s: %v, want %v", tc.example, tc.verb, tc.resource, tc.subresource, tc.ns, review.Status.Allowed, tc.want)
		}
	}

	logger, quiet := bosuntest.TestLogger(t)
	t.Cleanup(quiet)
	mgr, err := ctrl.NewManager(sa("simple"), ctrl.Options{
		Scheme:                  scheme,
		Metrics:                 metricsserver.Options{BindAddress: "0"},
		LeaderElection:          true,
		LeaderElectionID:        "simple.bosun.dev",
		LeaderElectionNamespace: "simple-system",
		Logger:                  logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := simple.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the manager: %v", err)
		}
	})
	ns := bosuntest.Namespace(t, cp.Client)
	samples := simple.Samples(ns)
	for _, o := range samples {
		if err := cp.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range samples {
		bosuntest.Eventually(t, func(ctx context.Context) error {
			if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
				return err
			}
			co, ok := o.(conditions.Object)
			if !ok {
				return fmt.Errorf("%T keeps no conditions", o)
			}
			if c := meta.FindStatusCondition(co.GetConditions(), conditions.TypeReady); c == nil || c.ObservedGeneration != o.GetGeneration() {
				return fmt.Errorf("%s has no Ready condition for its generation yet: %v", o.GetName(), co.GetConditions())
			}
			return nil
		})
	}
}
