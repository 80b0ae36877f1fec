package bosun

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/bosunkit/bosun/conditions"
)

// ownedElsewhere reports whether the object belongs to another operator
// instance (AnnotationOperatorInstance), warning once per owner.
func (ps claimStage[T]) ownedElsewhere() bool {
	r := ps.r
	if r.Instance == "" {
		return false
	}
	owner := ps.req.Object.GetAnnotations()[AnnotationOperatorInstance]
	uid := ps.req.Object.GetUID()
	if owner == "" || owner == r.Instance {
		if r.recalled(ps.key, uid).foreign != "" {
			r.amend(ps.key, uid, func(m *remembered) { m.foreign = "" })
		}
		return false
	}
	if r.recalled(ps.key, uid).foreign != owner {
		r.amend(ps.key, uid, func(m *remembered) { m.foreign = owner })
		ps.event(corev1.EventTypeWarning, conditions.ReasonOwnedByOtherInstance, "Reconcile",
			"object belongs to operator instance %q, not %q", owner, r.Instance)
	}
	ps.req.Log.V(1).Info("object owned by another instance", "instance", owner)
	return true
}

// noteSkip emits the Event of the skip policy once, when the object comes
// under it.
func (ps claimStage[T]) noteSkip(policy Policy) {
	uid := ps.req.Object.GetUID()
	seen := ps.r.recalled(ps.key, uid).skipSeen
	if policy != PolicySkip {
		if seen {
			ps.r.amend(ps.key, uid, func(m *remembered) { m.skipSeen = false })
		}
		return
	}
	if !seen {
		ps.r.amend(ps.key, uid, func(m *remembered) { seen, m.skipSeen = m.skipSeen, true })
	}
	if !seen {
		ps.event(corev1.EventTypeNormal, conditions.ReasonReconcileSkipped, "Reconcile", "reconcile policy %q: only observing", PolicySkip)
	}
}

// policy returns the policy of the object: its annotation, else its
// Namespace's (unless IgnoreNamespacePolicy), else the default. An empty annotation counts as not set.
func (ps claimStage[T]) policy(ctx context.Context) (Policy, error) {
	if v := ps.req.Object.GetAnnotations()[AnnotationReconcilePolicy]; v != "" {
		return parsePolicy(v)
	}
	if nsName := ps.req.Object.GetNamespace(); nsName != "" && !ps.r.Options.IgnoreNamespacePolicy {
		// Only the annotations are needed: read the metadata, which the
		// manager's cache keeps in an informer of its own (see the
		// builder's watch of Namespaces).
		ns := namespaceMetadata()
		if err := ps.r.Client.Get(ctx, types.NamespacedName{Name: nsName}, ns); err != nil {
			if !apierrors.IsNotFound(err) {
				return "", fmt.Errorf("reading the policy of namespace %s: %w", nsName, err)
			}
		} else if v := ns.Annotations[AnnotationReconcilePolicy]; v != "" {
			return parsePolicy(v)
		}
	}
	return ps.p.defaultPol, nil
}

// invalidPolicy reports an unknown policy value in Ready and does nothing
// else; the object is reconciled again when it changes.
func (ps claimStage[T]) invalidPolicy(ctx context.Context, perr error) (ctrl.Result, error) {
	obj := ps.req.Object
	co, ok := any(obj).(conditions.Object)
	if !ok {
		// Nowhere to report it but the log; a change of the object or of
		// its namespace brings it back.
		ps.req.Log.Error(perr, "invalid reconcile policy")
		return ctrl.Result{}, nil
	}
	conds := co.GetConditions()
	gen := obj.GetGeneration()
	now := metav1.Now()
	ready := metav1.Condition{
		Type:               conditions.TypeReady,
		Status:             metav1.ConditionFalse,
		Reason:             string(conditions.ReasonInvalidPolicy),
		Message:            perr.Error(),
		ObservedGeneration: gen,
	}
	changed := conditions.Set(&conds, ready, now)
	if ps.r.Options.KStatus {
		// Nothing happens until the policy changes: stalled.
		setKStatus(&conds, ready, false, true, now)
	}
	ps.stampGeneration(conds, gen)
	co.SetConditions(conds)
	if _, err := ps.saving().save(ctx); err != nil {
		if apierrors.IsConflict(err) {
			return ps.conflictRequeue("save"), nil
		}
		return ctrl.Result{}, err
	}
	if changed {
		ps.event(corev1.EventTypeWarning, conditions.ReasonInvalidPolicy, "Reconcile", "%s", perr.Error())
	}
	ps.req.Log.V(1).Info("invalid reconcile policy", "error", perr.Error())
	return ctrl.Result{}, nil
}

// claim commits the finalizer and the instance annotation, when they are
// missing, before any step acts; AnnotationReconciledBy rides on that
// write when it names another build. done means the reconcile ends with
// res and err.
func (ps claimStage[T]) claim(ctx context.Context) (done bool, res ctrl.Result, err error) {
	r, req := ps.r, ps.req
	needFinalizer := ps.p.claims() && !controllerutil.ContainsFinalizer(req.Object, r.Finalizer)
	needInstance := r.Instance != "" && req.Object.GetAnnotations()[AnnotationOperatorInstance] == ""
	// A finalizer of an earlier release is replaced in the same write,
	// or, by a release that needs none, dropped.
	renaming := ps.hasFormer()
	if !needFinalizer && !needInstance && !renaming {
		return false, ctrl.Result{}, nil
	}
	claimed := req.Object.DeepCopyObject().(T)
	if len(ps.p.claimers) > 0 && (needFinalizer || needInstance) {
		loaded := req.Object
		req.Object = claimed
		err := ps.runClaimers(ctx)
		req.Object = loaded
		if err != nil {
			ps.claimErr = err
			return false, ctrl.Result{}, nil
		}
	}
	if needFinalizer || renaming {
		for _, f := range r.Options.FormerFinalizers {
			controllerutil.RemoveFinalizer(claimed, f)
		}
		if ps.p.claims() {
			controllerutil.AddFinalizer(claimed, r.Finalizer)
		}
	}
	// The steps run next: the build that runs them rides on this write.
	ps.markBuild(claimed)
	if needInstance {
		ann := claimed.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[AnnotationOperatorInstance] = r.Instance
		claimed.SetAnnotations(ann)
	}
	patch := client.MergeFromWithOptions(req.Object, client.MergeFromWithOptimisticLock{})
	rv := req.Object.GetResourceVersion()
	if err := ps.saving().write(rv, nil, claimed, func() error { return r.Client.Patch(ctx, claimed, patch) }); err != nil {
		switch {
		case apierrors.IsConflict(err):
			return true, ps.conflictRequeue("claim"), nil
		case apierrors.IsNotFound(err):
			return true, ctrl.Result{}, nil
		default:
			res, err := ps.saving().writeFailed(ctx, writeClaim, fmt.Errorf("claiming: %w", err))
			return true, res, err
		}
	}
	req.Object = claimed
	req.Original = claimed.DeepCopyObject().(T)
	req.Log.V(1).Info("claimed", "finalizer", needFinalizer, "instance", needInstance, "renamed", renaming)
	if !needFinalizer && !needInstance && !ps.p.claims() {
		// Nothing claimed: the earlier release's finalizer went.
		ps.event(corev1.EventTypeNormal, conditions.ReasonClaimed, "Claim", "dropped the finalizer of an earlier release (%s), which this one does not need",
			strings.Join(r.Options.FormerFinalizers, ", "))
		return false, ctrl.Result{}, nil
	}
	note := ps.claimant(needFinalizer || (renaming && ps.p.claims()), needInstance)
	if renaming {
		note += fmt.Sprintf(", in place of the finalizer of an earlier release (%s)", strings.Join(r.Options.FormerFinalizers, ", "))
	}
	ps.event(corev1.EventTypeNormal, conditions.ReasonClaimed, "Claim", "claimed by %s", note)
	return false, ctrl.Result{}, nil
}

// runClaimers runs the Claim of every Claimer in step order on req.Object,
// stopping at the first error.
func (ps claimStage[T]) runClaimers(ctx context.Context) error {
	for _, i := range ps.p.claimers {
		c := ps.p.steps[i].(Claimer[T])
		_, err := ps.req.call(ctx, ps.p.names[i], phaseClaim, func(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
			return ctrl.Result{}, c.Claim(ctx, req)
		})
		if err != nil {
			return fmt.Errorf("claiming: step %s: %w", ps.p.names[i], err)
		}
	}
	return nil
}

func (ps claimStage[T]) claimant(finalizer, instance bool) string {
	switch {
	case finalizer && instance:
		return fmt.Sprintf("operator instance %q with finalizer %q", ps.r.Instance, ps.r.Finalizer)
	case instance:
		return fmt.Sprintf("operator instance %q", ps.r.Instance)
	default:
		return fmt.Sprintf("finalizer %q", ps.r.Finalizer)
	}
}
