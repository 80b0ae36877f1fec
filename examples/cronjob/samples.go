package cronjob

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
)

// Samples returns the CronJobs the demo creates in namespace: one that runs
// a busybox Job printing the date every minute. Each call returns new
// objects.
func Samples(namespace string) []client.Object {
	return []client.Object{&cronjobv1.CronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: cronjobv1.GroupVersion.String(), Kind: "CronJob"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "every-minute"},
		Spec: cronjobv1.CronJobSpec{
			Schedule: "*/1 * * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyOnFailure,
					Containers: []corev1.Container{{
						Name:    "date",
						Image:   "busybox:1.37",
						Command: []string{"sh", "-c", "date; echo hello from bosun"},
					}},
				}},
			}},
		},
	}}
}
