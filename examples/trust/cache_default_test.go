package trust

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// TestTargetsReachEveryNamespaceWithANarrowDefaultCache runs the
// controller in a manager whose cache defaults to the trust namespace
// (cache.Options.DefaultNamespaces, as an operator that narrows its other
// kinds sets it), with CacheOptions as the operator's. CacheOptions
// promises the targets' cache "in opts.TargetNamespaces when it is not
// empty", every namespace otherwise: a Bundle without a selector reaches
// every namespace, as before the refactor (which kept the targets' cache
// at cache.AllNamespaces explicitly).
func TestTargetsReachEveryNamespaceWithANarrowDefaultCache(t *testing.T) {
	cpOpts, err := controlplane.OptionsFor(AddToScheme, CRDs)()
	if err != nil {
		t.Fatal(err)
	}
	cp := bosuntest.Start(t, cpOpts)
	e := &env{t: t, cp: cp, c: cp.Client, writes: &bosuntest.WriteCounter{}, passes: &passLog{}}
	e.namespace(trustNamespace, nil)
	e.namespace("team-a", nil)
	opts := withTrustNamespace(Options{})
	bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{Namespaces: []string{trustNamespace}, Configure: CacheOptions(opts)}, e.setup(opts))

	a := newTestCert(t, "a", false, time.Time{})
	e.source("corp-ca", map[string]string{"ca.crt": a.pem}, nil)
	e.bundle("corp", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Name: "corp-ca", Key: "ca.crt"}}},
		Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "bundle.pem"}},
	})
	e.waitSynced("corp", metav1.ConditionTrue, ReasonSynced)
	e.waitTargets("corp", "bundle.pem", bundleOf(t, a), e.allNamespaces()...)
}
