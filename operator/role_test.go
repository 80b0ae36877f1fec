package operator_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/operator"
)

// readsConfigMaps is a step that declares it reads ConfigMaps.
type readsConfigMaps struct{ double }

func (readsConfigMaps) PolicyRules(*runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"watch", "get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
	}, nil
}

// leases is a runnable that declares it keeps one Lease by name.
type leases struct{}

func (leases) Start(ctx context.Context) error { <-ctx.Done(); return nil }

func (leases) PolicyRules(*runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"mine"}, Verbs: []string{"update", "get"}},
		{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}},
	}, nil
}

// roleOf runs opts with --role and returns what it printed.
func roleOf(t *testing.T, opts operator.Options) (string, error) {
	t.Helper()
	flags := operator.DefaultFlags()
	flags.Role = true
	var out bytes.Buffer
	err := operator.Run(t.Context(), opts, flags, &out)
	return out.String(), err
}

// TestRole checks what --role prints: the rules of the engine, of the
// steps and of the runnables Setup adds that declare theirs, merged and
// laid out as controller-gen writes config/rbac/role.yaml (verbs sorted
// and said once, resources that share their group and verbs in one rule,
// resource names and non-resource URLs kept), without a cluster: the
// operator's kubeconfig points nowhere.
func TestRole(t *testing.T) {
	t.Setenv("KUBECONFIG", "/nonexistent")
	opts := widgets("roles", "")
	opts.Setup = func(mgr ctrl.Manager) error {
		if err := mgr.Add(leases{}); err != nil {
			return err
		}
		r := &bosun.Reconciler[*testapi.Widget]{Name: "roles", Steps: []bosun.Step[*testapi.Widget]{
			bosun.Sequence[*testapi.Widget](readsConfigMaps{}),
		}}
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).Complete(r)
	}
	got, err := roleOf(t, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := `---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: manager-role
rules:
- apiGroups:
  - ""
  resources:
  - configmaps
  - namespaces
  verbs:
  - get
  - list
  - watch
- apiGroups:
  - ""
  resources:
  - secrets
  verbs:
  - get
- apiGroups:
  - coordination.k8s.io
  resourceNames:
  - mine
  resources:
  - leases
  verbs:
  - get
  - update
- apiGroups:
  - events.k8s.io
  resources:
  - events
  verbs:
  - create
  - patch
- apiGroups:
  - test.bosun.dev
  resources:
  - widgets
  verbs:
  - get
  - list
  - patch
  - update
  - watch
- apiGroups:
  - test.bosun.dev
  resources:
  - widgets/status
  verbs:
  - get
  - patch
  - update
- nonResourceURLs:
  - /metrics
  verbs:
  - get
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("--role (-want +got):\n%s", diff)
	}
}

// TestRoleErrors checks that --role fails, saying why, when there is no
// bosun reconciler to derive a role from or the setup fails, and prints
// nothing then.
func TestRoleErrors(t *testing.T) {
	t.Setenv("KUBECONFIG", "/nonexistent")
	tests := map[string]struct {
		setup func(ctrl.Manager) error
		want  string
	}{
		"no bosun reconciler": {
			setup: func(mgr ctrl.Manager) error {
				return mgr.Add(manager.RunnableFunc(func(context.Context) error { return nil }))
			},
			want: "no bosun reconciler",
		},
		"setup fails": {
			setup: func(ctrl.Manager) error { return errSetup },
			want:  "setting up its controllers: --flag is required",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			opts := widgets("roles", "")
			opts.Setup = tt.setup
			got, err := roleOf(t, opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
			if got != "" {
				t.Errorf("printed %q with the error", got)
			}
		})
	}
}

// errSetup is the error of a setup that misses a flag.
var errSetup = errors.New("--flag is required")
