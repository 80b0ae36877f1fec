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

// claim is the first stage of a pass: whether the object is another
// instance's, its policy, and the commit of the claim (finalizer,
// instance annotation, what the Claimers set) before any step acts.
// passState.run makes it and acts on what it returns; its writes go
// through the pass's saver.
type claim[T client.Object] struct {
	// r holds the settings the claim reads: Instance, Finalizer, Client,
	// Options.
	r      *Reconciler[T]
	p      *prepared[T]
	req    *Pass[T]
	key    types.NamespacedName
	memory *objectMemory
	save   *saver[T]
}

// ownedElsewhere reports whether the object belongs to another operator
// instance (AnnotationOperatorInstance), warning once per owner.
func (c claim[T]) ownedElsewhere() bool {
	r := c.r
	if r.Instance == "" {
		return false
	}
	owner := c.req.Object.GetAnnotations()[AnnotationOperatorInstance]
	uid := c.req.Object.GetUID()
	if owner == "" || owner == r.Instance {
		if c.memory.recalled(c.key, uid).foreign != "" {
			c.memory.amend(c.key, uid, func(m *remembered) { m.foreign = "" })
		}
		return false
	}
	if c.memory.recalled(c.key, uid).foreign != owner {
		c.memory.amend(c.key, uid, func(m *remembered) { m.foreign = owner })
		c.event(corev1.EventTypeWarning, conditions.ReasonOwnedByOtherInstance, "Reconcile",
			"object belongs to operator instance %q, not %q", owner, r.Instance)
	}
	c.req.Log.V(1).Info("object owned by another instance", "instance", owner)
	return true
}

// noteSkip emits the Event of the skip policy once, when the object comes
// under it.
func (c claim[T]) noteSkip(policy Policy) {
	uid := c.req.Object.GetUID()
	seen := c.memory.recalled(c.key, uid).skipSeen
	if policy != PolicySkip {
		if seen {
			c.memory.amend(c.key, uid, func(m *remembered) { m.skipSeen = false })
		}
		return
	}
	if !seen {
		c.memory.amend(c.key, uid, func(m *remembered) { seen, m.skipSeen = m.skipSeen, true })
	}
	if !seen {
		c.event(corev1.EventTypeNormal, conditions.ReasonReconcileSkipped, "Reconcile", "reconcile policy %q: only observing", PolicySkip)
	}
}

// policy returns the policy of the object: its annotation, else its
// Namespace's (unless IgnoreNamespacePolicy), else the default. An empty annotation counts as not set.
func (c claim[T]) policy(ctx context.Context) (Policy, error) {
	if v := c.req.Object.GetAnnotations()[AnnotationReconcilePolicy]; v != "" {
		return parsePolicy(v)
	}
	if nsName := c.req.Object.GetNamespace(); nsName != "" && !c.r.Options.IgnoreNamespacePolicy {
		// Only the annotations are needed: read the metadata, which the
		// manager's cache keeps in an informer of its own (see the
		// builder's watch of Namespaces).
		ns := namespaceMetadata()
		if err := c.r.Client.Get(ctx, types.NamespacedName{Name: nsName}, ns); err != nil {
			if !apierrors.IsNotFound(err) {
				return "", fmt.Errorf("reading the policy of namespace %s: %w", nsName, err)
			}
		} else if v := ns.Annotations[AnnotationReconcilePolicy]; v != "" {
			return parsePolicy(v)
		}
	}
	return c.p.defaultPol, nil
}

// invalidPolicy reports an unknown policy value in Ready and does nothing
// else; the object is reconciled again when it changes.
func (c claim[T]) invalidPolicy(ctx context.Context, perr error) (ctrl.Result, error) {
	obj := c.req.Object
	co, ok := any(obj).(conditions.Object)
	if !ok {
		// Nowhere to report it but the log; a change of the object or of
		// its namespace brings it back.
		c.req.Log.Error(perr, "invalid reconcile policy")
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
	if c.r.Options.KStatus {
		// Nothing happens until the policy changes: stalled.
		setKStatus(&conds, ready, false, true, now)
	}
	c.p.stampGeneration(conds, gen, c.req.Original)
	co.SetConditions(conds)
	if _, err := c.save.save(ctx); err != nil {
		if apierrors.IsConflict(err) {
			return c.save.conflictRequeue("save"), nil
		}
		return ctrl.Result{}, err
	}
	if changed {
		c.event(corev1.EventTypeWarning, conditions.ReasonInvalidPolicy, "Reconcile", "%s", perr.Error())
	}
	c.req.Log.V(1).Info("invalid reconcile policy", "error", perr.Error())
	return ctrl.Result{}, nil
}

// commit commits the finalizer and the instance annotation, when they are
// missing, before any step acts; AnnotationReconciledBy rides on that
// write when it names another build. done means the reconcile ends with
// res and err. When it does not, err is the error of a Claimer that
// refused the claim: nothing was written, and no step acts.
func (c claim[T]) commit(ctx context.Context) (done bool, res ctrl.Result, err error) {
	r, req := c.r, c.req
	needFinalizer := c.p.claims() && !controllerutil.ContainsFinalizer(req.Object, r.Finalizer)
	needInstance := r.Instance != "" && req.Object.GetAnnotations()[AnnotationOperatorInstance] == ""
	// A finalizer of an earlier release is replaced in the same write,
	// or, by a release that needs none, dropped.
	renaming := r.hasFormer(req.Object)
	if !needFinalizer && !needInstance && !renaming {
		return false, ctrl.Result{}, nil
	}
	claimed := req.Object.DeepCopyObject().(T)
	if len(c.p.claimers) > 0 && (needFinalizer || needInstance) {
		loaded := req.Object
		req.Object = claimed
		err := c.runClaimers(ctx)
		req.Object = loaded
		if err != nil {
			return false, ctrl.Result{}, err
		}
	}
	if needFinalizer || renaming {
		for _, f := range r.Options.FormerFinalizers {
			controllerutil.RemoveFinalizer(claimed, f)
		}
		if c.p.claims() {
			controllerutil.AddFinalizer(claimed, r.Finalizer)
		}
	}
	// The steps run next: the build that runs them rides on this write.
	r.markBuild(claimed)
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
	if err := c.save.write(rv, nil, claimed, func() error { return r.Client.Patch(ctx, claimed, patch) }); err != nil {
		switch {
		case apierrors.IsConflict(err):
			return true, c.save.conflictRequeue("claim"), nil
		case apierrors.IsNotFound(err):
			return true, ctrl.Result{}, nil
		default:
			res, err := c.save.writeFailed(ctx, writeClaim, fmt.Errorf("claiming: %w", err))
			return true, res, err
		}
	}
	req.Object = claimed
	req.Original = claimed.DeepCopyObject().(T)
	req.Log.V(1).Info("claimed", "finalizer", needFinalizer, "instance", needInstance, "renamed", renaming)
	if !needFinalizer && !needInstance && !c.p.claims() {
		// Nothing claimed: the earlier release's finalizer went.
		c.event(corev1.EventTypeNormal, conditions.ReasonClaimed, "Claim", "dropped the finalizer of an earlier release (%s), which this one does not need",
			strings.Join(r.Options.FormerFinalizers, ", "))
		return false, ctrl.Result{}, nil
	}
	note := c.claimant(needFinalizer || (renaming && c.p.claims()), needInstance)
	if renaming {
		note += fmt.Sprintf(", in place of the finalizer of an earlier release (%s)", strings.Join(r.Options.FormerFinalizers, ", "))
	}
	c.event(corev1.EventTypeNormal, conditions.ReasonClaimed, "Claim", "claimed by %s", note)
	return false, ctrl.Result{}, nil
}

// runClaimers runs the Claim of every Claimer in step order on req.Object,
// stopping at the first error.
func (c claim[T]) runClaimers(ctx context.Context) error {
	for _, i := range c.p.claimers {
		cl := c.p.steps[i].(Claimer[T])
		_, err := c.req.call(ctx, c.p.names[i], phaseClaim, func(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
			return ctrl.Result{}, cl.Claim(ctx, req)
		})
		if err != nil {
			return fmt.Errorf("claiming: step %s: %w", c.p.names[i], err)
		}
	}
	return nil
}

func (c claim[T]) claimant(finalizer, instance bool) string {
	switch {
	case finalizer && instance:
		return fmt.Sprintf("operator instance %q with finalizer %q", c.r.Instance, c.r.Finalizer)
	case instance:
		return fmt.Sprintf("operator instance %q", c.r.Instance)
	default:
		return fmt.Sprintf("finalizer %q", c.r.Finalizer)
	}
}

func (c claim[T]) event(eventtype string, reason conditions.Reason, action, note string, args ...any) {
	c.p.recorder.Eventf(c.req.Object, nil, eventtype, string(reason), action, note, args...)
}
