package memcached

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/conditions"
	cachev1 "github.com/bosunkit/bosun/examples/memcached/api/v1alpha1"
	"github.com/bosunkit/bosun/watch"
)

// What the controller uses: Memcacheds and their status (the engine loads,
// claims and saves them); update on their finalizers, which the API server
// asks of whoever sets blockOwnerDeletion on an owner reference to a
// Memcached, as the children step does; the Deployment and the Service,
// applied with server-side apply and pruned; Pods, only read, for the
// status; and what the engine needs (see package bosun): namespaces for
// the reconcile policy, and events.
//
// +kubebuilder:rbac:groups=cache.example.bosun.dev,resources=memcacheds,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=cache.example.bosun.dev,resources=memcacheds/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=cache.example.bosun.dev,resources=memcacheds/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

const (
	// ControllerName is the name of the Memcached controller in logs,
	// metrics and events, of its children set (the children.LabelSet label)
	// and the field manager of its applies.
	ControllerName = "memcached"

	// LabelName is the label, on the Deployment, the Service and the pods,
	// that names the application: always "memcached".
	LabelName = "app.kubernetes.io/name"

	// LabelMemcached is the label, on the Deployment, the Service and the
	// pods, that holds the name of their Memcached. The Deployment selects
	// its pods by it and LabelName, and so does the Service; a change of a
	// pod that carries it reconciles that Memcached.
	LabelMemcached = "cache.example.bosun.dev/memcached"

	// ContainerName is the name of the memcached container.
	ContainerName = "memcached"
	// PortName is the name of the container's port, which the Service
	// targets.
	PortName = "memcached"
)

// Kinds are the kinds of the children of a Memcached: a Deployment, judged
// ready by DeploymentReadiness, and a Service. The children step reports
// them in the conditions DeploymentReady and ServiceReady.
func Kinds() []children.Kind {
	return []children.Kind{
		{Object: &appsv1.Deployment{}, Readiness: DeploymentReadiness},
		children.Of(&corev1.Service{}),
	}
}

// Labels returns the labels of the children and pods of m, which their
// selectors match: LabelName and LabelMemcached.
func Labels(m *cachev1.Memcached) map[string]string {
	return map[string]string{LabelName: "memcached", LabelMemcached: m.Name}
}

// Desired returns the children of the Memcached of req: a Deployment of
// spec.size memcached pods and a Service in front of them, both named
// after the Memcached. An empty image or a zero port (a Memcached the API
// server did not default) stand for cachev1.DefaultImage and
// cachev1.DefaultPort.
//
// The children step applies them only when they differ from what is live,
// so a Deployment edited behind the operator's back (its replicas, its
// image) is put back as Desired has it.
func Desired(_ context.Context, req *bosun.Pass[*cachev1.Memcached]) ([]client.Object, error) {
	m := req.Object
	image := cmp.Or(m.Spec.Image, cachev1.DefaultImage)
	port := cmp.Or(m.Spec.Port, cachev1.DefaultPort)
	lbls := Labels(m)
	deployment := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Labels: lbls},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(m.Spec.Size),
			Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:            ContainerName,
						Image:           image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Command:         []string{"memcached", fmt.Sprintf("--port=%d", port), "--memory-limit=64", "-o", "modern", "-v"},
						Ports:           []corev1.ContainerPort{{Name: PortName, ContainerPort: port}},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
							TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString(PortName)},
						}},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
						},
						SecurityContext: &corev1.SecurityContext{
							RunAsUser:                ptr.To[int64](1001),
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
	service := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Labels: lbls},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: lbls,
			Ports:    []corev1.ServicePort{{Name: PortName, Port: port, TargetPort: intstr.FromString(PortName)}},
		},
	}
	return []client.Object{deployment, service}, nil
}

// DeploymentReadiness is the readiness of a Memcached's Deployment, which
// the children step reports in the condition DeploymentReady: ready when
// the deployment controller has seen its latest spec, every pod runs the
// latest template, there are no more pods than the spec's replicas (which
// is the Memcached's size) and as many of them are ready. Otherwise the
// message says what it waits for.
func DeploymentReadiness(obj client.Object) (ready bool, message string) {
	d, ok := obj.(*appsv1.Deployment)
	if !ok {
		return false, fmt.Sprintf("%T is not a Deployment", obj)
	}
	want, st := ptr.Deref(d.Spec.Replicas, 1), d.Status
	switch {
	case st.ObservedGeneration < d.Generation:
		return false, "waiting for the deployment controller to see the latest spec"
	case st.UpdatedReplicas < want:
		return false, fmt.Sprintf("rolling out: %d of %d pods updated", st.UpdatedReplicas, want)
	case st.Replicas > want:
		return false, fmt.Sprintf("waiting for %d of %d pods to go", st.Replicas-want, st.Replicas)
	case st.ReadyReplicas < want:
		return false, fmt.Sprintf("waiting for %d of %d pods to be ready", want-st.ReadyReplicas, want)
	}
	return true, ""
}

// reportPods is the step that writes the status: the ready replicas of the
// Deployment, the names of its pods, and the condition Available.
type reportPods struct{}

var (
	_ bosun.Step[*cachev1.Memcached]     = reportPods{}
	_ bosun.Observer[*cachev1.Memcached] = reportPods{}
	_ bosun.Setuper[*cachev1.Memcached]  = reportPods{}
)

// PolicyRules declares what the step reads beyond the engine's and the
// children step's: pods (see bosun.Reconciler.PolicyRules).
func (reportPods) PolicyRules(*runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	return []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}}}, nil
}

// SetupWithBuilder makes a pod that carries LabelMemcached reconcile the
// Memcached it names when it comes, goes, starts being deleted or changes
// the labels the Deployment selects it by: what status.pods lists. Other
// changes of a pod do not: the ready count comes from the Deployment, whose
// status changes with them, and which the children step watches.
func (reportPods) SetupWithBuilder(b *bosun.Builder[*cachev1.Memcached]) error {
	b.Watches(&corev1.Pod{}, watch.ByLabels(LabelMemcached, ""), builder.WithPredicates(podListChanged))
	return nil
}

// podListChanged passes the events of pods that may change status.pods or
// Available: creations, deletions, and updates that set the deletion
// timestamp or change LabelName, LabelMemcached or the template hash.
// (Binding a pod to a node adds a label of the node's zone, which matters
// not.)
var podListChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		if e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero() {
			return true
		}
		before, after := e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()
		for _, l := range []string{LabelName, LabelMemcached, appsv1.DefaultDeploymentUniqueLabelKey} {
			if before[l] != after[l] {
				return true
			}
		}
		return false
	},
}

// Do reports the pods, after the children step: the DeploymentReady
// condition it has just set judges the Deployment as this pass left it.
func (reportPods) Do(ctx context.Context, req *bosun.Pass[*cachev1.Memcached]) (ctrl.Result, error) {
	return ctrl.Result{}, report(ctx, req, true)
}

// Observe reports the pods too: reading changes nothing. Under the skip
// policy the children step does not run, and Available goes by what the
// cache shows.
func (reportPods) Observe(ctx context.Context, req *bosun.Pass[*cachev1.Memcached]) (ctrl.Result, error) {
	return ctrl.Result{}, report(ctx, req, false)
}

// report sets status.readyReplicas from the status of the Memcached's
// Deployment, status.pods to the names of the pods its selector matches,
// those being deleted aside, sorted, and the condition Available (see
// availability). The Deployment and the pods are read from the cache.
// Without a Deployment, there are no pods, and Available is False with
// reason Creating. applied tells that the children step ran in this pass.
func report(ctx context.Context, req *bosun.Pass[*cachev1.Memcached], applied bool) error {
	m, st := req.Object, &req.Object.Status
	var d appsv1.Deployment
	err := req.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: m.Name}, &d)
	switch {
	case apierrors.IsNotFound(err):
		st.ReadyReplicas, st.Pods = 0, nil
		setAvailable(m, metav1.ConditionFalse, cachev1.ReasonCreating, "waiting for the Deployment to show up")
		return nil
	case err != nil:
		return fmt.Errorf("reading deployment %s: %w", m.Name, err)
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return fmt.Errorf("deployment %s: selector: %w", m.Name, err)
	}
	var pods corev1.PodList
	if err := req.Client.List(ctx, &pods, client.InNamespace(m.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return fmt.Errorf("listing the pods of deployment %s: %w", m.Name, err)
	}
	var names []string
	templates := map[string]bool{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp.IsZero() {
			names = append(names, p.Name)
			templates[p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]] = true
		}
	}
	slices.Sort(names)
	st.ReadyReplicas, st.Pods = d.Status.ReadyReplicas, names
	status, reason, message := availability(m, &d, len(names), len(templates), applied)
	setAvailable(m, status, reason, message)
	return nil
}

// availability judges whether m is Available, from its Deployment d as the
// cache shows it and the pods of d that are not being deleted: their
// number, and the number of templates (pod-template-hash labels) among
// them. When applied, the children step has set DeploymentReady in this
// pass, from the Deployment as the pass left it; the cache may not show
// that one yet.
func availability(m *cachev1.Memcached, d *appsv1.Deployment, pods, templates int, applied bool) (metav1.ConditionStatus, conditions.Reason, string) {
	size := m.Spec.Size
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse {
			return metav1.ConditionFalse, cachev1.ReasonRolloutStuck, fmt.Sprintf("the rollout made no progress: %s", c.Message)
		}
	}
	if ready, msg := DeploymentReadiness(d); !ready {
		return metav1.ConditionFalse, cachev1.ReasonUpdating, msg
	}
	if c := conditions.Find(m.Status.Conditions, cachev1.ConditionDeploymentReady); applied && (c == nil || c.Status != metav1.ConditionTrue) {
		return metav1.ConditionFalse, cachev1.ReasonUpdating, "waiting for the deployment controller to see the latest spec"
	}
	switch replicas := ptr.Deref(d.Spec.Replicas, 1); {
	case replicas != size:
		return metav1.ConditionFalse, cachev1.ReasonUpdating, fmt.Sprintf("the Deployment has %d replicas, want %d", replicas, size)
	case pods != int(size):
		return metav1.ConditionFalse, cachev1.ReasonUpdating, fmt.Sprintf("waiting for the pods to show: %d of %d", pods, size)
	case templates > 1:
		return metav1.ConditionFalse, cachev1.ReasonUpdating, "waiting for the pods of an earlier template to go"
	}
	return metav1.ConditionTrue, cachev1.ReasonAvailable, fmt.Sprintf("%d of %d pods ready", d.Status.ReadyReplicas, size)
}

// setAvailable records the condition Available of m for its current
// generation.
func setAvailable(m *cachev1.Memcached, status metav1.ConditionStatus, reason conditions.Reason, message string) {
	conditions.Set(&m.Status.Conditions, metav1.Condition{
		Type:               cachev1.ConditionAvailable,
		Status:             status,
		Reason:             string(reason),
		Message:            message,
		ObservedGeneration: m.Generation,
	}, metav1.Now())
}

// NewReconciler returns the engine reconciler for Memcacheds, named
// ControllerName. Its first step keeps the children Desired returns and
// wires its own watches of them, so that a child changed or deleted behind
// the operator's back is put back; its second writes the status from the
// Deployment and its pods (which it watches). The two together own the
// condition Available, which comes first in Ready's summary, so that Ready
// tells of the pods while they come. The children are owned by the
// Memcached and go with it through the garbage collector: the reconciler
// has no finalizer. Its clients and recorder are filled in by
// SetupWithManager, or by the caller.
func NewReconciler() *bosun.Reconciler[*cachev1.Memcached] {
	steps := bosun.Sequence[*cachev1.Memcached](children.NewStep(ControllerName, Desired, Kinds()), reportPods{}).Named("children-and-pods")
	return &bosun.Reconciler[*cachev1.Memcached]{
		Name:  ControllerName,
		Steps: []bosun.Step[*cachev1.Memcached]{bosun.WithConditions[*cachev1.Memcached](steps, cachev1.ConditionAvailable).Named("available")},
	}
}

// SetupWithManager registers NewReconciler's reconciler with mgr. The
// manager's scheme must hold the types of AddToScheme.
func SetupWithManager(mgr ctrl.Manager) error {
	return setup(mgr)
}

// setup is SetupWithManager with preds on every watch: on Memcacheds, on
// their children and on pods. The tests restrict each controller to its
// own namespace this way.
func setup(mgr ctrl.Manager, preds ...predicate.Predicate) error {
	if err := bosun.ControllerManagedBy[*cachev1.Memcached](mgr).WithEventFilter(predicate.And(preds...)).Complete(NewReconciler()); err != nil {
		return fmt.Errorf("memcached: %w", err)
	}
	return nil
}

// LimitPodCache makes the manager of o cache only the pods that carry
// LabelMemcached, the ones the controller reads, rather than every pod of
// the cluster. It fits operator.Options.Manager.
func LimitPodCache(o *ctrl.Options) {
	has, err := labels.NewRequirement(LabelMemcached, selection.Exists, nil)
	if err != nil {
		panic(fmt.Sprintf("memcached: %v", err)) // a constant, valid label key
	}
	if o.Cache.ByObject == nil {
		o.Cache.ByObject = map[client.Object]cache.ByObject{}
	}
	o.Cache.ByObject[&corev1.Pod{}] = cache.ByObject{Label: labels.NewSelector().Add(*has)}
}
