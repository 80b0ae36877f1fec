package bosun

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/internal/statusfield"
)

// NewStatusStep returns a Step named name that lets fn compute the object's
// status. When fn returns an error, the status edits it made are discarded:
// the status is put back as it was before the call, and the error becomes
// the step's, so that a half-computed status is never saved. The engine
// still records the error in the conditions.
func NewStatusStep[T client.Object](name string, fn func(ctx context.Context, obj T) error) StepFunc[T] {
	return NewStep(name, func(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
		return ctrl.Result{}, statusfield.Rollback(req.Object, func() error { return fn(ctx, req.Object) })
	})
}
