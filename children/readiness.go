package children

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Readiness tells whether a live child is ready for use. The message says
// what is missing when it is not; it appears in the parent's condition.
type Readiness interface {
	Ready(obj client.Object) (ready bool, message string)
}

// ReadinessFunc adapts a function to Readiness.
type ReadinessFunc func(obj client.Object) (ready bool, message string)

// Ready calls f.
func (f ReadinessFunc) Ready(obj client.Object) (bool, string) { return f(obj) }

var (
	_ Readiness = ReadinessFunc(nil)
	_ Readiness = Present
	_ Readiness = DefaultReadiness
)

// Present is the Readiness of kinds that are ready as soon as they exist,
// such as ConfigMaps and Secrets.
var Present Readiness = ReadinessFunc(func(client.Object) (bool, string) { return true, "" })

// DefaultReadiness checks the kinds it knows and finds any other present:
//
//   - Deployment: the controller saw the current generation, and every
//     desired replica is updated and available;
//   - StatefulSet: the current generation is seen, and every replica is
//     ready and at the update revision;
//   - DaemonSet: the current generation is seen, and every scheduled pod is
//     updated and available;
//   - Job: it completed (a failed Job is not ready);
//   - Service: of type LoadBalancer, it has an ingress address; others are
//     ready when they exist;
//   - PersistentVolumeClaim: it is bound;
//   - Pod: its Ready condition is True.
var DefaultReadiness Readiness = ReadinessFunc(defaultReady)

func defaultReady(obj client.Object) (bool, string) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return deploymentReady(o)
	case *appsv1.StatefulSet:
		return statefulSetReady(o)
	case *appsv1.DaemonSet:
		return daemonSetReady(o)
	case *batchv1.Job:
		return jobReady(o)
	case *corev1.Service:
		if o.Spec.Type == corev1.ServiceTypeLoadBalancer && len(o.Status.LoadBalancer.Ingress) == 0 {
			return false, "no load balancer address yet"
		}
		return true, ""
	case *corev1.PersistentVolumeClaim:
		if o.Status.Phase != corev1.ClaimBound {
			return false, fmt.Sprintf("phase is %q, not Bound", o.Status.Phase)
		}
		return true, ""
	case *corev1.Pod:
		for _, c := range o.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return true, ""
			}
		}
		return false, "the pod is not ready"
	}
	return true, ""
}

func replicasOf(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func deploymentReady(d *appsv1.Deployment) (bool, string) {
	want := replicasOf(d.Spec.Replicas)
	switch {
	case d.Status.ObservedGeneration < d.Generation:
		return false, "the deployment controller has not seen the latest spec"
	case d.Status.UpdatedReplicas < want:
		return false, fmt.Sprintf("%d of %d replicas updated", d.Status.UpdatedReplicas, want)
	case d.Status.AvailableReplicas < want:
		return false, fmt.Sprintf("%d of %d replicas available", d.Status.AvailableReplicas, want)
	}
	return true, ""
}

func statefulSetReady(s *appsv1.StatefulSet) (bool, string) {
	want := replicasOf(s.Spec.Replicas)
	switch {
	case s.Status.ObservedGeneration < s.Generation:
		return false, "the statefulset controller has not seen the latest spec"
	case s.Status.ReadyReplicas < want:
		return false, fmt.Sprintf("%d of %d replicas ready", s.Status.ReadyReplicas, want)
	case s.Status.UpdateRevision != "" && s.Status.CurrentRevision != s.Status.UpdateRevision:
		return false, "a rolling update is in progress"
	}
	return true, ""
}

func daemonSetReady(d *appsv1.DaemonSet) (bool, string) {
	want := d.Status.DesiredNumberScheduled
	switch {
	case d.Status.ObservedGeneration < d.Generation:
		return false, "the daemonset controller has not seen the latest spec"
	case d.Status.UpdatedNumberScheduled < want:
		return false, fmt.Sprintf("%d of %d pods updated", d.Status.UpdatedNumberScheduled, want)
	case d.Status.NumberAvailable < want:
		return false, fmt.Sprintf("%d of %d pods available", d.Status.NumberAvailable, want)
	}
	return true, ""
}

func jobReady(j *batchv1.Job) (bool, string) {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return true, ""
		case batchv1.JobFailed:
			return false, "the job failed: " + c.Message
		}
	}
	return false, "the job has not completed"
}
