package children

import (
	"fmt"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Present is the readiness of kinds that are ready as soon as they exist,
// such as ConfigMaps and Secrets: set it as Kind.Readiness. It makes a
// custom resource ready as soon as it exists, whatever its conditions say.
func Present(client.Object) (ready bool, message string) { return true, "" }

// DefaultReadiness is the readiness of a Kind without one; a Readiness of
// your own may call it and add its checks. It checks the kinds it knows,
// judges custom resources by their Ready condition, and finds any other
// kind present:
//
//   - Deployment: the controller saw the current generation, and every
//     desired replica is updated and available (the message tells when
//     its Progressing condition is False: the roll-out has stopped);
//   - StatefulSet: the current generation is seen, and every replica is
//     ready and at the update revision;
//   - DaemonSet: the current generation is seen, and every scheduled pod is
//     updated and available;
//   - Job: it completed (a failed Job is not ready);
//   - Service: of type LoadBalancer, it has an ingress address; others are
//     ready when they exist;
//   - PersistentVolumeClaim: it is bound;
//   - Pod: its Ready condition is True;
//   - a custom resource (a kind Kubernetes does not serve itself) whose
//     status has conditions: its Ready condition is True, and the
//     observedGeneration of that condition, or else status.observedGeneration
//     (when either is set), is not behind its metadata.generation. A False or Unknown Ready, a
//     missing one, or one for an older generation makes it not ready, and
//     the message says so with the condition's reason and message. A
//     custom resource with no status conditions is ready when it exists.
//
// Built-in kinds it does not know (ConfigMap, HorizontalPodAutoscaler...)
// are ready when they exist, whatever their conditions.
func DefaultReadiness(obj client.Object) (bool, string) {
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
	if builtIn(obj) {
		return true, ""
	}
	return conditionReady(obj)
}

// builtIn reports whether obj is of a kind Kubernetes serves itself: a
// typed object of a package under k8s.io, or an unstructured one of a kind
// client-go's scheme knows.
func builtIn(obj client.Object) bool {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return clientgoscheme.Scheme.Recognizes(u.GroupVersionKind())
	}
	t := reflect.TypeOf(obj)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return strings.HasPrefix(t.PkgPath(), "k8s.io/")
}

// conditionReady judges obj by the Ready condition of its status (see
// DefaultReadiness): ready when it is True for the object's generation, or
// when the status has no conditions at all.
func conditionReady(obj client.Object) (bool, string) {
	content, err := contentOf(obj)
	if err != nil {
		return false, "cannot read its status: " + err.Error()
	}
	conds, _, _ := unstructured.NestedSlice(content, "status", "conditions")
	if len(conds) == 0 {
		return true, ""
	}
	var ready map[string]any
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			ready = m
			break
		}
	}
	if ready == nil {
		return false, "no Ready condition yet"
	}
	status, _ := ready["status"].(string)
	if status != string(metav1.ConditionTrue) {
		msg := "Ready is " + status
		if status == "" {
			msg = "Ready has no status"
		}
		if reason, _ := ready["reason"].(string); reason != "" {
			msg += " (" + reason + ")"
		}
		if m, _ := ready["message"].(string); m != "" {
			msg += ": " + m
		}
		return false, msg
	}
	g, _, _ := unstructured.NestedFieldNoCopy(content, "metadata", "generation")
	generation, _ := number(g)
	observed, _ := number(ready["observedGeneration"])
	if observed == 0 {
		v, _, _ := unstructured.NestedFieldNoCopy(content, "status", "observedGeneration")
		observed, _ = number(v)
	}
	if observed != 0 && observed < generation {
		return false, fmt.Sprintf("Ready is True for generation %d, not yet for generation %d", int64(observed), int64(generation))
	}
	return true, ""
}

// contentOf returns obj in unstructured form, without a copy when it is
// unstructured already.
func contentOf(obj client.Object) (map[string]any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u.Object, nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	return m, nil
}

func replicasOf(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func deploymentReady(d *appsv1.Deployment) (bool, string) {
	want := replicasOf(d.Spec.Replicas)
	var msg string
	switch {
	case d.Status.ObservedGeneration < d.Generation:
		return false, "the deployment controller has not seen the latest spec"
	case d.Status.UpdatedReplicas < want:
		msg = fmt.Sprintf("%d of %d replicas updated", d.Status.UpdatedReplicas, want)
	case d.Status.AvailableReplicas < want:
		msg = fmt.Sprintf("%d of %d replicas available", d.Status.AvailableReplicas, want)
	default:
		return true, ""
	}
	// A roll-out past its progressDeadlineSeconds will not end by itself:
	// say so.
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse {
			msg += ", no progress (" + c.Reason + ")"
			if c.Message != "" {
				msg += ": " + c.Message
			}
		}
	}
	return false, msg
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
