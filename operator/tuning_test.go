package operator_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/operator"
	"github.com/bosunkit/bosun/tuning"
)

// TestTuningFlag checks what --tuning changes in the managers the flags
// make: without it nothing rewrites what the API server sends (a
// transform set before the lean cache's sees a Widget's managedFields),
// the manager is not tuned, and its client is controller-runtime's; with
// it the cache's answers are trimmed before they are decoded and the
// manager is tuned. The cache is lean either way.
func TestTuningFlag(t *testing.T) {
	t.Parallel()
	cp := shared.ControlPlane(t)
	for _, tuned := range []bool{false, true} {
		t.Run(fmt.Sprintf("tuning %v", tuned), func(t *testing.T) {
			t.Parallel()
			ns := bosuntest.Namespace(t, cp.Client)
			fs := operator.Flags{Tuning: tuned}
			m := fs.ManagerOptions("shop")
			if got := m.NewClient != nil; got != tuned {
				t.Errorf("the options' NewClient is set: %v, want %v", got, tuned)
			}
			var mu sync.Mutex
			decoded := -1 // managedFields entries the Widget arrived with
			mgr := bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{Namespaces: []string{ns}, Configure: func(o *ctrl.Options) {
				o.NewCache, o.NewClient = m.NewCache, m.NewClient
				o.Cache.DefaultTransform = func(in any) (any, error) {
					if w, ok := in.(*testapi.Widget); ok {
						mu.Lock()
						decoded = max(decoded, len(w.ManagedFields))
						mu.Unlock()
					}
					return in, nil
				}
			}}, func(ctrl.Manager) error { return nil })
			// BOSUN_TUNING=on tunes every manager of the test kit.
			want := tuned || os.Getenv(bosuntest.EnvTuning) == "on"
			if got := tuning.Enabled(mgr); got != want {
				t.Errorf("tuning.Enabled = %v, want %v", got, want)
			}
			w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 1, Divisor: 1}}
			if err := cp.Client.Create(t.Context(), w); err != nil {
				t.Fatal(err)
			}
			bosuntest.Eventually(t, func(ctx context.Context) error {
				var cached testapi.Widget
				if err := mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(w), &cached); err != nil {
					return err
				}
				if len(cached.ManagedFields) != 0 {
					return errors.New("the cached Widget has managedFields: the cache is not lean")
				}
				return nil
			})
			mu.Lock()
			defer mu.Unlock()
			if trimmed := decoded == 0; trimmed != want {
				t.Errorf("the Widget arrived with %d managedFields entries; trimmed on the wire: %v, want %v", decoded, trimmed, want)
			}
		})
	}
}
