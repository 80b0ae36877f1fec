package cronjob

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	"github.com/bosunkit/bosun/examples/cronjob/config/rbac"
)

// TestGeneratedRole pins the rules controller-gen derives from the markers
// bosun gen writes: reads for the Job state and the target, update on the
// target's finalizers for the Jobs' blockOwnerDeletion, the Job writes the
// document's actions declare (create, delete), namespaces and events for
// the engine; and from those of the storage version migration: get and
// patch of the CronJob CRD, by name, and patch of its status; nothing else.
func TestGeneratedRole(t *testing.T) {
	role, err := rbac.ClusterRole()
	if err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, ResourceNames: []string{CRDName}, Verbs: []string{"get", "patch"}},
		{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions/status"}, ResourceNames: []string{CRDName}, Verbs: []string{"patch"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create", "delete", "get", "list", "watch"}},
		{APIGroups: []string{"cronjob.bosun.dev"}, Resources: []string{"cronjobs"}, Verbs: []string{"get", "list", "patch", "update", "watch"}},
		{APIGroups: []string{"cronjob.bosun.dev"}, Resources: []string{"cronjobs/finalizers"}, Verbs: []string{"update"}},
		{APIGroups: []string{"cronjob.bosun.dev"}, Resources: []string{"cronjobs/status"}, Verbs: []string{"get", "patch", "update"}},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
	if diff := cmp.Diff(want, role.Rules); diff != "" {
		t.Errorf("generated rules (-want +got):\n%s", diff)
	}
}

// runAs binds rules, under a ClusterRole of its own, to a new user of the
// control plane and runs the CronJob controller as that user, with a fake
// clock, until the test ends.
func runAs(t *testing.T, user string, rules []rbacv1.PolicyRule) *env {
	t.Helper()
	cp := shared.ControlPlane(t)
	bindRole(t, cp, user, rules)
	clk := clocktesting.NewFakeClock(time.Now())
	bosuntest.RunManagerAs(t, cp, user, func(mgr ctrl.Manager) error { return SetupWithManager(mgr, Options{Clock: clk}) })
	return &env{t: t, c: cp.Client, ns: bosuntest.Namespace(t, cp.Client), clock: clk}
}

// bindRole binds rules, under a ClusterRole of its own, to user on cp,
// until the test ends.
func bindRole(t *testing.T, cp *controlplane.ControlPlane, user string, rules []rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if err := cp.Client.Create(t.Context(), role); err != nil {
		t.Fatalf("create cluster role: %v", err)
	}
	if err := cp.Client.Create(t.Context(), binding); err != nil {
		t.Fatalf("create cluster role binding: %v", err)
	}
	t.Cleanup(func() {
		_ = cp.Client.Delete(context.Background(), binding)
		_ = cp.Client.Delete(context.Background(), role)
	})
}

// TestRunsWithGeneratedRole runs the controller as a user that holds only
// the generated ClusterRole: it caches, schedules, starts a Job and reports
// Ready, so the markers grant all it needs.
func TestRunsWithGeneratedRole(t *testing.T) {
	role, err := rbac.ClusterRole()
	if err != nil {
		t.Fatal(err)
	}
	e := runAs(t, "cronjob-controller-generated", role.Rules)
	cj := e.create("rbac", every5)
	run := e.runs(cj, 1)[0]
	e.at(run.Add(10*time.Second), "rbac")
	e.waitJobs("rbac", jobName(cj, run))
	e.waitActive("rbac", run, jobName(cj, run))
	e.waitReady("rbac", metav1.ConditionTrue, conditions.ReasonSucceeded)
}

// TestRoleWithoutJobCreate shows that the user really is held to its role:
// without the create verb on Jobs the run fails, and Ready says so.
func TestRoleWithoutJobCreate(t *testing.T) {
	role, err := rbac.ClusterRole()
	if err != nil {
		t.Fatal(err)
	}
	rules := make([]rbacv1.PolicyRule, 0, len(role.Rules))
	for _, r := range role.Rules {
		r = *r.DeepCopy()
		if r.Resources[0] == "jobs" {
			r.Verbs = []string{"delete", "get", "list", "watch"}
		}
		rules = append(rules, r)
	}
	e := runAs(t, "cronjob-controller-nocreate", rules)
	cj := e.create("rbac", every5)
	run := e.runs(cj, 1)[0]
	e.at(run.Add(10*time.Second), "rbac")
	e.waitCronJob("rbac", func(cj *cronjobv1.CronJob) error {
		c := conditions.Find(cj.Status.Conditions, conditions.TypeReady)
		if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "forbidden") {
			return fmt.Errorf("Ready is %v, want False with a forbidden error", c)
		}
		return nil
	})
	e.waitJobs("rbac")
	if len(e.get("rbac").Status.Active) != 0 {
		t.Errorf("status.active lists Jobs that could not be created")
	}
}
