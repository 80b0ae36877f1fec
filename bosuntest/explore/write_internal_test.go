package explore

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestWriteOutlastsManyConflicts: an operator that keeps writing the
// object makes the explorer's spec write meet a conflict again and again;
// the write is read again and retried for as long as that lasts, also past
// the point where its pause between tries stops growing.
func TestWriteOutlastsManyConflicts(t *testing.T) {
	const conflicts = 14 // the pause reaches its cap after about ten
	cm := &unstructured.Unstructured{}
	cm.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	cm.SetNamespace("ns")
	cm.SetName("explored")
	updates := 0
	c := fake.NewClientBuilder().WithObjects(cm.DeepCopy()).WithInterceptorFuncs(interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			updates++
			if updates <= conflicts {
				return apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, obj.GetName(), nil)
			}
			return c.Update(ctx, obj, opts...)
		},
	}).Build()
	e := &explorer{t: Target{Client: c}}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	admitted, err := e.write(ctx, cm, map[string]any{"size": int64(3)})
	if err != nil || !admitted {
		t.Fatalf("write after %d conflicts = %v, %v; want admitted", conflicts, admitted, err)
	}
	if updates != conflicts+1 {
		t.Errorf("updates = %d, want %d", updates, conflicts+1)
	}
}
