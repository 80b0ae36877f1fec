package children

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/randfill"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestCustomResourceReadiness checks DefaultReadiness on kinds it does not
// know: custom resources by their Ready condition and its generation,
// built-in kinds by their presence.
func TestCustomResourceReadiness(t *testing.T) {
	widget := func(generation, observed int64, conds ...metav1.Condition) client.Object {
		return &testapi.Widget{
			ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: generation},
			Status:     testapi.WidgetStatus{ObservedGeneration: observed, Conditions: conds},
		}
	}
	ready := func(status metav1.ConditionStatus, generation int64) metav1.Condition {
		return metav1.Condition{Type: "Ready", Status: status, ObservedGeneration: generation, Reason: "Reconciled", Message: "all good"}
	}
	gadget := func(conds ...any) client.Object {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": "g", "generation": int64(4)},
		}}
		if conds != nil {
			u.Object["status"] = map[string]any{"conditions": conds}
		}
		return u
	}
	type result struct {
		Ready   bool
		Message string
	}
	tests := []struct {
		name string
		obj  client.Object
		want result
	}{
		{"no status conditions", widget(3, 0), result{true, ""}},
		{"Ready True for the generation", widget(3, 0, ready(metav1.ConditionTrue, 3)), result{true, ""}},
		{"Ready True, condition behind", widget(3, 0, ready(metav1.ConditionTrue, 2)),
			result{false, "Ready is True for generation 2, not yet for generation 3"}},
		{"Ready True, status behind", widget(3, 2, ready(metav1.ConditionTrue, 0)),
			result{false, "Ready is True for generation 2, not yet for generation 3"}},
		{"Ready True, status up to date", widget(3, 3, ready(metav1.ConditionTrue, 0)), result{true, ""}},
		{"Ready True, no generation observed", widget(3, 0, ready(metav1.ConditionTrue, 0)), result{true, ""}},
		{"Ready False", widget(1, 0, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, ObservedGeneration: 1, Reason: "Provisioning", Message: "waiting for the disk"}),
			result{false, "Ready is False (Provisioning): waiting for the disk"}},
		{"Ready Unknown", widget(1, 0, metav1.Condition{Type: "Ready", Status: metav1.ConditionUnknown, Reason: "Starting"}),
			result{false, "Ready is Unknown (Starting)"}},
		{"conditions without Ready", widget(1, 0, metav1.Condition{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Synced"}),
			result{false, "no Ready condition yet"}},
		{"unstructured custom resource ready", gadget(map[string]any{"type": "Ready", "status": "True", "observedGeneration": int64(4)}), result{true, ""}},
		{"unstructured custom resource behind", gadget(map[string]any{"type": "Ready", "status": "True", "observedGeneration": int64(3)}),
			result{false, "Ready is True for generation 3, not yet for generation 4"}},
		{"unstructured custom resource without conditions", gadget(), result{true, ""}},
		{"built-in kind with conditions but no Ready", &autoscalingv2.HorizontalPodAutoscaler{Status: autoscalingv2.HorizontalPodAutoscalerStatus{
			Conditions: []autoscalingv2.HorizontalPodAutoscalerCondition{{Type: autoscalingv2.AbleToScale, Status: corev1.ConditionFalse}},
		}}, result{true, ""}},
		{"unstructured built-in kind", &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace",
			"status": map[string]any{"conditions": []any{map[string]any{"type": "NamespaceDeletionContentFailure", "status": "True"}}},
		}}, result{true, ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, msg := DefaultReadiness(tt.obj)
			if diff := cmp.Diff(tt.want, result{ok, msg}); diff != "" {
				t.Errorf("readiness (-want +got):\n%s", diff)
			}
		})
	}
}

// partOf is the desired set of TestCustomResourceChildReadiness: one
// Widget child, "<parent>-part", with the parent's spec.value.
func partOf(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
	return []client.Object{&testapi.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: req.Object.Name + "-part"},
		Spec:       testapi.WidgetSpec{Value: req.Object.Spec.Value},
	}}, nil
}

// setChildStatus writes the status of the child Widget name as its own
// controller would.
func (e *env) setChildStatus(name string, observed int64, conds ...metav1.Condition) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w := &testapi.Widget{}
		if err := e.c.Get(e.t.Context(), client.ObjectKey{Namespace: e.ns, Name: name}, w); err != nil {
			return err
		}
		for i := range conds {
			conds[i].LastTransitionTime = metav1.Now()
		}
		w.Status = testapi.WidgetStatus{ObservedGeneration: observed, Conditions: conds}
		return e.c.Status().Update(e.t.Context(), w)
	})
	if err != nil {
		e.t.Fatalf("writing the status of %s: %v", name, err)
	}
}

// childGeneration returns the generation of the child Widget name.
func (e *env) childGeneration(name string) int64 {
	e.t.Helper()
	w := &testapi.Widget{}
	if err := e.c.Get(e.t.Context(), client.ObjectKey{Namespace: e.ns, Name: name}, w); err != nil {
		e.t.Fatalf("reading %s: %v", name, err)
	}
	return w.Generation
}

// TestCustomResourceChildReadiness keeps a Widget as the child of a Widget:
// the parent is ready while the child has no conditions, follows the
// child's Ready condition (its reason and message in the parent's
// WidgetReady), and is not ready while the child's Ready is for an older
// generation than the one the step just applied.
func TestCustomResourceChildReadiness(t *testing.T) {
	step := NewStep("parts", partOf, []Kind{Of(&testapi.Widget{})})
	e := start(t, reconciler(step))
	e.create("crd", 1, 0)
	ready := map[string]cond{
		"WidgetReady":        {metav1.ConditionTrue, ReasonReady},
		conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded},
	}
	notReady := map[string]cond{
		"WidgetReady":        {metav1.ConditionFalse, ReasonNotReady},
		conditions.TypeReady: {metav1.ConditionFalse, ReasonNotReady},
	}
	// message returns the WidgetReady message of the parent w.
	message := func(w *testapi.Widget) string { return conditions.Find(w.Status.Conditions, "WidgetReady").Message }

	// No conditions yet: ready when it exists, as before.
	e.waitConditions("crd", ready)

	gen := e.childGeneration("crd-part")
	e.setChildStatus("crd-part", 0, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, ObservedGeneration: gen,
		Reason: "Provisioning", Message: "waiting for the disk"})
	w := e.waitConditions("crd", notReady)
	if want := "1 of 1 Widget not ready: crd-part: Ready is False (Provisioning): waiting for the disk"; message(w) != want {
		t.Errorf("WidgetReady message = %q, want %q", message(w), want)
	}

	e.setChildStatus("crd-part", 0, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, ObservedGeneration: gen, Reason: "Provisioned"})
	e.waitConditions("crd", ready)

	// A new spec for the child: its Ready is for the generation before.
	e.setSpec("crd", 2, 0)
	w = e.waitConditions("crd", notReady)
	next := e.childGeneration("crd-part")
	if next == gen {
		t.Fatalf("the child's generation is still %d after its spec changed", gen)
	}
	if want := fmt.Sprintf("not yet for generation %d", next); !strings.Contains(message(w), want) {
		t.Errorf("WidgetReady message = %q, want it to say %q", message(w), want)
	}

	// Its controller catches up, saying so in status.observedGeneration.
	e.setChildStatus("crd-part", next, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Provisioned"})
	e.waitConditions("crd", ready)

	// Conditions, but none of them Ready.
	e.setChildStatus("crd-part", next, metav1.Condition{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Synced"})
	w = e.waitConditions("crd", notReady)
	if !strings.Contains(message(w), "no Ready condition") {
		t.Errorf("WidgetReady message = %q, want it to say there is no Ready condition", message(w))
	}
}

// A custom resource among the children is ready by its own Ready
// condition, once that condition is for its latest generation.
func TestDefaultReadyFollowsGenerations(t *testing.T) {
	gadget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g", "generation": int64(2)},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "Ready", "status": "True", "reason": "Reconciled", "observedGeneration": int64(1)},
		}},
	}}
	ready, msg := DefaultReadiness(gadget)
	if ready || msg != "Ready is True for generation 1, not yet for generation 2" {
		t.Errorf("DefaultReadiness = %t %q, want false %q", ready, msg, "Ready is True for generation 1, not yet for generation 2")
	}

	// Its controller sees generation 2 and finds a problem.
	_ = unstructured.SetNestedSlice(gadget.Object, []any{
		map[string]any{"type": "Ready", "status": "False", "reason": "QuotaExceeded", "message": "no room for 3 gadgets", "observedGeneration": int64(2)},
	}, "status", "conditions")
	ready, msg = DefaultReadiness(gadget)
	if ready || msg != "Ready is False (QuotaExceeded): no room for 3 gadgets" {
		t.Errorf("DefaultReadiness = %t %q, want false %q", ready, msg, "Ready is False (QuotaExceeded): no room for 3 gadgets")
	}

	// And solves it.
	_ = unstructured.SetNestedSlice(gadget.Object, []any{
		map[string]any{"type": "Ready", "status": "True", "reason": "Reconciled", "observedGeneration": int64(2)},
	}, "status", "conditions")
	ready, msg = DefaultReadiness(gadget)
	if !ready || msg != "" {
		t.Errorf("DefaultReadiness = %t %q, want true %q", ready, msg, "")
	}
}

// The ways DefaultReadiness departs from kstatus (see its documentation),
// for the cases of TestReadinessAgreesWithKstatus.
const (
	jobRunning       = "a Job that has started is ready once it completes"
	podFailed        = "a failed Pod is not ready"
	loadBalancer     = "a LoadBalancer Service is ready once it has an address"
	onDelete         = "an OnDelete StatefulSet is ready once its replicas are"
	noReadyCondition = "a custom resource with conditions needs a Ready one"
	readyBehind      = "a Ready condition for an older generation is not ready"
	unknownBuiltIn   = "a built-in kind kstatus has no rule for is ready when it exists"
)

// wholeForm is obj converted whole to unstructured, with its kind, as
// kstatus is given objects by the tools that use it.
func wholeForm(t *testing.T, obj client.Object) *unstructured.Unstructured {
	t.Helper()
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatalf("converting %T: %v", obj, err)
	}
	u := &unstructured.Unstructured{Object: content}
	if gvks, _, err := clientgoscheme.Scheme.ObjectKinds(obj); err == nil {
		u.SetGroupVersionKind(gvks[0])
	}
	return u
}

// TestReadinessAgreesWithKstatus judges a child of every kind kstatus
// knows, in the states their controllers leave them in, and custom and
// built-in kinds it does not know: DefaultReadiness finds a child ready
// exactly when kstatus finds it Current, with kstatus's message, except in
// the departures its documentation lists, each of which must still depart.
func TestReadinessAgreesWithKstatus(t *testing.T) {
	now := metav1.Now()
	deployment := func(generation int64, st appsv1.DeploymentStatus) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Generation: generation},
			// The API server's default deadline: kstatus then waits for
			// Progressing to say the new ReplicaSet is available.
			Spec:   appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), ProgressDeadlineSeconds: ptr.To[int32](600)},
			Status: st,
		}
	}
	counts := func(replicas, updated, ready, available int32, conds ...appsv1.DeploymentCondition) appsv1.DeploymentStatus {
		return appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: replicas, UpdatedReplicas: updated,
			ReadyReplicas: ready, AvailableReplicas: available, Conditions: conds}
	}
	availableTrue := appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}
	statefulSet := func(strategy appsv1.StatefulSetUpdateStrategy, ready, updated int32, updateRevision string) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: 2},
			Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), UpdateStrategy: strategy},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 3, ReadyReplicas: ready, CurrentReplicas: 3,
				UpdatedReplicas: updated, CurrentRevision: "db-1", UpdateRevision: updateRevision},
		}
	}
	// The API server's default strategy.
	rolling := appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
		RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](0)}}
	byDelete := appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	daemonSet := func(available int32) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Generation: 1}, Status: appsv1.DaemonSetStatus{
			ObservedGeneration: 1, DesiredNumberScheduled: 3, CurrentNumberScheduled: 3, UpdatedNumberScheduled: 3,
			NumberAvailable: available, NumberReady: available,
		}}
	}
	replicaSet := func(available int32) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Generation: 1}, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](2)},
			Status: appsv1.ReplicaSetStatus{ObservedGeneration: 1, Replicas: 2, FullyLabeledReplicas: 2, ReadyReplicas: available, AvailableReplicas: available}}
	}
	job := func(st batchv1.JobStatus) *batchv1.Job {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "migrate", Generation: 1}, Spec: batchv1.JobSpec{Completions: ptr.To[int32](1)}, Status: st}
	}
	pod := func(phase corev1.PodPhase, ready corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", CreationTimestamp: now}, Status: corev1.PodStatus{Phase: phase,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
	}
	service := func(kind corev1.ServiceType, ingress ...corev1.LoadBalancerIngress) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Type: kind, ClusterIP: "10.0.0.7"},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: ingress}}}
	}
	crd := func(conds ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": "gadgets.example.com", "generation": int64(1)},
			"status":   map[string]any{"conditions": conds},
		}}
	}
	widget := func(generation, observed int64, conds ...metav1.Condition) *testapi.Widget {
		return &testapi.Widget{
			TypeMeta:   metav1.TypeMeta{APIVersion: testapi.GroupVersion.String(), Kind: "Widget"},
			ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: generation},
			Status:     testapi.WidgetStatus{ObservedGeneration: observed, Conditions: conds},
		}
	}
	readyTrue := func(generation int64) metav1.Condition {
		return metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, ObservedGeneration: generation, Reason: "Reconciled"}
	}
	deleting := func(obj client.Object) client.Object {
		obj.SetDeletionTimestamp(&now)
		obj.SetFinalizers([]string{"example.com/hold"})
		return obj
	}
	type result struct {
		Ready   bool
		Message string
	}
	tests := []struct {
		name    string
		obj     client.Object
		want    result
		departs string
	}{
		{"Deployment available", deployment(2, availableStatus(2, 3)), result{true, ""}, ""},
		{"Deployment of a spec its controller has not seen", deployment(3, availableStatus(2, 3)),
			result{false, "Deployment generation is 3, but latest observed generation is 2"}, ""},
		{"Deployment just made", deployment(1, appsv1.DeploymentStatus{}), result{false, "Replicas: 0/3"}, ""},
		{"Deployment rolling", deployment(2, counts(4, 2, 3, 3)), result{false, "Updated: 2/3"}, ""},
		{"Deployment with old pods terminating", deployment(2, counts(4, 3, 3, 3)), result{false, "Pending termination: 1"}, ""},
		{"Deployment short of available replicas", deployment(2, counts(3, 3, 2, 2)), result{false, "Available: 2/3"}, ""},
		{"Deployment whose roll-out is not declared complete", deployment(2, counts(3, 3, 3, 3, availableTrue,
			appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated"})),
			result{false, "ReplicaSet not Available"}, ""},
		{"Deployment past its progress deadline", deployment(2, counts(3, 1, 2, 2,
			appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded",
				Message: `ReplicaSet "web-2" has timed out progressing.`})),
			result{false, `Progress deadline exceeded: ReplicaSet "web-2" has timed out progressing.`}, ""},
		{"unstructured Deployment available", wholeForm(t, deployment(2, availableStatus(2, 3))), result{true, ""}, ""},
		{"unstructured Deployment rolling", wholeForm(t, deployment(2, counts(4, 2, 3, 3))), result{false, "Updated: 2/3"}, ""},
		{"Deployment being deleted", deleting(deployment(2, availableStatus(2, 3))), result{false, "being deleted"}, ""},

		{"StatefulSet ready", statefulSet(rolling, 3, 3, "db-1"), result{true, ""}, ""},
		{"StatefulSet rolling", statefulSet(rolling, 3, 1, "db-2"), result{false, "updated: 1/3"}, ""},
		{"StatefulSet short of ready replicas", statefulSet(rolling, 2, 3, "db-1"), result{false, "Ready: 2/3"}, ""},
		{"StatefulSet without a partition, between revisions", statefulSet(appsv1.StatefulSetUpdateStrategy{}, 3, 3, "db-2"),
			result{false, "Waiting for updated revision to match current"}, ""},
		{"OnDelete StatefulSet ready", statefulSet(byDelete, 3, 0, "db-2"), result{true, ""}, ""},
		{"OnDelete StatefulSet short of ready replicas", statefulSet(byDelete, 2, 0, "db-2"), result{false, "2 of 3 replicas ready"}, onDelete},

		{"DaemonSet ready", daemonSet(3), result{true, ""}, ""},
		{"DaemonSet short of available pods", daemonSet(2), result{false, "Available: 2/3"}, ""},
		{"ReplicaSet ready", replicaSet(2), result{true, ""}, ""},
		{"ReplicaSet short of available pods", replicaSet(1), result{false, "Available: 1/2"}, ""},

		{"Job complete", job(batchv1.JobStatus{StartTime: &now, Succeeded: 1, Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}), result{true, ""}, ""},
		{"Job failed", job(batchv1.JobStatus{StartTime: &now, Failed: 4, Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit"}}}),
			result{false, "Job Failed. failed: 4/1 (BackoffLimitExceeded): Job has reached the specified backoff limit"}, ""},
		{"Job running", job(batchv1.JobStatus{StartTime: &now, Active: 1}),
			result{false, "Job in progress. success:0, active: 1, failed: 0"}, jobRunning},
		{"Job not started", job(batchv1.JobStatus{}), result{false, "Job not started"}, ""},

		{"Pod ready", pod(corev1.PodRunning, corev1.ConditionTrue), result{true, ""}, ""},
		{"Pod running, not ready", pod(corev1.PodRunning, corev1.ConditionFalse), result{false, "Pod is running but is not Ready"}, ""},
		{"Pod crash looping", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "web", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}}},
			result{false, "Containers in CrashLoop state: web"}, ""},
		{"Pod pending", pod(corev1.PodPending, corev1.ConditionFalse), result{false, "Pod is in the Pending phase"}, ""},
		{"Pod succeeded", pod(corev1.PodSucceeded, corev1.ConditionFalse), result{true, ""}, ""},
		{"Pod failed", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."}},
			result{false, "Pod has completed, but not successfully (Evicted): The node was low on resource: memory."}, podFailed},

		{"PersistentVolumeClaim bound", &corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}, result{true, ""}, ""},
		{"PersistentVolumeClaim pending", &corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}},
			result{false, "PVC is not Bound. phase: Pending"}, ""},
		{"ClusterIP Service", service(corev1.ServiceTypeClusterIP), result{true, ""}, ""},
		{"LoadBalancer Service without an address", service(corev1.ServiceTypeLoadBalancer), result{false, "no load balancer address yet"}, loadBalancer},
		{"LoadBalancer Service with an address", service(corev1.ServiceTypeLoadBalancer, corev1.LoadBalancerIngress{IP: "203.0.113.7"}), result{true, ""}, ""},

		{"PodDisruptionBudget", &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 2}}, result{true, ""}, ""},
		{"PodDisruptionBudget of a spec not seen yet", &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Status: policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1}},
			result{false, "PodDisruptionBudget generation is 2, but latest observed generation is 1"}, ""},
		{"CustomResourceDefinition established", crd(map[string]any{"type": "NamesAccepted", "status": "True"}, map[string]any{"type": "Established", "status": "True"}),
			result{true, ""}, ""},
		{"CustomResourceDefinition installing", crd(map[string]any{"type": "Established", "status": "False", "reason": "Installing"}),
			result{false, "Install in progress"}, ""},
		{"ConfigMap", &corev1.ConfigMap{}, result{true, ""}, ""},
		{"Secret", &corev1.Secret{}, result{true, ""}, ""},
		{"CronJob", &batchv1.CronJob{}, result{true, ""}, ""},
		{"ConfigMap being deleted", deleting(&corev1.ConfigMap{}), result{false, "being deleted"}, ""},

		{"HorizontalPodAutoscaler of a spec not seen yet", &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Status: autoscalingv2.HorizontalPodAutoscalerStatus{ObservedGeneration: ptr.To[int64](1)}}, result{true, ""}, unknownBuiltIn},
		{"HorizontalPodAutoscaler being deleted", deleting(&autoscalingv2.HorizontalPodAutoscaler{}), result{false, "being deleted"}, ""},
		{"unstructured Namespace", &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"status": map[string]any{"phase": "Active"}}}, result{true, ""}, ""},

		{"custom resource without conditions", widget(3, 0), result{true, ""}, ""},
		{"custom resource without conditions, of a spec not seen yet", widget(3, 2),
			result{false, "Widget generation is 3, but latest observed generation is 2"}, ""},
		{"custom resource Ready", widget(3, 3, readyTrue(3)), result{true, ""}, ""},
		{"custom resource Ready for an older generation", widget(3, 0, readyTrue(2)),
			result{false, "Ready is True for generation 2, not yet for generation 3"}, readyBehind},
		{"custom resource Ready, status behind", widget(3, 2, readyTrue(0)),
			result{false, "Ready is True for generation 2, not yet for generation 3"}, ""},
		{"custom resource not Ready", widget(1, 1, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Provisioning", Message: "waiting for the disk"}),
			result{false, "Ready is False (Provisioning): waiting for the disk"}, ""},
		{"custom resource without a Ready condition", widget(1, 1, metav1.Condition{Type: "Synced", Status: metav1.ConditionTrue, Reason: "Synced"}),
			result{false, "no Ready condition yet"}, noReadyCondition},
		{"custom resource Ready and Reconciling", widget(1, 1, readyTrue(1),
			metav1.Condition{Type: "Reconciling", Status: metav1.ConditionTrue, Reason: "Resizing", Message: "growing the volume"}),
			result{false, "Reconciling is True (Resizing): growing the volume"}, ""},
		{"unstructured custom resource Stalled", &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g", "generation": int64(1)},
			"status": map[string]any{"conditions": []any{
				map[string]any{"type": "Ready", "status": "True", "reason": "Reconciled"},
				map[string]any{"type": "Stalled", "status": "True", "reason": "QuotaExceeded", "message": "no room for 3 gadgets"},
			}},
		}}, result{false, "Stalled is True (QuotaExceeded): no room for 3 gadgets"}, ""},
		{"custom resource being deleted", deleting(widget(1, 1, readyTrue(1))), result{false, "being deleted"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ready, msg := DefaultReadiness(tt.obj)
			if diff := cmp.Diff(tt.want, result{ready, msg}); diff != "" {
				t.Errorf("DefaultReadiness (-want +got):\n%s", diff)
			}
			res, err := status.Compute(wholeForm(t, tt.obj))
			if err != nil {
				t.Fatalf("kstatus: %v", err)
			}
			current := res.Status == status.CurrentStatus
			switch {
			case tt.departs == "" && ready != current:
				t.Errorf("ready %t, but kstatus says %s (%q)", ready, res.Status, res.Message)
			case tt.departs != "" && ready == current:
				t.Errorf("ready %t as kstatus says %s (%q): the departure %q is gone", ready, res.Status, res.Message, tt.departs)
			}
		})
	}
}

// TestReadinessGivesKstatusWhatItReads fills objects of the kinds that
// DefaultReadiness gives kstatus in part (spec fields and status, not pod
// templates or metadata beyond the generation) with random values, half of
// them settled as their controller leaves them so that kstatus reads on to
// its last check: kstatus computes the same result from that part as from
// the whole object. A kstatus that reads one more field fails here.
func TestReadinessGivesKstatusWhatItReads(t *testing.T) {
	kinds := []struct {
		obj    client.Object
		settle func(client.Object)
	}{
		{&appsv1.Deployment{}, func(o client.Object) {
			d := o.(*appsv1.Deployment)
			n := ptr.Deref(d.Spec.Replicas, 1)
			d.Status = availableStatus(d.Generation, n)
		}},
		{&appsv1.StatefulSet{}, func(o client.Object) {
			s := o.(*appsv1.StatefulSet)
			n := ptr.Deref(s.Spec.Replicas, 1)
			s.Status.ObservedGeneration, s.Status.Replicas, s.Status.ReadyReplicas = s.Generation, n, n
			s.Status.CurrentReplicas, s.Status.UpdatedReplicas, s.Status.UpdateRevision = n, n, s.Status.CurrentRevision
		}},
		{&appsv1.DaemonSet{}, func(o client.Object) {
			d := o.(*appsv1.DaemonSet)
			n := d.Status.DesiredNumberScheduled
			d.Status.ObservedGeneration, d.Status.CurrentNumberScheduled, d.Status.UpdatedNumberScheduled = d.Generation, n, n
			d.Status.NumberAvailable, d.Status.NumberReady = n, n
		}},
		{&appsv1.ReplicaSet{}, func(o client.Object) {
			r := o.(*appsv1.ReplicaSet)
			n := ptr.Deref(r.Spec.Replicas, 1)
			r.Status = appsv1.ReplicaSetStatus{ObservedGeneration: r.Generation, Replicas: n, FullyLabeledReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
		}},
		{&batchv1.Job{}, func(o client.Object) {
			j := o.(*batchv1.Job)
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
		}},
		{&corev1.Pod{}, func(o client.Object) {
			p := o.(*corev1.Pod)
			p.Status.Phase = []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed}[p.Generation%4]
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			if p.Status.Phase == corev1.PodPending {
				// Made a while ago, or just now (a random time in the
				// future), and left unscheduled.
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
			}
		}},
		{&corev1.Service{}, func(o client.Object) {
			s := o.(*corev1.Service)
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
		}},
		{&corev1.PersistentVolumeClaim{}, func(o client.Object) {
			o.(*corev1.PersistentVolumeClaim).Status.Phase = corev1.ClaimBound
		}},
	}
	funcs := []any{
		func(m *metav1.ObjectMeta, c randfill.Continue) {
			*m = metav1.ObjectMeta{Name: "x", Generation: c.Int63n(4) + 1, CreationTimestamp: metav1.Unix(c.Int63n(1<<32), 0)}
		},
		func(tm *metav1.Time, c randfill.Continue) { *tm = metav1.Unix(c.Int63n(1<<32), 0) },
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewQuantity(c.Int63n(1000), resource.DecimalSI)
		},
		func(v *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*v = intstr.FromInt32(c.Int31n(10))
			} else {
				*v = intstr.FromString(fmt.Sprintf("%d%%", c.Intn(100)))
			}
		},
		// Small counts, so that the random ones meet the spec's now and
		// then; the generation too.
		func(n *int32, c randfill.Continue) { *n = c.Int31n(4) },
		func(n *int64, c randfill.Continue) { *n = c.Int63n(4) },
	}
	for _, k := range kinds {
		t.Run(reflect.TypeOf(k.obj).Elem().Name(), func(t *testing.T) {
			for seed := range int64(200) {
				obj := k.obj.DeepCopyObject().(client.Object)
				randfill.NewWithSeed(seed).NilChance(0.3).NumElements(0, 2).MaxDepth(6).Funcs(funcs...).Fill(obj)
				if seed%2 == 0 {
					k.settle(obj)
				}
				form, err := kstatusForm(obj)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				want, wantErr := status.Compute(wholeForm(t, obj))
				got, gotErr := status.Compute(form)
				if (wantErr != nil) != (gotErr != nil) {
					t.Fatalf("seed %d: kstatus error %v from the whole object, %v from the form", seed, wantErr, gotErr)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("seed %d: kstatus of the whole object (-) and of the form (+):\n%s", seed, diff)
				}
			}
		})
	}
}

// TestDeploymentChildReadiness keeps a Deployment of two replicas
// as the child of a Widget on a real API server, which gives it a progress
// deadline, and writes the status a deployment controller would as the
// roll-out goes: the parent's DeploymentReady follows kstatus, with its
// message. Replicas all available is not enough while Progressing does not
// say the new ReplicaSet is available, nor while an old pod terminates;
// Ready once it does; a roll-out past its deadline is named with the
// ReplicaSet's message.
func TestDeploymentChildReadiness(t *testing.T) {
	step := NewStep("web", webApp, webKinds())
	e := start(t, reconciler(step))
	e.create("judged", 0, 2)
	notReady := func(msg string) {
		t.Helper()
		e.waitCondition("judged", "DeploymentReady", ReasonNotReady, "1 of 1 Deployment not ready: web: "+msg)
	}

	// Made, not yet seen by a deployment controller.
	notReady("Replicas: 0/2")
	d := &appsv1.Deployment{}
	if err := e.c.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	if got := ptr.Deref(d.Spec.ProgressDeadlineSeconds, 0); got != 600 {
		t.Fatalf("progressDeadlineSeconds = %d on the API server, want its default 600", got)
	}

	progressing := func(reason string) appsv1.DeploymentCondition {
		return appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: reason,
			Message: `ReplicaSet "web-1" is progressing.`}
	}
	available := appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}
	// Every replica updated and available, the roll-out not declared
	// complete yet.
	e.setDeploymentStatus("web", func(d *appsv1.Deployment) appsv1.DeploymentStatus {
		return appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{available, progressing("ReplicaSetUpdated")}}
	})
	notReady("ReplicaSet not Available")

	// Complete, but for a pod of the old ReplicaSet still terminating.
	e.setDeploymentStatus("web", func(d *appsv1.Deployment) appsv1.DeploymentStatus {
		return appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 3, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{available, progressing("NewReplicaSetAvailable")}}
	})
	notReady("Pending termination: 1")

	e.markAvailable("web")
	e.waitConditions("judged", map[string]cond{
		"DeploymentReady":    {metav1.ConditionTrue, ReasonReady},
		conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded},
	})

	// A new spec whose pods never come.
	e.setSpec("judged", 0, 3)
	notReady("Deployment generation is 2, but latest observed generation is 1")
	e.setDeploymentStatus("web", func(d *appsv1.Deployment) appsv1.DeploymentStatus {
		return appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 3, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{available, {Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
				Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "web-2" has timed out progressing.`}}}
	})
	notReady(`Progress deadline exceeded: ReplicaSet "web-2" has timed out progressing.`)
	e.waitCondition("judged", conditions.TypeReady, ReasonNotReady,
		`1 of 1 Deployment not ready: web: Progress deadline exceeded: ReplicaSet "web-2" has timed out progressing.`)
}
