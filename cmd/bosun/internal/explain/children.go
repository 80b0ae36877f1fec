package explain

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/conditions"
)

const (
	// listConcurrency bounds the lists of children running at once.
	listConcurrency = 6
	// unlabelledLimit bounds the list of a kind that a condition names,
	// made when no child of the kind carries the owner label: children
	// made by a step of the operator's own rather than package children.
	unlabelledLimit = 500
	// podLimit bounds the pods listed for a workload.
	podLimit = 200
)

// The kinds whose readiness the explanation judges in its own terms.
var (
	deploymentKind  = schema.GroupKind{Group: appsv1.GroupName, Kind: "Deployment"}
	statefulSetKind = schema.GroupKind{Group: appsv1.GroupName, Kind: "StatefulSet"}
	daemonSetKind   = schema.GroupKind{Group: appsv1.GroupName, Kind: "DaemonSet"}
	jobKind         = schema.GroupKind{Group: batchv1.GroupName, Kind: "Job"}
	podKind         = schema.GroupKind{Kind: "Pod"}
	serviceKind     = schema.GroupKind{Kind: "Service"}
	pvcKind         = schema.GroupKind{Kind: "PersistentVolumeClaim"}
)

// workloadKinds are looked for among the children of every object.
var workloadKinds = []schema.GroupKind{deploymentKind, statefulSetKind, daemonSetKind, jobKind, podKind, serviceKind, pvcKind}

// podOwners are the kinds whose pods the explanation sums up.
var podOwners = sets.New(deploymentKind, statefulSetKind, daemonSetKind, jobKind)

// childResource is a resource that may hold children.
type childResource struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	// named tells that a condition of the parent names its kind.
	named bool
}

// children finds the children of parent and judges them.
func (g *gatherer) children(ctx context.Context, parent *unstructured.Unstructured) Children {
	resources := g.childResources(parent)
	var (
		mu    sync.Mutex
		found []unstructured.Unstructured
		errs  []string
		wg    sync.WaitGroup
		slots = make(chan struct{}, listConcurrency)
	)
	for _, res := range resources {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			items, err := g.listChildren(ctx, parent, res)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Sprintf("cannot list %s to find the children: %v", res.gvr.GroupResource(), err))
				return
			}
			found = append(found, items...)
		})
	}
	wg.Wait()
	slices.Sort(errs)
	for _, e := range errs {
		g.note("%s", e)
	}
	slices.SortFunc(found, func(a, b unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(a.GetKind(), b.GetKind()), cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	found = slices.CompactFunc(found, func(a, b unstructured.Unstructured) bool { return a.GetUID() == b.GetUID() })

	out := Children{Found: len(found)}
	for i := range found {
		u := &found[i]
		ready, status := judge(u)
		if ready {
			continue
		}
		child := Child{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), Status: status}
		if podOwners.Has(u.GroupVersionKind().GroupKind()) {
			child.Pods = g.podsOf(ctx, u)
		}
		out.NotReady = append(out.NotReady, child)
	}
	return out
}

// childResources returns the resources to look for children of parent
// in: the built-in workload kinds, and every kind that a condition
// "<Kind>Ready" of the parent names, as the children step calls its
// conditions, in whatever group the API server serves it.
func (g *gatherer) childResources(parent *unstructured.Unstructured) []childResource {
	lists, err := g.discovery.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		g.note("cannot list the kinds the API server serves, to find the children: %v", err)
		return nil
	}
	named := sets.New[string]()
	for _, c := range conditionsOf(parent) {
		if k, ok := strings.CutSuffix(c.Type, conditions.TypeReady); ok && k != "" {
			named.Insert(k)
		}
	}
	workloads := sets.New(workloadKinds...)
	parentNamespaced := parent.GetNamespace() != ""
	var out []childResource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") {
				continue
			}
			isNamed := named.Has(r.Kind)
			if !isNamed && !workloads.Has(schema.GroupKind{Group: gv.Group, Kind: r.Kind}) {
				continue
			}
			// A namespaced owner cannot own a cluster-scoped object.
			if parentNamespaced && !r.Namespaced {
				continue
			}
			out = append(out, childResource{gvr: gv.WithResource(r.Name), namespaced: r.Namespaced, named: isNamed})
		}
	}
	return out
}

// listChildren lists the objects of res controlled by parent: those
// labelled with the parent's UID (children.LabelOwner), and when there
// are none and a condition names the kind, the objects of the parent's
// namespace, for children that a step of the operator's own made.
func (g *gatherer) listChildren(ctx context.Context, parent *unstructured.Unstructured, res childResource) ([]unstructured.Unstructured, error) {
	var ri dynamic.ResourceInterface = g.dyn.Resource(res.gvr)
	if res.namespaced && parent.GetNamespace() != "" {
		ri = g.dyn.Resource(res.gvr).Namespace(parent.GetNamespace())
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: children.LabelOwner + "=" + string(parent.GetUID())})
	if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := controlledBy(list.Items, parent)
	if len(out) > 0 || !res.named {
		return out, nil
	}
	if list, err = ri.List(ctx, metav1.ListOptions{Limit: unlabelledLimit}); err != nil {
		return nil, err
	}
	return controlledBy(list.Items, parent), nil
}

// controlledBy returns the items whose controller is parent.
func controlledBy(items []unstructured.Unstructured, parent *unstructured.Unstructured) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for _, u := range items {
		for _, ref := range u.GetOwnerReferences() {
			if ptr.Deref(ref.Controller, false) && ref.UID == parent.GetUID() {
				out = append(out, u)
				break
			}
		}
	}
	return out
}

// podsOf sums up the pods that the workload w selects.
func (g *gatherer) podsOf(ctx context.Context, w *unstructured.Unstructured) string {
	raw, ok, _ := unstructured.NestedMap(w.Object, "spec", "selector")
	if !ok {
		return ""
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
		return ""
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil || sel.Empty() {
		return ""
	}
	list, err := g.dyn.Resource(corev1.SchemeGroupVersion.WithResource("pods")).Namespace(w.GetNamespace()).
		List(ctx, metav1.ListOptions{LabelSelector: sel.String(), Limit: podLimit})
	if err != nil {
		return "cannot list its pods: " + err.Error()
	}
	pods := make([]corev1.Pod, 0, len(list.Items))
	for _, item := range list.Items {
		var p corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &p); err == nil {
			pods = append(pods, p)
		}
	}
	return podSummary(pods)
}

// judge tells whether child is ready, as package children judges it
// (children.DefaultReadiness, so explain and the children step never
// disagree), and describes its state: for the kinds it knows, what their
// status says (replicas, pods, phase), whether ready or not; for others,
// what makes them not ready.
func judge(child *unstructured.Unstructured) (ready bool, status string) {
	gvk := child.GroupVersionKind()
	var typed client.Object
	switch gvk.GroupKind() {
	case deploymentKind:
		typed = &appsv1.Deployment{}
	case statefulSetKind:
		typed = &appsv1.StatefulSet{}
	case daemonSetKind:
		typed = &appsv1.DaemonSet{}
	case jobKind:
		typed = &batchv1.Job{}
	case podKind:
		typed = &corev1.Pod{}
	case serviceKind:
		typed = &corev1.Service{}
	case pvcKind:
		typed = &corev1.PersistentVolumeClaim{}
	default:
		ready, why := children.DefaultReadiness(child)
		if ready {
			return true, ""
		}
		if !clientgoscheme.Scheme.Recognizes(gvk) {
			status = customStatus(child)
		}
		if status == "" {
			status = why
		}
		return false, status
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(child.Object, typed); err != nil {
		return false, "cannot read its status: " + err.Error()
	}
	ready, why := children.DefaultReadiness(typed)
	switch o := typed.(type) {
	case *appsv1.Deployment:
		status = deploymentStatus(o)
	case *appsv1.StatefulSet:
		status = statefulSetStatus(o)
	case *appsv1.DaemonSet:
		status = daemonSetStatus(o)
	case *batchv1.Job:
		status = jobStatus(o)
	case *corev1.Pod:
		status = podStatus(o)
	default:
		status = why
	}
	return ready, status
}

// unseen says that a workload controller has not seen the latest spec.
func unseen(controller string, generation int64) string {
	return fmt.Sprintf("generation %d not yet seen by the %s controller", generation, controller)
}

func deploymentStatus(d *appsv1.Deployment) string {
	want, st := ptr.Deref(d.Spec.Replicas, 1), d.Status
	parts := []string{fmt.Sprintf("%d/%d replicas ready", st.ReadyReplicas, want)}
	if st.UpdatedReplicas < want {
		parts = append(parts, fmt.Sprintf("%d/%d updated", st.UpdatedReplicas, want))
	}
	if st.AvailableReplicas < want && st.AvailableReplicas != st.ReadyReplicas {
		parts = append(parts, fmt.Sprintf("%d/%d available", st.AvailableReplicas, want))
	}
	if st.ObservedGeneration < d.Generation {
		parts = append(parts, unseen("deployment", d.Generation))
	}
	for _, c := range st.Conditions {
		if (c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse) ||
			(c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue) {
			parts = append(parts, conditionText(string(c.Type), string(c.Status), c.Reason, c.Message))
		}
	}
	return strings.Join(parts, "; ")
}

func statefulSetStatus(s *appsv1.StatefulSet) string {
	want, st := ptr.Deref(s.Spec.Replicas, 1), s.Status
	parts := []string{fmt.Sprintf("%d/%d replicas ready", st.ReadyReplicas, want)}
	if st.ObservedGeneration < s.Generation {
		parts = append(parts, unseen("statefulset", s.Generation))
	}
	if st.UpdateRevision != "" && st.CurrentRevision != st.UpdateRevision {
		parts = append(parts, fmt.Sprintf("rolling update under way, %d/%d updated", st.UpdatedReplicas, want))
	}
	return strings.Join(parts, "; ")
}

func daemonSetStatus(d *appsv1.DaemonSet) string {
	want, st := d.Status.DesiredNumberScheduled, d.Status
	parts := []string{fmt.Sprintf("%d/%d pods ready", st.NumberReady, want)}
	if st.UpdatedNumberScheduled < want {
		parts = append(parts, fmt.Sprintf("%d/%d updated", st.UpdatedNumberScheduled, want))
	}
	if st.ObservedGeneration < d.Generation {
		parts = append(parts, unseen("daemonset", d.Generation))
	}
	return strings.Join(parts, "; ")
}

func jobStatus(j *batchv1.Job) string {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return ""
		case batchv1.JobFailed:
			return conditionText("failed", "", c.Reason, c.Message)
		}
	}
	if ptr.Deref(j.Spec.Suspend, false) {
		return "suspended"
	}
	st := j.Status
	return fmt.Sprintf("not complete: %d active, %d succeeded, %d failed", st.Active, st.Succeeded, st.Failed)
}

func podStatus(p *corev1.Pod) string {
	if podReady(p) {
		return ""
	}
	status := cmp.Or(string(p.Status.Phase), "no phase")
	if p.Status.Phase == corev1.PodRunning {
		status = "Running, not ready"
	}
	if why := podProblem(p); why != "" {
		status += ": " + why
	}
	return status
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podProblem says what keeps a pod from being ready, as far as its status
// tells; empty when it does not.
func podProblem(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "being deleted"
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return conditionText("not scheduled", "", c.Reason, c.Message)
		}
	}
	if p.Spec.NodeName == "" && p.Status.Phase == corev1.PodPending {
		return "not scheduled yet"
	}
	for _, cs := range slices.Concat(p.Status.InitContainerStatuses, p.Status.ContainerStatuses) {
		switch s := cs.State; {
		case s.Waiting != nil && s.Waiting.Reason != "":
			return conditionText("container "+cs.Name+" waiting", "", s.Waiting.Reason, s.Waiting.Message)
		case s.Terminated != nil && s.Terminated.ExitCode != 0:
			return conditionText(fmt.Sprintf("container %s exited with code %d", cs.Name, s.Terminated.ExitCode), "", s.Terminated.Reason, s.Terminated.Message)
		case s.Running != nil && !cs.Ready:
			return "container " + cs.Name + " not ready"
		}
	}
	if p.Status.Reason != "" {
		return conditionText("", "", p.Status.Reason, p.Status.Message)
	}
	return ""
}

// podStates are the states podSummary counts, in the order it names them.
var podStates = []string{"ready", "Running, not ready", string(corev1.PodPending), string(corev1.PodFailed), string(corev1.PodSucceeded), string(corev1.PodUnknown), "terminating"}

// podSummary counts pods by state and names the first problem among them:
// "pods: 1 ready, 2 Pending; web-6f9c-x2x: not scheduled yet".
func podSummary(pods []corev1.Pod) string {
	if len(pods) == 0 {
		return "no pods"
	}
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return cmp.Compare(a.Name, b.Name) })
	counts := map[string]int{}
	problem := ""
	for i := range pods {
		p := &pods[i]
		state := cmp.Or(string(p.Status.Phase), string(corev1.PodUnknown))
		switch {
		case p.DeletionTimestamp != nil:
			state = "terminating"
		case podReady(p):
			state = "ready"
		case p.Status.Phase == corev1.PodRunning:
			state = "Running, not ready"
		}
		counts[state]++
		if state != "ready" && problem == "" {
			if why := podProblem(p); why != "" {
				problem = p.Name + ": " + why
			}
		}
	}
	var parts []string
	for _, s := range podStates {
		if n := counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	out := "pods: " + strings.Join(parts, ", ")
	if problem != "" {
		out += "; " + problem
	}
	return out
}

// customStatus says what keeps a custom resource from being ready by its
// Ready condition (children.DefaultReadiness gives the verdict): nothing
// when Ready is True for the current generation, or when the status has no
// conditions at all.
func customStatus(u *unstructured.Unstructured) string {
	conds := conditionsOf(u)
	if len(conds) == 0 {
		return ""
	}
	ready := conditions.Find(conds, conditions.TypeReady)
	if ready == nil {
		return "no Ready condition yet"
	}
	if ready.Status != metav1.ConditionTrue {
		return conditionText(ready.Type, string(ready.Status), ready.Reason, ready.Message)
	}
	observed := ready.ObservedGeneration
	if observed == 0 {
		observed, _, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	}
	if observed != 0 && observed < u.GetGeneration() {
		return fmt.Sprintf("Ready True for generation %d, not yet for generation %d", observed, u.GetGeneration())
	}
	return ""
}

// conditionText writes a condition in one line: "Ready False (Reason):
// message", each part left out when empty, the reason alone without its
// brackets.
func conditionText(typ, status, reason, message string) string {
	head := strings.TrimSpace(typ + " " + status)
	switch {
	case head == "":
		head = reason
	case reason != "":
		head += " (" + reason + ")"
	}
	switch message = oneLine(message); {
	case message == "":
		return head
	case head == "":
		return message
	}
	return head + ": " + message
}

// oneLine puts a message on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
