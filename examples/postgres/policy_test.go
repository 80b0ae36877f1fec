package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/internal/manifests"
	"github.com/bosunkit/bosun/managed"
)

// applyPolicy applies the ValidatingAdmissionPolicy of config/policy, its
// binding narrowed to namespace ns (the control plane is shared), and
// removes both when the test ends.
func applyPolicy(t *testing.T, e env, ns string) {
	t.Helper()
	_, objs, err := manifests.Build("config/policy")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "ValidatingAdmissionPolicyBinding" {
			sel := map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}}
			if err := unstructured.SetNestedField(o.Object, sel, "spec", "matchResources", "namespaceSelector"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := manifests.Apply(t.Context(), e.c, objs, "bosun-test"); err != nil {
		t.Fatalf("applying config/policy: %v", err)
	}
	t.Cleanup(func() {
		for _, o := range objs {
			if err := e.c.Delete(context.Background(), o); client.IgnoreNotFound(err) != nil {
				t.Errorf("deleting %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	})
}

// deniedFor reports whether err is the policy's refusal, naming what it
// refused.
func deniedFor(err error, what string) error {
	switch {
	case err == nil:
		return fmt.Errorf("allowed, want refused for %s", what)
	case !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err):
		return fmt.Errorf("%w, want Forbidden", err)
	case !strings.Contains(err.Error(), what):
		return fmt.Errorf("refused with %q, want the message to name %s", err.Error(), what)
	}
	return nil
}

// TestPolicyKeepsDeletionAnnotationsToAdministrators applies the
// ValidatingAdmissionPolicy of config/policy and acts as a user who may
// create, read, update and patch Roles in one namespace. The user may make
// and change Roles, but not set bosun.dev/release-finalizer,
// bosun.dev/deletion-policy or bosun.dev/management-policies, at creation
// or later, nor remove the operator's finalizer; an administrator may set
// them; the operator still releases its finalizer when a Role is deleted.
func TestPolicyKeepsDeletionAnnotationsToAdministrators(t *testing.T) {
	e := start(t, nil)
	ctx := t.Context()
	applyPolicy(t, e, e.ns)
	user := tenant(t, e, e.ns, "get", "update", "patch")

	// The policy takes effect once the API server has loaded it.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		r := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, GenerateName: "orphaned-", Annotations: map[string]string{
			managed.AnnotationDeletionPolicy: string(managed.DeletionOrphan),
		}}}
		err := user.Create(ctx, r)
		if err == nil {
			_ = e.c.Delete(ctx, r)
		}
		return deniedFor(err, managed.AnnotationDeletionPolicy)
	})

	role := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app"}, Spec: pgv1.RoleSpec{Login: true}}
	if err := user.Create(ctx, role); err != nil {
		t.Fatalf("the user creating a plain Role: %v", err)
	}
	waitFor(t, e.c, client.ObjectKeyFromObject(role), role, readyTrue, syncedTrue)

	// edit changes the Role through c, again when the operator's write
	// came first.
	edit := func(c client.Client, fn func(*pgv1.Role)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			r := &pgv1.Role{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(role), r); err != nil {
				return err
			}
			fn(r)
			return c.Update(ctx, r)
		})
	}
	annotate := func(k, v string) func(*pgv1.Role) {
		return func(r *pgv1.Role) {
			if r.Annotations == nil {
				r.Annotations = map[string]string{}
			}
			r.Annotations[k] = v
		}
	}
	if err := edit(user, func(r *pgv1.Role) { r.Spec.Login = false }); err != nil {
		t.Errorf("the user changing the spec: %v", err)
	}
	for _, a := range []struct{ key, value string }{
		{bosun.AnnotationReleaseFinalizer, "orphan"},
		{bosun.AnnotationAllowMassDeletion, "true"},
		{managed.AnnotationDeletionPolicy, string(managed.DeletionOrphan)},
		{managed.AnnotationManagementPolicies, managed.ObserveOnly().String()},
	} {
		if err := deniedFor(edit(user, annotate(a.key, a.value)), a.key); err != nil {
			t.Errorf("the user setting %s: %v", a.key, err)
		}
	}
	err := edit(user, func(r *pgv1.Role) { r.Finalizers = nil })
	if err := deniedFor(err, "finalizers"); err != nil {
		t.Errorf("the user removing the operator's finalizer: %v", err)
	}
	if err := edit(e.c, annotate(managed.AnnotationDeletionOrder, string(managed.DeletionOrderLast))); err != nil {
		t.Errorf("an administrator setting %s: %v", managed.AnnotationDeletionOrder, err)
	}
	name := managed.ExternalName(role)
	deleteAndWait(t, e, role)
	if got := readRole(t, e, name); got != nil {
		t.Errorf("role %s still there after its Role was deleted: %+v", name, got)
	}
}
