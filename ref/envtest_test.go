package ref_test

import (
	"context"
	"fmt"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/ref"
)

const (
	typeOwner = "OwnerResolved"
	typeReady = conditions.TypeReady
)

// ownerSteps returns the owner step made with opts, and the step after it
// that copies the owner's value into status.result.
func ownerSteps(opts ...ref.Option) func() []bosun.Step[*testapi.Widget] {
	return func() []bosun.Step[*testapi.Widget] {
		owner := ref.Resolve[*testapi.Widget, *testapi.Widget]("owner", refOf, opts...)
		return []bosun.Step[*testapi.Widget]{owner, useOwner(owner, false)}
	}
}

// A reference by name, through every state: missing, there but not
// ready, ready, changed, ready again, gone. Each change of the referenced
// Widget reaches the referrer through the step's own watch; no state
// retries on a timer, and a converged referrer is not written again.
func TestNameReferenceOnAPIServer(t *testing.T) {
	t.Parallel()
	e := start(t, ownerSteps())
	e.referrer(e.ns, "w", annName, "r")

	missing := fmt.Sprintf(`Widget "%s/r" does not exist`, e.ns)
	e.expect(e.ns, "w", typeOwner, metav1.ConditionFalse, "ReferenceNotFound", missing, nil)
	e.expect(e.ns, "w", typeReady, metav1.ConditionFalse, "ReferenceNotFound", missing, nil)

	r := e.target(e.ns, "r", 7, nil, false)
	e.expect(e.ns, "w", typeOwner, metav1.ConditionFalse, "ReferenceNotReady", "it has no Ready condition yet", nil)

	e.markReady(r)
	e.expect(e.ns, "w", typeOwner, metav1.ConditionTrue, "Resolved", fmt.Sprintf(`resolved to Widget "%s/r"`, e.ns), result(7))
	e.expect(e.ns, "w", typeReady, metav1.ConditionTrue, conditions.ReasonSucceeded, "", nil)
	e.expectQuiet("w", r)

	// A new spec: the Ready condition no longer describes it.
	e.change(r, false, func() { r.Spec.Value = 9 })
	e.expect(e.ns, "w", typeOwner, metav1.ConditionFalse, "ReferenceNotReady",
		"its Ready condition describes generation 1, not the current 2", result(7))
	e.markReady(r)
	e.expect(e.ns, "w", typeOwner, metav1.ConditionTrue, "Resolved", "", result(9))

	if err := e.c.Delete(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	e.expect(e.ns, "w", typeOwner, metav1.ConditionFalse, "ReferenceNotFound", missing, nil)
}

// Pointing the reference elsewhere is a change of the referrer: it is
// resolved again, and the new object's changes reach it. (That the object
// it left no longer maps to it is TestMapper's.)
func TestReferenceMovesOnAPIServer(t *testing.T) {
	t.Parallel()
	e := start(t, ownerSteps())
	a := e.target(e.ns, "a", 1, nil, true)
	b := e.target(e.ns, "b", 2, nil, true)
	w := e.referrer(e.ns, "w", annName, "a")
	e.expect(e.ns, "w", typeOwner, metav1.ConditionTrue, "Resolved", "", result(1))

	e.change(w, false, func() { w.Annotations[annName] = "b" })
	e.expect(e.ns, "w", typeOwner, metav1.ConditionTrue, "Resolved", fmt.Sprintf(`resolved to Widget "%s/b"`, e.ns), result(2))
	e.expectQuiet("w", b)

	// b's changes reach w; a's no longer matter.
	if err := e.c.Delete(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	e.change(b, false, func() { b.Spec.Value = 3 })
	e.expect(e.ns, "w", typeOwner, metav1.ConditionFalse, "ReferenceNotReady", "describes generation 1", nil)
	e.markReady(b)
	e.expect(e.ns, "w", typeOwner, metav1.ConditionTrue, "Resolved", "", result(3))
}

// A reference by labels: none, one, two and one again match, each change
// of a candidate's labels reaching the referrer, the labels it lost
// included.
func TestSelectorReferenceOnAPIServer(t *testing.T) {
	t.Parallel()
	e := start(t, ownerSteps())
	db := map[string]string{"app": "db"}
	e.target(e.ns, "web", 1, map[string]string{"app": "web"}, true)
	e.referrer(e.ns, "w", annSelector, "app=db")
	e.expect(e.ns, "w", typeOwner, metav1.ConditionFalse, "ReferenceNotFound",
		fmt.Sprintf(`no Widget in namespace "%s" matches app=db`, e.ns), nil)

	first := e.target(e.ns, "db-1", 5, db, true)
	e.expect(e.ns, "w", typeOwner, metav1.ConditionTrue, "Resolved", "db-1", result(5))
	e.expectQuiet("w", first)

	second := e.target(e.ns, "db-2", 6, db, true)
	e.expect(e.ns, "w", typeOwner, metav1.ConditionFalse, "ReferenceAmbiguous",
		fmt.Sprintf(`2 Widget objects in namespace "%s" match app=db (db-1, db-2); the reference must match exactly one`, e.ns), nil)
	e.expect(e.ns, "w", typeReady, metav1.ConditionFalse, "ReferenceAmbiguous", "", nil)

	// The first loses its label: only its old labels name the referrer.
	e.change(first, false, func() { delete(first.Labels, "app") })
	e.expect(e.ns, "w", typeOwner, metav1.ConditionTrue, "Resolved", "db-2", result(6))

	e.change(second, false, func() { second.Labels["app"] = "cache" })
	e.expect(e.ns, "w", typeOwner, metav1.ConditionFalse, "ReferenceNotFound", "matches app=db", nil)
}

// A reference into another namespace, allowed: the index finds the
// referrer across namespaces.
func TestCrossNamespaceReferenceOnAPIServer(t *testing.T) {
	t.Parallel()
	e := start(t, ownerSteps(ref.AllowCrossNamespace()))
	e.referrer(e.ns, "w", annName, "r", annNamespace, e.other)
	e.expect(e.ns, "w", typeOwner, metav1.ConditionFalse, "ReferenceNotFound", fmt.Sprintf(`Widget "%s/r" does not exist`, e.other), nil)

	// An object of the same name in the referrer's own namespace is not
	// the one referred to.
	e.target(e.ns, "r", 1, nil, true)
	r := e.target(e.other, "r", 4, nil, true)
	e.expect(e.ns, "w", typeOwner, metav1.ConditionTrue, "Resolved", fmt.Sprintf(`resolved to Widget "%s/r"`, e.other), result(4))
	e.expectQuiet("w", r)

	e.change(r, false, func() { r.Spec.Value = 8 })
	e.markReady(r)
	e.expect(e.ns, "w", typeOwner, metav1.ConditionTrue, "Resolved", "", result(8))
}

// A reference to a cluster-scoped kind.
func TestClusterScopedReferenceOnAPIServer(t *testing.T) {
	t.Parallel()
	e := start(t, func() []bosun.Step[*testapi.Widget] {
		return []bosun.Step[*testapi.Widget]{ref.Resolve[*testapi.Widget, *rbacv1.ClusterRole]("role", refOf)}
	})
	name := "ref-test-" + e.ns
	e.referrer(e.ns, "w", annName, name)
	e.expect(e.ns, "w", "RoleResolved", metav1.ConditionFalse, "ReferenceNotFound", fmt.Sprintf(`ClusterRole "%s" does not exist`, name), nil)

	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}}
	e.create(role)
	// The test's context is over when cleanups run.
	t.Cleanup(func() { _ = client.IgnoreNotFound(e.c.Delete(context.Background(), role)) })
	e.expect(e.ns, "w", "RoleResolved", metav1.ConditionTrue, "Resolved", fmt.Sprintf(`resolved to ClusterRole "%s"`, name), nil)
	e.expectQuiet("w", role)

	if err := e.c.Delete(t.Context(), role); err != nil {
		t.Fatal(err)
	}
	e.expect(e.ns, "w", "RoleResolved", metav1.ConditionFalse, "ReferenceNotFound", "does not exist", nil)
}
