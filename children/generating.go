package children

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
)

// GenerateFunc returns the children that req.Object should have. It may
// also set fields of the object's status (the engine saves them when they
// change); the status edits of a call that returns an error are discarded.
// It reads what else it needs through req.Client.
type GenerateFunc[T client.Object] func(ctx context.Context, req *bosun.Pass[T]) ([]client.Object, error)

// Generating returns a whole reconciler, named name, whose one step keeps
// the children that generate returns, of the given kinds, owned by the
// object: the shortcut for operators that are "object in, children and
// status out". The step watches its kinds itself, so setting it up is one
// expression:
//
//	return bosun.ControllerManagedBy[*v1.Web](mgr).Complete(children.Generating("web", kinds, generate))
func Generating[T client.Object](name string, kinds []Kind, generate GenerateFunc[T], opts ...Option) *bosun.Reconciler[T] {
	step := NewStep(name, func(ctx context.Context, req *bosun.Pass[T]) ([]client.Object, error) {
		var objs []client.Object
		err := bosun.RollbackStatus(req.Object, func() error {
			var err error
			objs, err = generate(ctx, req)
			return err
		})
		return objs, err
	}, kinds, opts...)
	return &bosun.Reconciler[T]{Name: name, Steps: []bosun.Step[T]{step}}
}
