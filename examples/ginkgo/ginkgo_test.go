// Package ginkgo_test shows bosuntest's helpers in a Ginkgo suite: they take
// GinkgoT() wherever a test takes *testing.T.
package ginkgo_test

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
)

// The helpers take what a Ginkgo suite passes them.
var _ bosuntest.TB = GinkgoT()

// TestGinkgoSuite runs a Ginkgo suite that uses bosuntest's helpers with
// GinkgoT(): the shared control plane, a namespace, a running manager and
// Eventually.
func TestGinkgoSuite(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "bosuntest with Ginkgo")
}

var _ = Describe("bosuntest helpers", func() {
	It("run a manager and wait on a condition with GinkgoT()", func() {
		cp := shared.ControlPlane(GinkgoT())
		ns := bosuntest.Namespace(GinkgoT(), cp.Client)
		mgr := bosuntest.RunManager(GinkgoT(), cp, func(ctrl.Manager) error { return nil })
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "seen"}}
		Expect(cp.Client.Create(context.Background(), cm)).To(Succeed())
		bosuntest.Eventually(GinkgoT(), func(ctx context.Context) error {
			var got corev1.ConfigMap
			if err := mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
				return err
			}
			if got.UID != cm.UID {
				return errors.New("another ConfigMap")
			}
			return nil
		})
	})
})
