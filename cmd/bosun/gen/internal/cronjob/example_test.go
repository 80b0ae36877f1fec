package cronjob_test

import (
	"context"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/cronjob"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/testapi"
)

// The state reads the Jobs that carry the target's label and that the
// target controls.
func ExampleCronJobControllerManagerState_GetJobs() {
	yes := true
	target := &testapi.Target{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "nightly", UID: "uid-1"}}
	mine := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{
		Namespace: "default", Name: "nightly-1", Labels: map[string]string{"cronjob": "nightly"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "cronjob.bosun.dev/v1", Kind: "Target", Name: "nightly", UID: "uid-1", Controller: &yes}},
	}}
	stranger := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "stranger", Labels: map[string]string{"cronjob": "nightly"}}}

	b := fake.NewClientBuilder().WithObjects(mine, stranger)
	// The fake client serves field selectors from indexes too.
	b.WithIndex(&batchv1.Job{}, ".metadata.controller", func(obj client.Object) []string {
		if ref := metav1.GetControllerOf(obj); ref != nil {
			return []string{ref.Name}
		}
		return nil
	})
	state := cronjob.NewCronJobControllerManagerState(b.Build(), target)
	jobs, err := state.GetJobs(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, j := range jobs {
		fmt.Println(j.Name)
	}
	// Output:
	// nightly-1
}
