package policy_test

import (
	"testing"

	"github.com/bosunkit/bosun/examples/memcached/config/policy"
)

// TestPolicy checks that the binding names the policy and selects the
// namespaces by LabelKey and LabelValue.
func TestPolicy(t *testing.T) {
	p, err := policy.Policy()
	if err != nil {
		t.Fatal(err)
	}
	b, err := policy.Binding()
	if err != nil {
		t.Fatal(err)
	}
	if b.Spec.PolicyName != p.Name {
		t.Errorf("binding names policy %q, want %q", b.Spec.PolicyName, p.Name)
	}
	sel := b.Spec.MatchResources.NamespaceSelector
	if sel == nil || sel.MatchLabels[policy.LabelKey] != policy.LabelValue {
		t.Errorf("binding selects namespaces by %v, want %s=%s", sel, policy.LabelKey, policy.LabelValue)
	}
	if len(p.Spec.Validations) != 1 || p.Spec.Validations[0].Expression != "object.spec.size >= 2" {
		t.Errorf("policy validations %+v, want object.spec.size >= 2", p.Spec.Validations)
	}
}
