package trust

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/bosuntest"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// TestTargetsReachEveryNamespaceWithANarrowDefaultCache runs the
// controller in a manager whose cache defaults to the trust namespace
// (cache.Options.DefaultNamespaces, as an operator that narrows its other
// kinds sets it), with CacheOptions as the operator's. CacheOptions
// promises the targets' cache "in opts.TargetNamespaces when it is not
// empty", every namespace otherwise: a Bundle without a selector reaches
// every namespace. Seen failing when CacheOptions left the targets' cache
// to the default namespaces: every read outside the trust namespace was
// refused ("unknown namespace for the cache").
func TestTargetsReachEveryNamespaceWithANarrowDefaultCache(t *testing.T) {
	e := newEnv(t, false)
	cp := e.cp
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
