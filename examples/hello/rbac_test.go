package hello

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/internal/rbaccheck"
)

// TestRoleIsDerived checks that the rules the reconciler derives
// (bosun.Reconciler.PolicyRules: the engine's, and the ConfigMaps and the
// Greetings' finalizers subresource publishGreeting declares) are exactly
// those the markers make controller-gen write.
func TestRoleIsDerived(t *testing.T) {
	derived, err := NewReconciler().PolicyRules(unit.Scheme(t, AddToScheme))
	if err != nil {
		t.Fatal(err)
	}
	rbaccheck.Compare(t, rbaccheck.Role(t, rbaccheck.RoleFile).Rules, derived)
}

// TestRunsWithGeneratedRole runs the controller as a user that holds only
// the generated ClusterRole, which grants what the reconciler declares (see
// TestRoleIsDerived): a Greeting gets its finalizer and its ConfigMap and
// becomes Ready, follows a change of its name, and once deleted loses its
// ConfigMap and goes, so the markers grant all it needs.
func TestRunsWithGeneratedRole(t *testing.T) {
	cp := shared.ControlPlane(t)
	rbaccheck.RunAs(t, cp, "hello-controller-generated", rbaccheck.Role(t, rbaccheck.RoleFile).Rules,
		bosuntest.ManagerOptions{}, SetupWithManager)
	ctx := t.Context()
	ns := bosuntest.Namespace(t, cp.Client)
	key := client.ObjectKey{Namespace: ns, Name: "rbac"}
	g := &hellov1.Greeting{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}, Spec: hellov1.GreetingSpec{Name: "RBAC"}}
	if err := cp.Client.Create(ctx, g); err != nil {
		t.Fatalf("create greeting: %v", err)
	}
	g, _ = waitPublished(t, cp.Client, key, "Hello, RBAC!")
	if !controllerutil.ContainsFinalizer(g, Finalizer) {
		t.Errorf("finalizers = %v, want %s", g.Finalizers, Finalizer)
	}

	base := g.DeepCopy()
	g.Spec.Name = "least privilege"
	if err := cp.Client.Patch(ctx, g, client.MergeFrom(base)); err != nil {
		t.Fatalf("patch greeting: %v", err)
	}
	g, _ = waitPublished(t, cp.Client, key, "Hello, least privilege!")

	if err := cp.Client.Delete(ctx, g); err != nil {
		t.Fatalf("delete greeting: %v", err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := cp.Client.Get(ctx, key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("get configmap: %w, want NotFound", err)
		}
		if err := cp.Client.Get(ctx, key, &hellov1.Greeting{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("get greeting: %w, want NotFound", err)
		}
		return nil
	})
}
