package bosun_test

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/testapi"
)

// readsSecrets is a hand-written step that reads Secrets and says so.
type readsSecrets struct{}

func (readsSecrets) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

func (readsSecrets) PolicyRules(*runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	return []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}}}, nil
}

// The RBAC rules a reconciler needs: the engine's own and those its steps
// declare, composites' steps included.
func ExampleReconciler_PolicyRules() {
	scheme := runtime.NewScheme()
	if err := testapi.AddToScheme(scheme); err != nil {
		fmt.Println(err)
		return
	}
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:  "widgets",
		Steps: []bosun.Step[*testapi.Widget]{bosun.Sequence[*testapi.Widget](readsSecrets{})},
	}
	rules, err := r.PolicyRules(scheme)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, rule := range rules {
		fmt.Printf("%q %v %v\n", rule.APIGroups[0], rule.Resources, rule.Verbs)
	}
	// Output:
	// "test.bosun.dev" [widgets] [get list watch update patch]
	// "test.bosun.dev" [widgets/status] [get update patch]
	// "events.k8s.io" [events] [create patch]
	// "" [namespaces] [get list watch]
	// "" [secrets] [get list watch]
}
