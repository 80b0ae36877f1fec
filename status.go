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
//
// fn runs holding the pass's lock on the status, the lock
// Pass.UpdateConditions takes: in a ParallelJoin, the other steps' changes
// of their conditions, and other status steps, wait for it, so that the
// status put back undoes fn's edits and no one else's.
func NewStatusStep[T client.Object](name string, fn func(ctx context.Context, obj T) error) StepFunc[T] {
	return NewStep(name, func(ctx context.Context, req *Pass[T]) (ctrl.Result, error) {
		req.statusMu.Lock()
		defer req.statusMu.Unlock()
		return ctrl.Result{}, statusfield.Rollback(req.Object, func() error { return fn(ctx, req.Object) })
	})
}
