package explain

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// toUnstructured returns obj, of the type and version given, as the
// dynamic client reads it.
func toUnstructured(t *testing.T, apiVersion, kind string, obj any) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

// pendingPod is a pod that no scheduler placed.
func pendingPod(name string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
}

// readyPod is a running, ready pod.
func readyPod(name string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		}},
	}
}

func TestJudge(t *testing.T) {
	type verdict struct {
		Ready  bool
		Status string
	}
	meta := func(generation int64) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: "x", Generation: generation}
	}
	tests := []struct {
		name  string
		child func(t *testing.T) *unstructured.Unstructured
		want  verdict
	}{
		{
			name: "deployment with no ready replica",
			child: func(t *testing.T) *unstructured.Unstructured {
				return toUnstructured(t, "apps/v1", "Deployment", &appsv1.Deployment{
					ObjectMeta: meta(1), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)},
					Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 2, UpdatedReplicas: 2},
				})
			},
			want: verdict{false, "0/2 replicas ready"},
		},
		{
			name: "deployment stuck, with the controller's conditions",
			child: func(t *testing.T) *unstructured.Unstructured {
				return toUnstructured(t, "apps/v1", "Deployment", &appsv1.Deployment{
					ObjectMeta: meta(3), Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3)},
					Status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 1, Conditions: []appsv1.DeploymentCondition{
						{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "x-1" has timed out progressing.`},
						{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: "exceeded quota"},
						{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"},
					}},
				})
			},
			want: verdict{false, `2/3 replicas ready; 1/3 updated; 1/3 available; generation 3 not yet seen by the deployment controller; ` +
				`Progressing False (ProgressDeadlineExceeded): ReplicaSet "x-1" has timed out progressing.; ReplicaFailure True (FailedCreate): exceeded quota`},
		},
		{
			name: "deployment ready, one replica by default",
			child: func(t *testing.T) *unstructured.Unstructured {
				return toUnstructured(t, "apps/v1", "Deployment", &appsv1.Deployment{
					ObjectMeta: meta(1), Status: appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
						Conditions: []appsv1.DeploymentCondition{
							{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
							{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
						}},
				})
			},
			want: verdict{true, "1/1 replicas ready"},
		},
		{
			name: "statefulset rolling",
			child: func(t *testing.T) *unstructured.Unstructured {
				return toUnstructured(t, "apps/v1", "StatefulSet", &appsv1.StatefulSet{
					ObjectMeta: meta(2), Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3)},
					Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, ReadyReplicas: 3, UpdatedReplicas: 1, CurrentRevision: "a", UpdateRevision: "b"},
				})
			},
			want: verdict{false, "3/3 replicas ready; rolling update under way, 1/3 updated"},
		},
		{
			name: "daemonset",
			child: func(t *testing.T) *unstructured.Unstructured {
				return toUnstructured(t, "apps/v1", "DaemonSet", &appsv1.DaemonSet{
					ObjectMeta: meta(1),
					Status:     appsv1.DaemonSetStatus{ObservedGeneration: 1, DesiredNumberScheduled: 4, NumberReady: 3, UpdatedNumberScheduled: 4, NumberAvailable: 3},
				})
			},
			want: verdict{false, "3/4 pods ready"},
		},
		{
			name: "job failed",
			child: func(t *testing.T) *unstructured.Unstructured {
				return toUnstructured(t, "batch/v1", "Job", &batchv1.Job{ObjectMeta: meta(1), Status: batchv1.JobStatus{Failed: 4, Conditions: []batchv1.JobCondition{
					{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"},
				}}})
			},
			want: verdict{false, "failed (BackoffLimitExceeded): Job has reached the specified backoff limit"},
		},
		{
			name: "job running",
			child: func(t *testing.T) *unstructured.Unstructured {
				return toUnstructured(t, "batch/v1", "Job", &batchv1.Job{ObjectMeta: meta(1), Status: batchv1.JobStatus{Active: 1, Failed: 1}})
			},
			want: verdict{false, "not complete: 1 active, 0 succeeded, 1 failed"},
		},
		{
			name: "job suspended",
			child: func(t *testing.T) *unstructured.Unstructured {
				return toUnstructured(t, "batch/v1", "Job", &batchv1.Job{ObjectMeta: meta(1), Spec: batchv1.JobSpec{Suspend: ptr.To(true)}})
			},
			want: verdict{false, "suspended"},
		},
		{
			name: "job complete",
			child: func(t *testing.T) *unstructured.Unstructured {
				return toUnstructured(t, "batch/v1", "Job", &batchv1.Job{ObjectMeta: meta(1), Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{
					{Type: batchv1.JobComplete, Status: corev1.ConditionTrue},
				}}})
			},
			want: verdict{true, ""},
		},
		{
			name: "pod pending",
			child: func(t *testing.T) *unstructured.Unstructured {
				p := pendingPod("x")
				return toUnstructured(t, "v1", "Pod", &p)
			},
			want: verdict{false, "Pending: not scheduled yet"},
		},
		{
			name: "pod unschedulable",
			child: func(t *testing.T) *unstructured.Unstructured {
				p := pendingPod("x")
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/2 nodes are available"}}
				return toUnstructured(t, "v1", "Pod", &p)
			},
			want: verdict{false, "Pending: not scheduled (Unschedulable): 0/2 nodes are available"},
		},
		{
			name: "pod crashing",
			child: func(t *testing.T) *unstructured.Unstructured {
				p := readyPod("x")
				p.Status.Conditions = nil
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", State: corev1.ContainerState{
					Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s"},
				}}}
				return toUnstructured(t, "v1", "Pod", &p)
			},
			want: verdict{false, "Running, not ready: container app waiting (CrashLoopBackOff): back-off 5m0s"},
		},
		{
			name: "pod ready",
			child: func(t *testing.T) *unstructured.Unstructured {
				p := readyPod("x")
				return toUnstructured(t, "v1", "Pod", &p)
			},
			want: verdict{true, ""},
		},
		{
			name: "load balancer without an address",
			child: func(t *testing.T) *unstructured.Unstructured {
				return toUnstructured(t, "v1", "Service", &corev1.Service{ObjectMeta: meta(1), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.0.0.7"}})
			},
			want: verdict{false, "no load balancer address yet"},
		},
		{
			name: "cluster IP service",
			child: func(t *testing.T) *unstructured.Unstructured {
				return toUnstructured(t, "v1", "Service", &corev1.Service{ObjectMeta: meta(1)})
			},
			want: verdict{true, ""},
		},
		{
			name: "claim not bound",
			child: func(t *testing.T) *unstructured.Unstructured {
				return toUnstructured(t, "v1", "PersistentVolumeClaim", &corev1.PersistentVolumeClaim{
					ObjectMeta: meta(1), Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
				})
			},
			want: verdict{false, "PVC is not Bound. phase: Pending"},
		},
		{
			name: "config map",
			child: func(t *testing.T) *unstructured.Unstructured {
				return toUnstructured(t, "v1", "ConfigMap", &corev1.ConfigMap{ObjectMeta: meta(0)})
			},
			want: verdict{true, ""},
		},
		{
			name: "custom resource not ready",
			child: func(*testing.T) *unstructured.Unstructured {
				return customResource(1, map[string]any{"type": "Ready", "status": "False", "reason": "CreateFailed", "message": "quota"})
			},
			want: verdict{false, "Ready False (CreateFailed): quota"},
		},
		{
			name: "custom resource ready for an older generation",
			child: func(*testing.T) *unstructured.Unstructured {
				return customResource(3, map[string]any{"type": "Ready", "status": "True", "reason": "Succeeded", "observedGeneration": int64(2)})
			},
			want: verdict{false, "Ready True for generation 2, not yet for generation 3"},
		},
		{
			name: "custom resource without Ready",
			child: func(*testing.T) *unstructured.Unstructured {
				return customResource(1, map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess"})
			},
			want: verdict{false, "no Ready condition yet"},
		},
		{
			name: "custom resource without conditions",
			child: func(*testing.T) *unstructured.Unstructured {
				return customResource(1)
			},
			want: verdict{true, ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ready, status := judge(tt.child(t))
			if diff := cmp.Diff(tt.want, verdict{ready, status}); diff != "" {
				t.Errorf("judge mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// customResource returns a Widget of generation with conds in its status.
func customResource(generation int64, conds ...map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion("test.bosun.dev/v1")
	u.SetKind("Widget")
	u.SetName("x")
	u.SetGeneration(generation)
	if len(conds) > 0 {
		items := make([]any, len(conds))
		for i, c := range conds {
			items[i] = c
		}
		_ = unstructured.SetNestedSlice(u.Object, items, "status", "conditions")
	}
	return u
}

func TestPodSummary(t *testing.T) {
	deleting := readyPod("a-gone")
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	failed := pendingPod("a-failed")
	failed.Spec.NodeName = "node-1"
	failed.Status = corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "app", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"}},
	}}}
	evicted := pendingPod("a-evicted")
	evicted.Spec.NodeName = "node-1"
	evicted.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on memory."}
	tests := []struct {
		name string
		pods []corev1.Pod
		want string
	}{
		{"none", nil, "no pods"},
		{"all pending", []corev1.Pod{pendingPod("b"), pendingPod("a")}, "pods: 2 Pending; a: not scheduled yet"},
		{"all ready", []corev1.Pod{readyPod("a"), readyPod("b")}, "pods: 2 ready"},
		{"mixed", []corev1.Pod{readyPod("z"), deleting, failed, pendingPod("m")}, "pods: 1 ready, 1 Pending, 1 Failed, 1 terminating; a-failed: container app exited with code 2 (Error)"},
		{"evicted", []corev1.Pod{evicted}, "pods: 1 Failed; a-evicted: Evicted: The node was low on memory."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, podSummary(tt.pods)); diff != "" {
				t.Errorf("podSummary mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConditionText(t *testing.T) {
	tests := []struct {
		typ, status, reason, message string
		want                         string
	}{
		{"Ready", "False", "Oops", "it\nbroke", "Ready False (Oops): it broke"},
		{"Ready", "False", "", "", "Ready False"},
		{"failed", "", "BackoffLimitExceeded", "", "failed (BackoffLimitExceeded)"},
		{"", "", "Evicted", "low memory", "Evicted: low memory"},
		{"", "", "", "just a message", "just a message"},
	}
	for _, tt := range tests {
		if got := conditionText(tt.typ, tt.status, tt.reason, tt.message); got != tt.want {
			t.Errorf("conditionText(%q, %q, %q, %q) = %q, want %q", tt.typ, tt.status, tt.reason, tt.message, got, tt.want)
		}
	}
}
