package bosun

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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
		return ctrl.Result{}, RollbackStatus(req.Object, func() error { return fn(ctx, req.Object) })
	})
}

// RollbackStatus calls fn and, when it returns an error or panics, puts the
// status of obj back as it was before the call. The status is the field
// named Status of a typed object, or "status" of an unstructured one; an
// object without one is left as fn left it.
func RollbackStatus[T client.Object](obj T, fn func() error) (err error) {
	saved := obj.DeepCopyObject()
	done := false
	defer func() {
		if !done || err != nil {
			restoreStatus(obj, saved)
		}
	}()
	err = fn()
	done = true
	return err
}

// restoreStatus copies the status of saved, a deep copy of obj, back into
// obj.
func restoreStatus(obj client.Object, saved runtime.Object) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		s := saved.(*unstructured.Unstructured)
		if st, found := s.Object["status"]; found {
			u.Object["status"] = st
		} else {
			delete(u.Object, "status")
		}
		return
	}
	statusfield.Copy(obj, saved)
}
