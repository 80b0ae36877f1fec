package bosun_test

import (
	"context"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestStatusWriteAnswerIsMetadata checks that the engine asks for the
// answer to its status write as metadata only: through controller-runtime's
// client, the write's answer carries the version it made and no status,
// where a write of the test's through the same client, with the typed
// object, gets the whole object back. Seen failing before the change: the
// engine's answers held the status.
func TestStatusWriteAnswerIsMetadata(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var mu sync.Mutex
	// What each status write's answer held: the engine's by object name,
	// the test's own write apart (the engine writes the status of that
	// object too, in an order of its own).
	type answer struct {
		Fields  int    // managedFields entries
		Status  bool   // the status came back
		Version string // resourceVersion
	}
	answered := map[string][]answer{}
	var ours []answer
	type ownWrite struct{}
	opts := bosuntest.ManagerOptions{Namespaces: []string{f.ns}, Configure: func(o *ctrl.Options) {
		o.NewClient = func(cfg *rest.Config, co client.Options) (client.Client, error) {
			c, err := client.NewWithWatch(cfg, co)
			if err != nil {
				return nil, err
			}
			return interceptor.NewClient(c, interceptor.Funcs{
				SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
					err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
					if err == nil {
						w, whole := obj.(*testapi.Widget)
						a := answer{Fields: len(obj.GetManagedFields()), Status: whole && len(w.Status.Conditions) > 0, Version: obj.GetResourceVersion()}
						mu.Lock()
						if ctx.Value(ownWrite{}) != nil {
							ours = append(ours, a)
						} else {
							answered[obj.GetName()] = append(answered[obj.GetName()], a)
						}
						mu.Unlock()
					}
					return err
				},
			}), nil
		}
	}}
	mgr := bosuntest.RunManagerWith(t, f.cp, opts, func(mgr ctrl.Manager) error {
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).For(&testapi.Widget{}).Complete(newReconciler("trimmed-answers", newJournal(), false))
	})
	f.create("engine", 6, 3, nil)
	stored := f.waitReady("engine", metav1.ConditionTrue, "Succeeded")

	f.create("unmarked", 1, 1, nil)
	f.waitReady("unmarked", metav1.ConditionTrue, "Succeeded")
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "unmarked"}}
	ctx := context.WithValue(t.Context(), ownWrite{}, true)
	if err := mgr.GetClient().Status().Patch(ctx, w, client.RawPatch(types.MergePatchType, []byte(`{"status":{"result":7}}`))); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// The engine's status write is answered with the object's metadata,
	// its version the one it made, and no status.
	if got := answered["engine"]; len(got) != 1 || got[0].Status || got[0].Version != stored.ResourceVersion {
		t.Errorf("the answers to the engine's status writes: %+v, want one of version %s without status", got, stored.ResourceVersion)
	}
	if len(answered["unmarked"]) == 0 {
		t.Error("the engine wrote no status of the second object")
	}
	for _, a := range answered["unmarked"] {
		if a.Status || a.Version == "" {
			t.Errorf("the engine's status write of the second object was answered with %+v, want its metadata alone", a)
		}
	}
	if got := ours; len(got) != 1 || got[0].Fields == 0 || !got[0].Status {
		t.Errorf("the answer to an unmarked write: %+v, want the whole object", got)
	}
}
