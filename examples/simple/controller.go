package simple

import (
	"context"
	"errors"
	"fmt"
	"math"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
)

// ControllerName is the name of the Simple controller in logs, metrics and
// events.
const ControllerName = "simple"

// ReasonOverflow is the reason of the Ready condition when the quotient does
// not fit in 64 bits (the most negative number divided by -1).
const ReasonOverflow conditions.Reason = "Overflow"

// ErrZeroDivisor is returned by Divide for a zero divisor.
var ErrZeroDivisor = errors.New("division by zero")

// ErrOverflow is returned by Divide when the quotient does not fit in an
// int64.
var ErrOverflow = errors.New("quotient overflows int64")

// Divide returns the quotient of dividend and divisor, truncated towards
// zero, and the remainder, which has the sign of the dividend: the results of
// Go's / and % operators. A zero divisor gives an error wrapping
// ErrZeroDivisor; math.MinInt64 divided by -1, whose quotient has no int64
// value, gives one wrapping ErrOverflow.
func Divide(dividend, divisor int64) (quotient, remainder int64, err error) {
	switch {
	case divisor == 0:
		return 0, 0, fmt.Errorf("divide %d by %d: %w", dividend, divisor, ErrZeroDivisor)
	case dividend == math.MinInt64 && divisor == -1:
		return 0, 0, fmt.Errorf("divide %d by %d: %w", dividend, divisor, ErrOverflow)
	}
	return dividend / divisor, dividend % divisor, nil
}

// Steps returns the steps of the Simple reconciler, in order:
//
//   - ensureNonZeroDivisor owns the DivisorValid condition. For a zero
//     divisor it sets DivisorValid False with reason ZeroDivisor, clears the
//     results and stops the pass without an error (bosun.ErrStop): only a
//     new spec can help, and a new spec brings a new reconcile. The engine's Ready summary
//     then carries the same reason and message.
//   - divide writes the quotient and the remainder into the status.
//
// Neither step has anything to clean up, so the engine adds no finalizer.
func Steps() []bosun.Step[*simplev1.Simple] {
	return []bosun.Step[*simplev1.Simple]{ensureNonZeroDivisor{}, divide{}}
}

// NewReconciler returns the engine reconciler for Simples, named
// ControllerName and running Steps. Its clients and recorder are filled in
// by SetupWithManager, or by the caller.
func NewReconciler() *bosun.Reconciler[*simplev1.Simple] {
	return &bosun.Reconciler[*simplev1.Simple]{Name: ControllerName, Steps: Steps()}
}

// What the controller may do, from which controller-gen writes
// config/rbac/role.yaml: what the engine needs (see
// bosun.Reconciler.PolicyRules), Simples and their status, namespaces for
// the reconcile policy, and events. The steps read and write nothing else,
// and a Simple owns nothing, so no update on its finalizers subresource.
//
// +kubebuilder:rbac:groups=simple.bosun.dev,resources=simples,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=simple.bosun.dev,resources=simples/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers NewReconciler's reconciler with mgr, watching
// Simples. The manager's scheme must hold the types of AddToScheme.
func SetupWithManager(mgr ctrl.Manager) error {
	if err := bosun.ControllerManagedBy[*simplev1.Simple](mgr).Complete(NewReconciler()); err != nil {
		return fmt.Errorf("simple: %w", err)
	}
	return nil
}

// setCondition records a condition of s for its current generation.
func setCondition(s *simplev1.Simple, typ string, status metav1.ConditionStatus, reason conditions.Reason, message string) {
	conds := s.Status.Conditions
	conditions.Set(&conds, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             string(reason),
		Message:            message,
		ObservedGeneration: s.Generation,
	}, metav1.Now())
	s.Status.Conditions = conds
}

// ensureNonZeroDivisor refuses a zero divisor through DivisorValid.
type ensureNonZeroDivisor struct{}

var (
	_ bosun.Step[*simplev1.Simple] = ensureNonZeroDivisor{}
	_ bosun.ConditionOwner         = ensureNonZeroDivisor{}
	_ bosun.Step[*simplev1.Simple] = divide{}
)

// Conditions returns the condition the step owns.
func (ensureNonZeroDivisor) Conditions() []string {
	return []string{simplev1.ConditionDivisorValid}
}

// Do checks the divisor.
func (ensureNonZeroDivisor) Do(_ context.Context, req *bosun.Pass[*simplev1.Simple]) (ctrl.Result, error) {
	s := req.Object
	if s.Spec.Divisor == 0 {
		s.Status.Quotient, s.Status.Remainder = nil, nil
		setCondition(s, simplev1.ConditionDivisorValid, metav1.ConditionFalse, simplev1.ReasonZeroDivisor,
			"spec.divisor is zero; set it to another number")
		return ctrl.Result{}, fmt.Errorf("zero divisor: %w", bosun.ErrStop)
	}
	setCondition(s, simplev1.ConditionDivisorValid, metav1.ConditionTrue, simplev1.ReasonNonZeroDivisor, "")
	return ctrl.Result{}, nil
}

// divide computes the quotient and the remainder.
type divide struct{}

// Do writes the results into the status. An overflow is a terminal error:
// retrying cannot help.
func (divide) Do(_ context.Context, req *bosun.Pass[*simplev1.Simple]) (ctrl.Result, error) {
	s := req.Object
	q, r, err := Divide(s.Spec.Dividend, s.Spec.Divisor)
	if err != nil {
		s.Status.Quotient, s.Status.Remainder = nil, nil
		if errors.Is(err, ErrOverflow) {
			return ctrl.Result{}, conditions.Terminal(ReasonOverflow, err)
		}
		return ctrl.Result{}, err
	}
	s.Status.Quotient, s.Status.Remainder = &q, &r
	return ctrl.Result{}, nil
}
