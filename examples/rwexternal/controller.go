package rwexternal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	rwv1 "github.com/bosunkit/bosun/examples/rwexternal/api/v1alpha1"
	"github.com/bosunkit/bosun/watch"
)

const (
	// ControllerName is the name of the RWExternal controller in logs,
	// metrics and events.
	ControllerName = "rwexternal"

	// Finalizer keeps a deleted RWExternal until its output Secret is
	// removed.
	Finalizer = "rwexternal.bosun.dev/output"

	// OwnerAnnotation marks an output Secret with the name of the
	// RWExternal, in the same namespace, that wrote it. The operator only
	// changes and deletes Secrets that carry it.
	OwnerAnnotation = "rwexternal.bosun.dev/owner"

	// InputSecretIndex is the name of the cache index of RWExternals by
	// spec.inputSecret, which maps a Secret to the RWExternals that read it.
	InputSecretIndex = "spec.inputSecret"

	// FieldOwner is the field manager the operator writes Secrets with.
	FieldOwner = "bosun-rwexternal"
)

// CacheLagDelay is how long a request waits before it is retried after
// creating an output Secret failed with AlreadyExists: the Secret was made on
// an earlier pass and the cache has not seen it yet.
const CacheLagDelay = 200 * time.Millisecond

// NotOwnedRecheck is how often an RWExternal whose output name is taken by a
// Secret of someone else checks whether the name became free. Such a Secret
// sends the controller no events, so it has to look again.
const NotOwnedRecheck = time.Minute

// outputData is where readInput leaves the output data for writeOutput.
var outputData = bosun.NewKey[map[string][]byte]("output data")

// Steps returns the steps of the RWExternal reconciler, in order:
//
//   - readInput owns InputReady. It reads the input Secret from the cache and
//     derives the output data (see Derive) for the next step. A missing input
//     makes InputReady False with reason InputMissing and stops the pass
//     without an error (bosun.ErrStop): the watch on Secrets brings the RWExternal back when
//     the Secret appears, so there is nothing to retry.
//   - writeOutput owns OutputReady. It creates or updates the output Secret,
//     marked with OwnerAnnotation, and deletes it in Cleanup; it is why the
//     reconciler has a Finalizer.
//
// Both steps are Observers too: under the skip policy they report what they
// see (the input, and whether the output is up to date) and change nothing.
func Steps() []bosun.Step[*rwv1.RWExternal] {
	return []bosun.Step[*rwv1.RWExternal]{readInput{}, writeOutput{}}
}

// NewReconciler returns the engine reconciler for RWExternals, named
// ControllerName, running Steps with Finalizer. Its clients and recorder are
// filled in by SetupWithManager, or by the caller.
func NewReconciler() *bosun.Reconciler[*rwv1.RWExternal] {
	return &bosun.Reconciler[*rwv1.RWExternal]{Name: ControllerName, Steps: Steps(), Finalizer: Finalizer}
}

// What the controller may do, from which controller-gen writes
// config/rbac/role.yaml: what the engine needs (see
// bosun.Reconciler.PolicyRules), RWExternals and their status, namespaces
// for the reconcile policy, and events; and the Secrets the steps read,
// watch, create, update and delete (see their PolicyRules). The output
// Secret names its RWExternal in an annotation, not an owner reference, so
// no update on the RWExternals' finalizers subresource.
//
// +kubebuilder:rbac:groups=rwexternal.bosun.dev,resources=rwexternals,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=rwexternals.rwexternal.bosun.dev
// +kubebuilder:rbac:groups=rwexternal.bosun.dev,resources=rwexternals/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers NewReconciler's reconciler with mgr. Its
// steps watch the Secrets they read and write (see their
// SetupWithBuilder). The manager's scheme must hold the types of
// AddToScheme.
func SetupWithManager(mgr ctrl.Manager) error {
	if err := bosun.ControllerManagedBy[*rwv1.RWExternal](mgr).Complete(NewReconciler()); err != nil {
		return fmt.Errorf("rwexternal: %w", err)
	}
	return nil
}

// setCondition records a condition of rw for its current generation.
func setCondition(rw *rwv1.RWExternal, typ string, status metav1.ConditionStatus, reason conditions.Reason, message string) {
	conds := rw.Status.Conditions
	conditions.Set(&conds, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             string(reason),
		Message:            message,
		ObservedGeneration: rw.Generation,
	}, metav1.Now())
	rw.Status.Conditions = conds
}

var (
	_ bosun.Step[*rwv1.RWExternal]     = readInput{}
	_ bosun.Setuper[*rwv1.RWExternal]  = readInput{}
	_ bosun.Setuper[*rwv1.RWExternal]  = writeOutput{}
	_ bosun.Observer[*rwv1.RWExternal] = readInput{}
	_ bosun.ConditionOwner             = readInput{}
	_ bosun.Step[*rwv1.RWExternal]     = writeOutput{}
	_ bosun.Observer[*rwv1.RWExternal] = writeOutput{}
	_ bosun.Cleaner[*rwv1.RWExternal]  = writeOutput{}
	_ bosun.ConditionOwner             = writeOutput{}
)

// readInput reads the input Secret and derives the output data.
type readInput struct{}

// SetupWithBuilder makes a change of an input Secret reconcile the
// RWExternals that read it, found through the field index
// InputSecretIndex.
func (readInput) SetupWithBuilder(b *bosun.Builder[*rwv1.RWExternal]) error {
	return watch.Referenced(&corev1.Secret{}, InputSecretIndex, func(rw *rwv1.RWExternal) []string {
		return []string{rw.Spec.InputSecret}
	})(b)
}

// Conditions returns the condition the step owns.
func (readInput) Conditions() []string { return []string{rwv1.ConditionInputReady} }

// PolicyRules declares what the step needs beyond the engine's (see
// bosun.Reconciler.PolicyRules): get, list and watch on Secrets, which it
// reads through the cache and watches.
func (readInput) PolicyRules(*runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	return []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}}}, nil
}

// Do reads the input.
func (readInput) Do(ctx context.Context, req *bosun.Pass[*rwv1.RWExternal]) (ctrl.Result, error) {
	return read(ctx, req)
}

// Observe reads the input too: reading changes nothing.
func (readInput) Observe(ctx context.Context, req *bosun.Pass[*rwv1.RWExternal]) (ctrl.Result, error) {
	return read(ctx, req)
}

func read(ctx context.Context, req *bosun.Pass[*rwv1.RWExternal]) (ctrl.Result, error) {
	rw := req.Object
	in := &corev1.Secret{}
	err := req.Client.Get(ctx, client.ObjectKey{Namespace: rw.Namespace, Name: rw.Spec.InputSecret}, in)
	switch {
	case apierrors.IsNotFound(err):
		setCondition(rw, rwv1.ConditionInputReady, metav1.ConditionFalse, rwv1.ReasonInputMissing,
			fmt.Sprintf("secret %q not found", rw.Spec.InputSecret))
		return ctrl.Result{}, fmt.Errorf("input missing: %w", bosun.ErrStop)
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("read input secret %q: %w", rw.Spec.InputSecret, err)
	}
	data, err := Derive(in.Data)
	if err != nil {
		setCondition(rw, rwv1.ConditionInputReady, metav1.ConditionFalse, rwv1.ReasonKeyCollision,
			fmt.Sprintf("secret %q: %v", rw.Spec.InputSecret, err))
		return ctrl.Result{}, fmt.Errorf("input keys collide: %w", bosun.ErrStop)
	}
	outputData.Set(req.Values, data)
	setCondition(rw, rwv1.ConditionInputReady, metav1.ConditionTrue, rwv1.ReasonInputFound,
		fmt.Sprintf("secret %q read", rw.Spec.InputSecret))
	return ctrl.Result{}, nil
}

// writeOutput keeps the output Secret and removes it on deletion.
type writeOutput struct{}

// SetupWithBuilder makes a change of an output Secret reconcile the
// RWExternal named by its OwnerAnnotation, so that a deleted or edited
// output is put back.
func (writeOutput) SetupWithBuilder(b *bosun.Builder[*rwv1.RWExternal]) error {
	b.Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(outputOwner))
	return nil
}

// outputOwner returns a request for the RWExternal that wrote the output
// Secret s; none for another Secret.
func outputOwner(_ context.Context, s client.Object) []reconcile.Request {
	owner := s.GetAnnotations()[OwnerAnnotation]
	if owner == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: s.GetNamespace(), Name: owner}}}
}

// Conditions returns the condition the step owns.
func (writeOutput) Conditions() []string { return []string{rwv1.ConditionOutputReady} }

// PolicyRules declares what the step needs beyond the engine's (see
// bosun.Reconciler.PolicyRules): get, list and watch on Secrets, which it
// reads through the cache and the API server and watches, and create,
// update and delete, with which it writes the output Secret and removes
// it.
func (writeOutput) PolicyRules(*runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	return []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"secrets"},
		Verbs: []string{"get", "list", "watch", "create", "update", "delete"},
	}}, nil
}

// ownedBy reports whether s is the output Secret of rw.
func ownedBy(s *corev1.Secret, rw *rwv1.RWExternal) bool {
	return s.Annotations[OwnerAnnotation] == rw.Name
}

// upToDate reports whether s holds data.
func upToDate(s *corev1.Secret, data map[string][]byte) bool {
	return s.Type == corev1.SecretTypeOpaque && maps.EqualFunc(s.Data, data, bytes.Equal)
}

// errNoInput means writeOutput ran without readInput before it.
var errNoInput = errors.New("no output data: the readInput step did not run before writeOutput")

// Do creates or updates the output Secret.
func (writeOutput) Do(ctx context.Context, req *bosun.Pass[*rwv1.RWExternal]) (ctrl.Result, error) {
	rw := req.Object
	data, ok := outputData.Get(req.Values)
	if !ok {
		return ctrl.Result{}, errNoInput
	}
	name := rw.OutputSecretName()
	out := &corev1.Secret{}
	err := req.Client.Get(ctx, client.ObjectKey{Namespace: rw.Namespace, Name: name}, out)
	switch {
	case apierrors.IsNotFound(err):
		out = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:   rw.Namespace,
				Name:        name,
				Annotations: map[string]string{OwnerAnnotation: rw.Name},
			},
			Type: corev1.SecretTypeOpaque,
			Data: data,
		}
		if err := req.Client.Create(ctx, out, client.FieldOwner(FieldOwner)); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return ctrl.Result{RequeueAfter: CacheLagDelay}, nil
			}
			return ctrl.Result{}, fmt.Errorf("create output secret %q: %w", name, err)
		}
		req.Log.Info("output secret created", "secret", klog.KObj(out))
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("read output secret %q: %w", name, err)
	case !ownedBy(out, rw):
		setCondition(rw, rwv1.ConditionOutputReady, metav1.ConditionFalse, rwv1.ReasonOutputNotOwned, notOwned(name))
		return ctrl.Result{RequeueAfter: NotOwnedRecheck}, nil
	case !upToDate(out, data):
		out.Type = corev1.SecretTypeOpaque
		out.Data = data
		out.StringData = nil
		// A 409 Conflict here is the engine's business: a quiet retry.
		if err := req.Client.Update(ctx, out, client.FieldOwner(FieldOwner)); err != nil {
			return ctrl.Result{}, fmt.Errorf("update output secret %q: %w", name, err)
		}
		req.Log.Info("output secret updated", "secret", klog.KObj(out))
	}
	rw.Status.OutputSecret = name
	setCondition(rw, rwv1.ConditionOutputReady, metav1.ConditionTrue, rwv1.ReasonOutputUpToDate, upToDateMessage(name))
	return ctrl.Result{}, nil
}

// Observe reports whether the output Secret is up to date, without writing
// it.
func (writeOutput) Observe(ctx context.Context, req *bosun.Pass[*rwv1.RWExternal]) (ctrl.Result, error) {
	rw := req.Object
	data, ok := outputData.Get(req.Values)
	if !ok {
		return ctrl.Result{}, errNoInput
	}
	name := rw.OutputSecretName()
	out := &corev1.Secret{}
	err := req.Client.Get(ctx, client.ObjectKey{Namespace: rw.Namespace, Name: name}, out)
	switch {
	case apierrors.IsNotFound(err):
		setCondition(rw, rwv1.ConditionOutputReady, metav1.ConditionFalse, rwv1.ReasonOutputMissing,
			fmt.Sprintf("secret %q does not exist", name))
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("read output secret %q: %w", name, err)
	case !ownedBy(out, rw):
		setCondition(rw, rwv1.ConditionOutputReady, metav1.ConditionFalse, rwv1.ReasonOutputNotOwned, notOwned(name))
	case !upToDate(out, data):
		setCondition(rw, rwv1.ConditionOutputReady, metav1.ConditionFalse, rwv1.ReasonOutputOutOfDate,
			fmt.Sprintf("secret %q does not hold the output of the current input", name))
	default:
		setCondition(rw, rwv1.ConditionOutputReady, metav1.ConditionTrue, rwv1.ReasonOutputUpToDate, upToDateMessage(name))
	}
	return ctrl.Result{}, nil
}

// Cleanup deletes the output Secret if it is ours. It reads around the cache,
// so that a Secret created moments ago is not missed.
func (writeOutput) Cleanup(ctx context.Context, req *bosun.Pass[*rwv1.RWExternal]) (ctrl.Result, error) {
	rw := req.Object
	name := rw.OutputSecretName()
	out := &corev1.Secret{}
	err := req.APIReader.Get(ctx, client.ObjectKey{Namespace: rw.Namespace, Name: name}, out)
	switch {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("read output secret %q: %w", name, err)
	case !ownedBy(out, rw):
		// Not ours: leave it to whoever made it.
		return ctrl.Result{}, nil
	}
	err = req.Client.Delete(ctx, out, client.Preconditions{UID: &out.UID})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("delete output secret %q: %w", name, err)
	default:
		req.Log.Info("output secret deleted", "secret", klog.KObj(out))
	}
	return ctrl.Result{}, nil
}

func notOwned(name string) string {
	return fmt.Sprintf("secret %q exists and was not written for this RWExternal (no %s annotation naming it)", name, OwnerAnnotation)
}

func upToDateMessage(name string) string {
	return fmt.Sprintf("secret %q holds the output of the current input", name)
}
