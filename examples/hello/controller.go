package hello

import (
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
)

const (
	// ControllerName is the name of the Greeting controller in logs,
	// metrics and events, and the field manager of its writes.
	ControllerName = "greeting"

	// Finalizer keeps a deleted Greeting until its ConfigMap is removed.
	Finalizer = "hello.bosun.dev/configmap"
)

// NotOwnedRecheck is how often a Greeting whose ConfigMap name is taken by a
// ConfigMap it does not control checks whether the name became free. Such a
// ConfigMap sends the controller no events, so it has to look again.
const NotOwnedRecheck = time.Minute

// NewReconciler returns the engine reconciler for Greetings, named
// ControllerName, with one step, publishGreeting, which owns the Published
// condition: it renders the greeting, creates or updates the ConfigMap that
// holds it, and deletes that ConfigMap in Cleanup, which is why the
// reconciler has a Finalizer. Its clients and recorder are filled in by
// SetupWithManager, or by the caller.
func NewReconciler() *bosun.Reconciler[*hellov1.Greeting] {
	return &bosun.Reconciler[*hellov1.Greeting]{
		Name:      ControllerName,
		Steps:     []bosun.Step[*hellov1.Greeting]{publishGreeting{}},
		Finalizer: Finalizer,
	}
}

// What the controller may do, from which controller-gen writes
// config/rbac/role.yaml: what the engine needs (see
// bosun.Reconciler.PolicyRules), Greetings and their status, namespaces for
// the reconcile policy, and events; and what publishGreeting declares (see
// its PolicyRules): the ConfigMaps it reads, watches, creates, updates and
// deletes, and update on the Greetings' finalizers subresource, which the
// API server asks of whoever sets blockOwnerDeletion on an owner reference
// to a Greeting, as the ConfigMap's controller reference does.
//
// +kubebuilder:rbac:groups=hello.bosun.dev,resources=greetings,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=greetings.hello.bosun.dev
// +kubebuilder:rbac:groups=hello.bosun.dev,resources=greetings/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=hello.bosun.dev,resources=greetings/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers NewReconciler's reconciler with mgr, watching
// Greetings and, through publishGreeting's setup, the ConfigMaps they
// control. The manager's scheme must hold the types of AddToScheme.
func SetupWithManager(mgr ctrl.Manager) error {
	if err := bosun.ControllerManagedBy[*hellov1.Greeting](mgr).Complete(NewReconciler()); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	return nil
}

// publishGreeting keeps the rendered greeting in the Greeting's ConfigMap
// and in its status, and removes the ConfigMap on deletion.
type publishGreeting struct{}

var (
	_ bosun.Step[*hellov1.Greeting]    = publishGreeting{}
	_ bosun.Cleaner[*hellov1.Greeting] = publishGreeting{}
	_ bosun.Setuper[*hellov1.Greeting] = publishGreeting{}
	_ bosun.ConditionOwner             = publishGreeting{}
)

// Conditions returns the condition the step owns.
func (publishGreeting) Conditions() []string { return []string{hellov1.ConditionPublished} }

// SetupWithBuilder watches the ConfigMaps that Greetings control, so that an
// edited or deleted one is put back.
func (publishGreeting) SetupWithBuilder(b *bosun.Builder[*hellov1.Greeting]) error {
	b.Owns(&corev1.ConfigMap{})
	return nil
}

// PolicyRules declares what the step needs beyond the engine's (see
// bosun.Reconciler.PolicyRules): on ConfigMaps get, list and watch (the
// cache and the API reader), create, update and delete; and update on the
// Greetings' finalizers subresource, for the controller reference of the
// ConfigMaps it creates. scheme names both kinds.
func (publishGreeting) PolicyRules(scheme *runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	gvk, err := apiutil.GVKForObject(&hellov1.Greeting{}, scheme)
	if err != nil {
		return nil, fmt.Errorf("hello: %w", err)
	}
	greetings, _ := meta.UnsafeGuessKindToResource(gvk)
	return []rbacv1.PolicyRule{
		{APIGroups: []string{greetings.Group}, Resources: []string{greetings.Resource + "/finalizers"}, Verbs: []string{"update"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create", "update", "delete"}},
	}, nil
}

// configMapKey returns the key of g's ConfigMap: spec.configMapName, or the
// Greeting's own name.
func configMapKey(g *hellov1.Greeting) client.ObjectKey {
	name := g.Spec.ConfigMapName
	if name == "" {
		name = g.Name
	}
	return client.ObjectKey{Namespace: g.Namespace, Name: name}
}

// setPublished records the Published condition for g's current generation.
func setPublished(g *hellov1.Greeting, status metav1.ConditionStatus, reason conditions.Reason, message string) {
	conds := g.Status.Conditions
	conditions.Set(&conds, metav1.Condition{
		Type:               hellov1.ConditionPublished,
		Status:             status,
		Reason:             string(reason),
		Message:            message,
		ObservedGeneration: g.Generation,
	}, metav1.Now())
	g.Status.Conditions = conds
}

// Do renders the greeting and makes the ConfigMap hold it. An invalid
// template (one that skipped the API server's validation) and a ConfigMap
// name held by a ConfigMap the Greeting does not control set Published
// False and clear status.message; neither is an error. Only a new spec helps
// the first, and it brings a new reconcile; the second is looked at again
// after NotOwnedRecheck.
func (publishGreeting) Do(ctx context.Context, req *bosun.Pass[*hellov1.Greeting]) (ctrl.Result, error) {
	g := req.Object
	msg, err := Render(g.Spec)
	if err != nil {
		g.Status.Message = ""
		setPublished(g, metav1.ConditionFalse, hellov1.ReasonInvalidTemplate, err.Error())
		return ctrl.Result{}, nil
	}
	key := configMapKey(g)
	want := map[string]string{hellov1.ConfigMapKey: msg}
	cm := &corev1.ConfigMap{}
	err = req.Client.Get(ctx, key, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Data: want}
		// When the name is taken after all (the cache does not show a
		// ConfigMap made moments ago), CreateChild reads the one that
		// holds it into cm, and keeps it if it is the Greeting's.
		if err := req.CreateChild(ctx, cm); err != nil {
			if cm.ResourceVersion == "" || metav1.IsControlledBy(cm, g) {
				return ctrl.Result{}, err
			}
			return notOwned(g, key.Name)
		}
		if !maps.Equal(cm.Data, want) {
			if err := updateConfigMap(ctx, req, cm, want); err != nil {
				return ctrl.Result{}, err
			}
		}
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("read configmap %q: %w", key.Name, err)
	case !metav1.IsControlledBy(cm, g):
		return notOwned(g, key.Name)
	case !maps.Equal(cm.Data, want):
		// A 409 Conflict here is the engine's business: a quiet retry.
		if err := updateConfigMap(ctx, req, cm, want); err != nil {
			return ctrl.Result{}, err
		}
	}
	g.Status.Message = msg
	setPublished(g, metav1.ConditionTrue, hellov1.ReasonPublished, fmt.Sprintf("configmap %q holds the greeting", key.Name))
	return ctrl.Result{}, nil
}

// notOwned reports in g that the name of its ConfigMap is held by one it
// does not control, and asks to look again after NotOwnedRecheck.
func notOwned(g *hellov1.Greeting, name string) (ctrl.Result, error) {
	g.Status.Message = ""
	setPublished(g, metav1.ConditionFalse, hellov1.ReasonConfigMapNotOwned,
		fmt.Sprintf("configmap %q exists and is not controlled by this greeting", name))
	return ctrl.Result{RequeueAfter: NotOwnedRecheck}, nil
}

// updateConfigMap makes cm hold data.
func updateConfigMap(ctx context.Context, req *bosun.Pass[*hellov1.Greeting], cm *corev1.ConfigMap, data map[string]string) error {
	cm.Data = data
	if err := req.Client.Update(ctx, cm, client.FieldOwner(req.Controller)); err != nil {
		return fmt.Errorf("update configmap %q: %w", cm.Name, err)
	}
	req.Log.Info("configmap updated", "configMap", klog.KObj(cm))
	return nil
}

// Cleanup deletes the Greeting's ConfigMap if the Greeting controls it; one
// of someone else is left alone. When the cache shows none, it asks the API
// server: the cache may not have seen a ConfigMap made moments ago, and
// letting the Greeting go on its word could leave one behind.
func (publishGreeting) Cleanup(ctx context.Context, req *bosun.Pass[*hellov1.Greeting]) (ctrl.Result, error) {
	key := configMapKey(req.Object)
	cm := &corev1.ConfigMap{}
	err := req.Client.Get(ctx, key, cm)
	if apierrors.IsNotFound(err) {
		err = req.APIReader.Get(ctx, key, cm)
	}
	switch {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("read configmap %q: %w", key.Name, err)
	case !metav1.IsControlledBy(cm, req.Object):
		return ctrl.Result{}, nil
	}
	err = req.Client.Delete(ctx, cm, client.Preconditions{UID: &cm.UID})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("delete configmap %q: %w", key.Name, err)
	default:
		req.Log.Info("configmap deleted", "configMap", klog.KObj(cm))
	}
	return ctrl.Result{}, nil
}
