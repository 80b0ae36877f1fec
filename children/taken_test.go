package children

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/internal/wiretest"
)

// TestChildChangedSinceReadIsNotReady: the apply of a child after a spec
// change finds an object other than the one the pass read (a 409
// Conflict, injected on the wire), one of the set's own: the pass leaves
// it for the next one, and meanwhile the kind's condition counts it as not
// ready, naming it, rather than ready with the content of the earlier
// spec. The next apply is held until the test has seen that condition.
// Seen failing before: ConfigMapReady stayed True while cm-0 held the
// earlier value.
func TestChildChangedSinceReadIsNotReady(t *testing.T) {
	inj := &wiretest.ConflictThenHold{Release: make(chan struct{})}
	e := startHarness(t, reconciler(NewStep("web", webApp, []Kind{Of(&corev1.ConfigMap{})})), harness{transport: inj.Wrap})
	e.create("w", 2, 0)
	e.waitConditions("w", map[string]cond{"ConfigMapReady": {metav1.ConditionTrue, ReasonReady}})
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})

	inj.Path = "/api/v1/namespaces/" + e.ns + "/configmaps/cm-0"
	inj.Arm()
	e.setSpec("w", 3, 0)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		w := &testapi.Widget{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(e.widget("w")), w); err != nil {
			return err
		}
		c := meta.FindStatusCondition(w.Status.Conditions, "ConfigMapReady")
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(ReasonNotReady) || !strings.Contains(c.Message, "cm-0: changed since the pass read it") {
			return fmt.Errorf("ConfigMapReady is %+v, want False (NotReady) naming cm-0", c)
		}
		return nil
	})
	close(inj.Release)
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "3", "cm-1": "3", "cm-2": "3"})
	e.waitConditions("w", map[string]cond{"ConfigMapReady": {metav1.ConditionTrue, ReasonReady}})
}
