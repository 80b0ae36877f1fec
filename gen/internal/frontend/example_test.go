package frontend_test

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun/gen/internal/frontend"
)

// A single-object state that does not exist reaches the action as nil.
func ExampleFrontendManager_SyncService() {
	target := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "shop"}}
	c := fake.NewClientBuilder().WithObjects(target).Build()
	impl := &impl{}
	m := frontend.NewFrontendManager(frontend.NewFrontendManagerState(c, target), impl, logr.Discard())
	if _, err := m.SyncService().Run(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(impl.calls)
	// Output:
	// [SyncService <none> <none>]
}
