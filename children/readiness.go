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
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Present is the readiness of kinds that are ready as soon as they exist,
// such as ConfigMaps and Secrets: set it as Kind.Readiness. It makes a
// custom resource ready as soon as it exists, whatever its conditions say.
func Present(client.Object) (ready bool, message string) { return true, "" }

// DefaultReadiness is the readiness of a Kind without one; a Readiness of
// your own may call it and add its checks. A child is ready when cli-utils'
// kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status) computes Current for
// it; when kstatus computes anything else, the message is kstatus's, with
// the condition behind it where kstatus leaves that out (the message of a
// Deployment's Progressing condition past its deadline, of a failed Job's
// Failed condition; "Stalled is True (Reason): message" for a custom
// resource's own Stalled or Reconciling condition). kstatus has rules for
// Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs, Pods,
// PersistentVolumeClaims, Services, PodDisruptionBudgets,
// CustomResourceDefinitions, CronJobs, ConfigMaps and Secrets. Before them,
// it finds any object not ready whose status.observedGeneration is set and
// other than its metadata.generation, or whose Reconciling or Stalled
// condition is True; a kind without a rule of its own, also when its Ready
// condition is there and not True. A child being deleted is not ready,
// whatever its kind ("being deleted").
//
// DefaultReadiness departs from kstatus where kstatus would take for ready
// a child its parent still waits for, and for kinds whose conditions do not
// follow the convention kstatus's generic rules read:
//
//   - a Job is ready once it completed: kstatus takes a Job that has started
//     for Current. A failed Job is not ready (kstatus: Failed);
//   - a Pod whose phase is Failed is not ready: kstatus takes it for Current,
//     as a Pod that has run to its end (one that Succeeded is ready);
//   - a Service of type LoadBalancer is ready once it has an ingress
//     address: kstatus only waits for its cluster IP;
//   - a StatefulSet of the OnDelete update strategy is ready once its
//     replicas are ready: kstatus takes it for Current whatever its pods;
//   - a custom resource (a kind Kubernetes does not serve itself) whose
//     status has conditions must have a Ready condition, True, whose
//     observedGeneration, or else status.observedGeneration (when either is
//     set), is not behind its metadata.generation: kstatus takes one without
//     a Ready condition for Current, and reads no condition's
//     observedGeneration. A False or Unknown Ready, a missing one, or one for
//     an older generation makes it not ready, and the message says so with
//     the condition's reason and message. A custom resource with no status
//     conditions is ready when it exists, unless kstatus says otherwise (its
//     status.observedGeneration is behind, it is being deleted);
//   - a built-in kind kstatus has no rule of its own for
//     (HorizontalPodAutoscaler, Ingress, Namespace...) is ready when it
//     exists, whatever its status: its conditions, when it has any, are not
//     the Ready, Reconciling and Stalled of the convention.
//
// Of a typed object, only the fields kstatus reads are converted to its
// unstructured form: some ten microseconds for a Deployment, a sixth of a
// whole conversion (BenchmarkDefaultReadiness); ConfigMaps and Secrets are
// not converted.
func DefaultReadiness(obj client.Object) (bool, string) {
	if !obj.GetDeletionTimestamp().IsZero() {
		return false, "being deleted"
	}
	u, err := kstatusForm(obj)
	if err != nil {
		return false, "cannot read its status: " + err.Error()
	}
	if u == nil {
		return true, ""
	}
	res, err := status.Compute(u)
	if err != nil {
		return false, "cannot compute its status: " + err.Error()
	}
	if status.GetLegacyConditionsFn(u) == nil {
		// A custom resource: its Ready condition first, for its message.
		if ready, msg := readyCondition(u.Object); !ready {
			return false, msg
		}
	}
	if res.Status != status.CurrentStatus {
		return false, notCurrent(res, u)
	}
	return departure(res, u)
}

// The kinds DefaultReadiness reads a part of, or departs from kstatus for.
var (
	deploymentKind  = appsv1.SchemeGroupVersion.WithKind("Deployment")
	statefulSetKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	daemonSetKind   = appsv1.SchemeGroupVersion.WithKind("DaemonSet")
	replicaSetKind  = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	jobKind         = batchv1.SchemeGroupVersion.WithKind("Job")
	podKind         = corev1.SchemeGroupVersion.WithKind("Pod")
	serviceKind     = corev1.SchemeGroupVersion.WithKind("Service")
	pvcKind         = corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim")
)

// kstatusForm returns obj in the unstructured form kstatus judges, or nil
// when obj is ready as it exists: a built-in kind without a kstatus rule
// (see DefaultReadiness), or one whose rule is that it is always ready.
// An unstructured object is its own form. A typed object of a kind listed
// above is reduced to the fields kstatus reads of it (see formOf); any other
// is converted whole, with its kind when its TypeMeta leaves it out and
// client-go's scheme knows its type.
func kstatusForm(obj client.Object) (*unstructured.Unstructured, error) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		if status.GetLegacyConditionsFn(o) == nil && builtIn(o) {
			return nil, nil
		}
		return o, nil
	case *corev1.ConfigMap, *corev1.Secret, *batchv1.CronJob:
		// kstatus's rule: always ready, and they have no
		// status.observedGeneration or conditions for its generic ones.
		return nil, nil
	case *appsv1.Deployment:
		spec := map[string]any{}
		setInt32(spec, "replicas", o.Spec.Replicas)
		setInt32(spec, "progressDeadlineSeconds", o.Spec.ProgressDeadlineSeconds)
		return formOf(deploymentKind, o, spec, &o.Status)
	case *appsv1.StatefulSet:
		return formOf(statefulSetKind, o, statefulSetSpec(o), &o.Status)
	case *appsv1.DaemonSet:
		return formOf(daemonSetKind, o, map[string]any{}, &o.Status)
	case *appsv1.ReplicaSet:
		spec := map[string]any{}
		setInt32(spec, "replicas", o.Spec.Replicas)
		return formOf(replicaSetKind, o, spec, &o.Status)
	case *batchv1.Job:
		spec := map[string]any{}
		setInt32(spec, "parallelism", o.Spec.Parallelism)
		setInt32(spec, "completions", o.Spec.Completions)
		return formOf(jobKind, o, spec, &o.Status)
	case *corev1.Pod:
		u, err := formOf(podKind, o, map[string]any{}, &o.Status)
		if u != nil {
			// Its rule tells an unschedulable Pod from one just made.
			u.SetCreationTimestamp(o.CreationTimestamp)
		}
		return u, err
	case *corev1.Service:
		spec := map[string]any{}
		if o.Spec.Type != "" {
			spec["type"] = string(o.Spec.Type)
		}
		if o.Spec.ClusterIP != "" {
			spec["clusterIP"] = o.Spec.ClusterIP
		}
		return formOf(serviceKind, o, spec, &o.Status)
	case *corev1.PersistentVolumeClaim:
		return formOf(pvcKind, o, map[string]any{}, &o.Status)
	}
	return convertedForm(obj)
}

// convertedForm returns obj converted whole, with its kind when its TypeMeta
// leaves it out and client-go's scheme knows its type, or nil for a
// built-in kind without a kstatus rule (see kstatusForm).
func convertedForm(obj client.Object) (*unstructured.Unstructured, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	custom := !builtIn(obj)
	if !custom {
		if gvk.Kind == "" {
			if gvks, _, err := clientgoscheme.Scheme.ObjectKinds(obj); err == nil {
				gvk = gvks[0]
			}
		}
		probe := &unstructured.Unstructured{}
		probe.SetGroupVersionKind(gvk)
		if status.GetLegacyConditionsFn(probe) == nil {
			return nil, nil
		}
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("converting %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: content}
	if !custom {
		u.SetGroupVersionKind(gvk)
	}
	return u, nil
}

// statefulSetSpec returns the fields of o's spec that kstatus reads: its
// replicas and its update strategy.
func statefulSetSpec(o *appsv1.StatefulSet) map[string]any {
	spec := map[string]any{}
	setInt32(spec, "replicas", o.Spec.Replicas)
	strategy := map[string]any{}
	if o.Spec.UpdateStrategy.Type != "" {
		strategy["type"] = string(o.Spec.UpdateStrategy.Type)
	}
	if ru := o.Spec.UpdateStrategy.RollingUpdate; ru != nil {
		rolling := map[string]any{}
		setInt32(rolling, "partition", ru.Partition)
		strategy["rollingUpdate"] = rolling
	}
	spec["updateStrategy"] = strategy
	return spec
}

// formOf returns the form kstatus judges of obj, of kind gvk: its
// metadata.generation, the given fields of its spec and its whole status.
// kstatus reads nothing else of the kinds kstatusForm gives to formOf
// (TestReadinessGivesKstatusWhatItReads checks it on random objects), and
// their pod templates, managedFields, labels and annotations would make
// most of the cost of a whole conversion.
func formOf(gvk schema.GroupVersionKind, obj client.Object, spec map[string]any, st any) (*unstructured.Unstructured, error) {
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(st)
	if err != nil {
		return nil, fmt.Errorf("converting the status of %T: %w", obj, err)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec, "status": content}}
	u.SetGroupVersionKind(gvk)
	if g := obj.GetGeneration(); g != 0 {
		u.SetGeneration(g)
	}
	return u, nil
}

// setInt32 sets m[key] to *p, as an unstructured integer, when p is set.
func setInt32(m map[string]any, key string, p *int32) {
	if p != nil {
		m[key] = int64(*p)
	}
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

// notCurrent is the message of a child kstatus does not find Current: its
// message, then the message of the condition it gives as the cause when
// that says more. A Stalled or Reconciling condition of the object's own
// is told as bosun tells a Ready one; a failed Job adds the reason and
// message of its Failed condition.
func notCurrent(res *status.Result, u *unstructured.Unstructured) string {
	msg := res.Message
	if len(res.Conditions) > 0 {
		c := res.Conditions[0]
		if own := conditionOf(u.Object, string(c.Type)); own != nil && own["status"] == string(c.Status) && own["reason"] == c.Reason {
			return conditionText(string(c.Type), string(c.Status), c.Reason, c.Message)
		}
		if c.Message != "" && c.Message != msg {
			msg += ": " + c.Message
		}
	}
	if u.GroupVersionKind().GroupKind() == jobKind.GroupKind() && res.Status == status.FailedStatus {
		if failed := conditionOf(u.Object, string(batchv1.JobFailed)); failed != nil {
			msg = withCause(msg, failed)
		}
	}
	return strings.TrimSpace(msg)
}

// departure is the readiness of a child kstatus finds Current, where
// DefaultReadiness departs from it (see there).
func departure(res *status.Result, u *unstructured.Unstructured) (bool, string) {
	switch u.GroupVersionKind().GroupKind() {
	case jobKind.GroupKind():
		if c := conditionOf(u.Object, string(batchv1.JobComplete)); c == nil || c["status"] != string(corev1.ConditionTrue) {
			return false, res.Message
		}
	case podKind.GroupKind():
		if phase, _, _ := unstructured.NestedString(u.Object, "status", "phase"); phase == string(corev1.PodFailed) {
			st, _, _ := unstructured.NestedMap(u.Object, "status")
			return false, withCause(res.Message, st)
		}
	case serviceKind.GroupKind():
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "type")
		ingress, _, _ := unstructured.NestedSlice(u.Object, "status", "loadBalancer", "ingress")
		if kind == string(corev1.ServiceTypeLoadBalancer) && len(ingress) == 0 {
			return false, "no load balancer address yet"
		}
	case statefulSetKind.GroupKind():
		strategy, _, _ := unstructured.NestedString(u.Object, "spec", "updateStrategy", "type")
		if strategy != string(appsv1.OnDeleteStatefulSetStrategyType) {
			break
		}
		want, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		if !found {
			want = 1
		}
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		if ready < want {
			return false, fmt.Sprintf("%d of %d replicas ready", ready, want)
		}
	}
	return true, ""
}

// withCause adds to msg the reason and message of m, a condition or a
// status, when it has them: "msg (Reason): message".
func withCause(msg string, m map[string]any) string {
	if reason, _ := m["reason"].(string); reason != "" {
		msg += " (" + reason + ")"
	}
	if detail, _ := m["message"].(string); detail != "" {
		msg += ": " + detail
	}
	return msg
}

// conditionOf returns the condition of type t in content's
// status.conditions, or nil.
func conditionOf(content map[string]any, t string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(content, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == t {
			return m
		}
	}
	return nil
}

// conditionText tells a condition in one line: "Ready is False (Reason):
// message".
func conditionText(t, st, reason, message string) string {
	msg := t + " is " + st
	if st == "" {
		msg = t + " has no status"
	}
	return withCause(msg, map[string]any{"reason": reason, "message": message})
}

// readyCondition judges a custom resource by the Ready condition of its
// status (see DefaultReadiness): ready when it is True for the object's
// generation, or when the status has no conditions at all.
func readyCondition(content map[string]any) (bool, string) {
	conds, _, _ := unstructured.NestedSlice(content, "status", "conditions")
	if len(conds) == 0 {
		return true, ""
	}
	ready := conditionOf(content, "Ready")
	if ready == nil {
		return false, "no Ready condition yet"
	}
	st, _ := ready["status"].(string)
	if st != string(metav1.ConditionTrue) {
		reason, _ := ready["reason"].(string)
		message, _ := ready["message"].(string)
		return false, conditionText("Ready", st, reason, message)
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
