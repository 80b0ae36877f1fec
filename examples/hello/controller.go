package hello

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/bosunkit/bosun/conditions"
	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
	"github.com/bosunkit/bosun/flow"
)

const (
	// ControllerName is the name of the Greeting controller in logs and
	// metrics.
	ControllerName = "greeting"

	// Finalizer keeps a deleted Greeting until its ConfigMap is removed.
	Finalizer = "hello.bosun.dev/configmap"

	// FieldOwner is the field manager the controller writes with.
	FieldOwner = "bosun-hello"
)

// ConflictDelay is how long a request waits before it is retried after a
// 409 Conflict (or an AlreadyExists caused by a lagging cache): long enough
// for the informer to deliver the newer object.
const ConflictDelay = 200 * time.Millisecond

// NotOwnedRecheck is how often a Greeting whose ConfigMap name is taken by a
// ConfigMap it does not control checks whether the name became free. Such a
// ConfigMap sends the controller no events, so it has to look again.
const NotOwnedRecheck = time.Minute

// GreetingReconciler keeps, for every Greeting, a ConfigMap that holds the
// rendered greeting, and reports the outcome in the Greeting's status.
type GreetingReconciler struct {
	// Client reads and writes Greetings and ConfigMaps, usually the
	// manager's client. Its scheme must know both kinds (see AddToScheme).
	Client client.Client
	// APIReader reads around Client's cache, usually the manager's API
	// reader; SetupWithManager fills it in when it is nil, and nil at
	// reconcile time means Client. A deleted Greeting reads its ConfigMap
	// through it when the cache does not show one, since the cache may
	// not have seen a ConfigMap made moments ago.
	APIReader client.Reader
}

// What the controller may do, from which controller-gen writes
// config/rbac/role.yaml: what GreetingReconciler.PolicyRules declares.
//
// +kubebuilder:rbac:groups=hello.bosun.dev,resources=greetings,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=hello.bosun.dev,resources=greetings/status,verbs=patch
// +kubebuilder:rbac:groups=hello.bosun.dev,resources=greetings/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;delete

// PolicyRules returns the RBAC rules the reconciler needs, declared as the
// steps of a bosun.Reconciler declare theirs (see
// bosun.Reconciler.PolicyRules): on Greetings, get, list and watch (the
// cache) and patch (the finalizer); patch on their status; update on their
// finalizers subresource, which the API server asks of whoever sets
// blockOwnerDeletion on an owner reference to a Greeting, as the
// ConfigMap's controller reference does; and on ConfigMaps get, list and
// watch (the cache and the API reader), create, update and delete. The
// reconciler runs without the engine, so it reads no Namespaces and records
// no events. scheme names both kinds.
func (r *GreetingReconciler) PolicyRules(scheme *runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	greetings, err := resourceOf(scheme, &hellov1.Greeting{})
	if err != nil {
		return nil, err
	}
	configMaps, err := resourceOf(scheme, &corev1.ConfigMap{})
	if err != nil {
		return nil, err
	}
	rule := func(gr schema.GroupResource, subresource string, verbs ...string) rbacv1.PolicyRule {
		res := gr.Resource
		if subresource != "" {
			res += "/" + subresource
		}
		return rbacv1.PolicyRule{APIGroups: []string{gr.Group}, Resources: []string{res}, Verbs: verbs}
	}
	return []rbacv1.PolicyRule{
		rule(greetings, "", "get", "list", "watch", "patch"),
		rule(greetings, "status", "patch"),
		rule(greetings, "finalizers", "update"),
		rule(configMaps, "", "get", "list", "watch", "create", "update", "delete"),
	}, nil
}

// resourceOf returns the group and resource of obj's kind, as scheme names
// it: the kind's lower-case plural (meta.UnsafeGuessKindToResource).
func resourceOf(scheme *runtime.Scheme, obj client.Object) (schema.GroupResource, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return schema.GroupResource{}, fmt.Errorf("hello: greeting reconciler: %w", err)
	}
	res, _ := meta.UnsafeGuessKindToResource(gvk)
	return res.GroupResource(), nil
}

// SetupWithManager registers the reconciler with mgr as the controller
// named ControllerName, watching Greetings and the ConfigMaps they control.
func (r *GreetingReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		return errors.New("hello: greeting reconciler: Client must be set")
	}
	for _, obj := range []client.Object{&hellov1.Greeting{}, &corev1.ConfigMap{}} {
		if _, err := r.Client.GroupVersionKindFor(obj); err != nil {
			return fmt.Errorf("hello: greeting reconciler: client scheme: %w", err)
		}
	}
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&hellov1.Greeting{}).
		Owns(&corev1.ConfigMap{}).
		Named(ControllerName).
		Complete(r)
}

// Reconcile loads the Greeting named by req and runs its Workflow, with
// every action logged through flow.LogHook.
func (r *GreetingReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	g := &hellov1.Greeting{}
	if err := r.Client.Get(ctx, req.NamespacedName, g); err != nil {
		if apierrors.IsNotFound(err) {
			return flow.NoRequeue()
		}
		return flow.RequeueIfErrorAndWrap("get greeting", err)
	}
	return flow.Final(flow.WithHooks(r.Workflow(g), flow.LogHook()).Run(ctx))
}

// Workflow returns the actions that reconcile g, a Greeting just loaded from
// the API server or the cache. The shape depends on g: a live Greeting gets
// its finalizer, greeting, ConfigMap and status; a Greeting being deleted
// loses its ConfigMap and then its finalizer. Running the workflow updates g
// in place with every write.
func (r *GreetingReconciler) Workflow(g *hellov1.Greeting) flow.Action {
	live := r.APIReader
	if live == nil {
		live = r.Client
	}
	s := &greetingRun{c: r.Client, live: live, g: g, status: *g.Status.DeepCopy()}
	if !g.DeletionTimestamp.IsZero() {
		return flow.If(controllerutil.ContainsFinalizer(g, Finalizer),
			flow.Sequence(s.deleteConfigMap(), s.removeFinalizer()))
	}
	return flow.Sequence(
		s.addFinalizer(),
		// The status patch runs even when rendering or applying stopped the
		// inner sequence, so an invalid template is reported; it writes only
		// what the inner actions changed.
		flow.OrderedJoin(
			flow.Sequence(s.render(), s.applyConfigMap(), s.markReady()),
			s.patchStatus(),
		),
	)
}

// greetingRun is the state of one reconcile of one Greeting, shared by the
// actions of its workflow.
type greetingRun struct {
	c client.Client
	// live reads around c's cache.
	live client.Reader
	// g is the Greeting as last read or written.
	g *hellov1.Greeting
	// status is the status the actions want; patchStatus writes it when it
	// differs from g.Status.
	status hellov1.GreetingStatus
	// message is the rendered greeting.
	message string
}

func (s *greetingRun) configMapKey() client.ObjectKey {
	name := s.g.Spec.ConfigMapName
	if name == "" {
		name = s.g.Name
	}
	return client.ObjectKey{Namespace: s.g.Namespace, Name: name}
}

// setReady records the Ready condition for the current generation.
func (s *greetingRun) setReady(status metav1.ConditionStatus, reason conditions.Reason, message string) {
	s.status.ObservedGeneration = s.g.Generation
	meta.SetStatusCondition(&s.status.Conditions, metav1.Condition{
		Type:               hellov1.ConditionReady,
		Status:             status,
		Reason:             string(reason),
		Message:            message,
		ObservedGeneration: s.g.Generation,
	})
}

func (s *greetingRun) addFinalizer() flow.Action {
	return flow.New("add finalizer", func(ctx context.Context) (ctrl.Result, error) {
		if controllerutil.ContainsFinalizer(s.g, Finalizer) {
			return flow.Continue()
		}
		base := s.g.DeepCopy()
		controllerutil.AddFinalizer(s.g, Finalizer)
		err := s.c.Patch(ctx, s.g, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldOwner))
		return settle("add finalizer", err)
	})
}

func (s *greetingRun) render() flow.Action {
	return flow.New("render greeting", func(context.Context) (ctrl.Result, error) {
		msg, err := Render(s.g.Spec)
		if err != nil {
			// Only a change of the spec can help, and that brings a new
			// event: report it and stop without a requeue.
			s.status.Message = ""
			s.setReady(metav1.ConditionFalse, hellov1.ReasonInvalidTemplate, err.Error())
			return flow.Exit()
		}
		s.message = msg
		return flow.Continue()
	})
}

func (s *greetingRun) applyConfigMap() flow.Action {
	return flow.New("apply configmap", func(ctx context.Context) (ctrl.Result, error) {
		key := s.configMapKey()
		want := map[string]string{hellov1.ConfigMapKey: s.message}
		cm := &corev1.ConfigMap{}
		err := s.c.Get(ctx, key, cm)
		switch {
		case apierrors.IsNotFound(err):
			cm = &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
				Data:       want,
			}
			if err := controllerutil.SetControllerReference(s.g, cm, s.c.Scheme()); err != nil {
				return flow.RequeueIfErrorAndWrap("set owner of configmap", err)
			}
			if err := s.c.Create(ctx, cm, client.FieldOwner(FieldOwner)); err != nil {
				return settle("create configmap", err)
			}
			log.FromContext(ctx).Info("configmap created", "configMap", klog.KObj(cm))
			return flow.Continue()
		case err != nil:
			return flow.RequeueIfErrorAndWrap("get configmap", err)
		}
		if !metav1.IsControlledBy(cm, s.g) {
			s.status.Message = ""
			s.setReady(metav1.ConditionFalse, hellov1.ReasonConfigMapNotOwned,
				fmt.Sprintf("configmap %q exists and is not controlled by this greeting", key.Name))
			return flow.RequeueAfter(NotOwnedRecheck)
		}
		if maps.Equal(cm.Data, want) {
			return flow.Continue()
		}
		cm.Data = want
		if err := s.c.Update(ctx, cm, client.FieldOwner(FieldOwner)); err != nil {
			return settle("update configmap", err)
		}
		log.FromContext(ctx).Info("configmap updated", "configMap", klog.KObj(cm))
		return flow.Continue()
	})
}

func (s *greetingRun) markReady() flow.Action {
	return flow.New("mark ready", func(context.Context) (ctrl.Result, error) {
		s.status.Message = s.message
		s.setReady(metav1.ConditionTrue, hellov1.ReasonPublished,
			fmt.Sprintf("configmap %q holds the greeting", s.configMapKey().Name))
		return flow.Continue()
	})
}

func (s *greetingRun) patchStatus() flow.Action {
	return flow.New("patch status", func(ctx context.Context) (ctrl.Result, error) {
		if equality.Semantic.DeepEqual(s.g.Status, s.status) {
			return flow.Continue()
		}
		base := s.g.DeepCopy()
		s.g.Status = *s.status.DeepCopy()
		err := s.c.Status().Patch(ctx, s.g, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldOwner))
		return settle("patch status", err)
	})
}

func (s *greetingRun) deleteConfigMap() flow.Action {
	return flow.New("delete configmap", func(ctx context.Context) (ctrl.Result, error) {
		cm := &corev1.ConfigMap{}
		err := s.c.Get(ctx, s.configMapKey(), cm)
		if apierrors.IsNotFound(err) {
			// The cache may not have seen a ConfigMap made moments ago;
			// letting the Greeting go on its word could leave one behind.
			err = s.live.Get(ctx, s.configMapKey(), cm)
		}
		switch {
		case apierrors.IsNotFound(err):
			return flow.Continue()
		case err != nil:
			return flow.RequeueIfErrorAndWrap("get configmap", err)
		}
		if !metav1.IsControlledBy(cm, s.g) {
			// Not ours: leave it to whoever made it.
			return flow.Continue()
		}
		err = s.c.Delete(ctx, cm, client.Preconditions{UID: &cm.UID})
		if apierrors.IsNotFound(err) {
			return flow.Continue()
		}
		if err == nil {
			log.FromContext(ctx).Info("configmap deleted", "configMap", klog.KObj(cm))
		}
		return settle("delete configmap", err)
	})
}

func (s *greetingRun) removeFinalizer() flow.Action {
	return flow.New("remove finalizer", func(ctx context.Context) (ctrl.Result, error) {
		base := s.g.DeepCopy()
		controllerutil.RemoveFinalizer(s.g, Finalizer)
		err := s.c.Patch(ctx, s.g, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldOwner))
		if apierrors.IsNotFound(err) {
			return flow.Continue()
		}
		return settle("remove finalizer", err)
	})
}

// settle turns the error of a write into the outcome of its action. A 409
// Conflict, or an AlreadyExists from creating an object the cache has not
// seen yet, means the controller acted on stale data: the request is retried
// after ConflictDelay without an error, so neither the log hook nor
// controller-runtime reports it. Other errors are wrapped with op and
// retried with backoff.
func settle(op string, err error) (ctrl.Result, error) {
	switch {
	case err == nil:
		return flow.Continue()
	case apierrors.IsConflict(err), apierrors.IsAlreadyExists(err):
		return flow.RequeueAfter(ConflictDelay)
	}
	return flow.RequeueIfErrorAndWrap(op, err)
}
