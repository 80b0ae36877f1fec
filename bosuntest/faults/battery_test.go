package faults_test

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestBattery runs the whole battery on the test operator: a ConfigMap
// and an external resource per Widget.
func TestBattery(t *testing.T) {
	st := &store{}
	faults.RunBattery(t, shared.ControlPlane(t), faults.Operator{
		Name:  "faults-test",
		Setup: setup(st),
		Object: func(ns string, i int) client.Object {
			return &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("w%d", i)}, Spec: testapi.WidgetSpec{Value: int64(i + 1)}}
		},
		Converged:  converged(st),
		Duplicates: duplicates(st),
		Cleaned: func(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
			return cleaned(st)(ctx, c, ns, objs)
		},
		External: true,
	})
}
