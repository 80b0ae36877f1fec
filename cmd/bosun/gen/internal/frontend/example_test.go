package frontend_test

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/frontend"
)

// A single-object state that does not exist reaches the action as nil.
func ExampleFrontendManagerSteps_SyncService() {
	target := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "shop"}}
	c := fake.NewClientBuilder().WithObjects(target).Build()
	impl := &impl{}
	steps := frontend.NewFrontendManagerSteps(func(*bosun.Pass[*appsv1.Deployment], *frontend.FrontendManagerState) frontend.FrontendManagerImpl {
		return impl
	})
	// A pass as the engine makes one, for a step run by hand.
	req := &bosun.Pass[*appsv1.Deployment]{Object: target, Client: c, Log: logr.Discard(), Values: &bosun.Values{}}
	if _, err := steps.SyncService().Do(context.Background(), req); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(impl.calls)
	// Output:
	// [SyncService <none> <none>]
}
