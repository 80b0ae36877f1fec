package trust

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/bosuntest"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
	"github.com/bosunkit/bosun/internal/wiretest"
)

// TestNotSyncedWhileATargetWaits: after a spec change, the apply of a
// target is answered 409 Conflict (on the wire, as when the object
// changed since the pass read it), so the children step leaves that
// target, still holding the earlier bundle, for its next pass. Meanwhile
// Synced (and Ready) is False with SyncConfigMapTargetFailed, not True for
// the new generation; the next apply, held until the test has seen that,
// syncs the Bundle. Seen failing before: Synced True while the target
// held the earlier bundle, which the battery's matrix caught as a status
// write after the Bundle looked converged.
func TestNotSyncedWhileATargetWaits(t *testing.T) {
	e := newEnv(t, false)
	e.namespace("team-a", nil)
	held := &wiretest.ConflictThenHold{Path: "/api/v1/namespaces/team-a/configmaps/corp", Release: make(chan struct{})}
	opts := withTrustNamespace(Options{})
	bosuntest.RunManagerWith(t, wiretest.Through(e.cp, held.Wrap), bosuntest.ManagerOptions{Configure: CacheOptions(opts)}, e.setup(opts))

	a, b := newTestCert(t, "a", false, time.Time{}), newTestCert(t, "b", false, time.Time{})
	e.bundle("corp", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{InLine: a.pem}},
		Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "bundle.pem"}},
	})
	e.waitSynced("corp", metav1.ConditionTrue, ReasonSynced)
	e.waitTargets("corp", "bundle.pem", bundleOf(t, a), e.allNamespaces()...)

	held.Arm()
	e.patch("corp", func(bl *trustv1alpha1.Bundle) {
		bl.Spec.Sources = append(bl.Spec.Sources, trustv1alpha1.BundleSource{InLine: b.pem})
	})
	e.waitSynced("corp", metav1.ConditionFalse, ReasonSyncConfigMapTargetFailed)
	close(held.Release)
	e.waitSynced("corp", metav1.ConditionTrue, ReasonSynced)
	e.waitTargets("corp", "bundle.pem", bundleOf(t, a, b), e.allNamespaces()...)
}
