package rbaccheck

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/yaml"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/operator"
)

// RoleFile is where controller-gen writes an example's ClusterRole,
// relative to the example's directory, which is the working directory of
// its tests.
const RoleFile = "config/rbac/role.yaml"

// Role returns the ClusterRole in the file at path, as controller-gen
// writes it. A field that a ClusterRole does not have fails the test.
func Role(t testing.TB, path string) *rbacv1.ClusterRole {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the generated role: %v", err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatalf("decoding the generated role %s: %v", path, err)
	}
	return &role
}

// Triples returns what rules grant as sorted, unique lines "group/resource
// verb", so that rules that grant the same compare equal however they are
// split or merged: controller-gen merges the resources that share their
// verbs into one rule, a reconciler lists each step's rules in turn.
func Triples(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, g+"/"+res+" "+v)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Compare fails the test unless generated, the rules of the generated
// role, and derived, the rules the reconcilers derive from their steps,
// grant the same: neither grants what the other does not. The difference
// is reported as "-generated +derived" triples (see Triples).
func Compare(t testing.TB, generated, derived []rbacv1.PolicyRule) {
	t.Helper()
	if diff := cmp.Diff(Triples(generated), Triples(derived)); diff != "" {
		t.Errorf("derived rules against the generated role (-generated +derived):\n%s", diff)
	}
}

// PrintsRole fails the test unless the operator of opts, run with --role,
// prints exactly the role controller-gen wrote to path from the markers:
// the same rules in the same layout, byte for byte, so that the role could
// as well be written with `go run ./cmd --role > config/rbac/role.yaml`.
func PrintsRole(t testing.TB, opts operator.Options, path string) {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the generated role: %v", err)
	}
	flags := operator.DefaultFlags()
	flags.Role = true
	var got bytes.Buffer
	if err := operator.Run(t.Context(), opts, flags, &got); err != nil {
		t.Fatalf("--role: %v", err)
	}
	if diff := cmp.Diff(string(want), got.String()); diff != "" {
		t.Errorf("--role against %s (-generated +printed):\n%s", path, diff)
	}
}

// RunAs runs a manager, as bosuntest.RunManagerWith does with opts and
// setup, connecting as user, a user that holds rules and nothing else: a
// ClusterRole named user with rules, bound to user by a
// ClusterRoleBinding of the same name. RunAs makes both before the
// manager starts and removes them after it stops, when the test ends.
// opts.User is set to user.
//
// A request the API server refused fails the test once the manager has
// stopped, if the manager or a controller logged it as an error: a refused
// write that a retry hides, or a refused event, would otherwise pass
// unseen.
func RunAs(t *testing.T, cp *controlplane.ControlPlane, user string, rules []rbacv1.PolicyRule, opts bosuntest.ManagerOptions, setup func(ctrl.Manager) error) ctrl.Manager {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if err := cp.Client.Create(t.Context(), role); err != nil {
		t.Fatalf("creating cluster role %s: %v", user, err)
	}
	t.Cleanup(func() {
		// t.Context() is done by now.
		_ = cp.Client.Delete(context.Background(), role)
	})
	if err := cp.Client.Create(t.Context(), binding); err != nil {
		t.Fatalf("creating cluster role binding %s: %v", user, err)
	}
	t.Cleanup(func() { _ = cp.Client.Delete(context.Background(), binding) })
	logs := &bosuntest.LogRecorder{}
	configure := opts.Configure
	opts.User = user
	opts.Configure = func(o *ctrl.Options) {
		o.Logger = logs.Wrap(o.Logger)
		if configure != nil {
			configure(o)
		}
	}
	// Registered before the manager's cleanup, so run after the manager
	// stopped.
	t.Cleanup(func() {
		for _, e := range logs.Errors() {
			if apierrors.IsForbidden(e.Err) || strings.Contains(e.String(), "forbidden") {
				t.Errorf("the API server refused %s: %s", user, e)
			}
		}
	})
	return bosuntest.RunManagerWith(t, cp, opts, setup)
}
