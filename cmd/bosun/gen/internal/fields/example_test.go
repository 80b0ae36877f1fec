package fields_test

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/fields"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/testapi"
)

// builderIndexer registers field indexes with a fake client builder.
type builderIndexer struct{ b *fake.ClientBuilder }

// IndexField implements client.FieldIndexer.
func (i builderIndexer) IndexField(_ context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	i.b.WithIndex(obj, field, fn)
	return nil
}

// printDrain prints the names of the Pods Drain gets.
type printDrain struct{}

func (printDrain) Drain(_ context.Context, _ logr.Logger, pods, queued []corev1.Pod) (ctrl.Result, error) {
	for _, p := range pods {
		fmt.Println("pods:", p.Name)
	}
	for _, p := range queued {
		fmt.Println("queued:", p.Name)
	}
	return ctrl.Result{}, nil
}

// The states list Pods by field selectors, which a reader answers from the
// indexes IndexNodeManagerFields registers.
func ExampleNodeManagerSteps_Drain() {
	target := &testapi.Target{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "t1"},
		Spec:       testapi.TargetSpec{ServiceName: "node-a", Template: testapi.TemplateSpec{Queue: "q1"}},
		Status:     testapi.TargetStatus{Phase: "Running"},
	}
	pod := func(name, node string, phase corev1.PodPhase, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: name, Labels: labels},
			Spec:       corev1.PodSpec{NodeName: node},
			Status:     corev1.PodStatus{Phase: phase},
		}
	}
	b := fake.NewClientBuilder().WithObjects(
		pod("running", "node-a", corev1.PodRunning, nil),
		pod("pending", "node-a", corev1.PodPending, nil),
		pod("queued", "node-t1", corev1.PodPending, map[string]string{"queue": "q1"}),
		pod("elsewhere", "node-b", corev1.PodPending, map[string]string{"queue": "q1"}),
	)
	if err := fields.IndexNodeManagerFields(context.Background(), builderIndexer{b}); err != nil {
		fmt.Println(err)
		return
	}
	steps := fields.NewNodeManagerSteps(func(*bosun.Pass[*testapi.Target], *fields.NodeManagerState) fields.NodeManagerImpl {
		return printDrain{}
	})
	// A pass as the engine makes one, for a step run by hand.
	req := &bosun.Pass[*testapi.Target]{Object: target, Client: b.Build(), Log: logr.Discard(), Values: &bosun.Values{}}
	if _, err := steps.Drain().Do(context.Background(), req); err != nil {
		fmt.Println(err)
	}
	// Output:
	// pods: running
	// queued: queued
}
