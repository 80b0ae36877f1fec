package children

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/statusfield"
)

// Generating returns a whole reconciler, named name, whose one step keeps
// the children that generate returns, of the given kinds, owned by the
// object: the shortcut for operators that are "object in, children and
// status out". The step watches its kinds itself, so setting it up is one
// expression. generate may also set fields of the object's status (the
// engine saves them when they change); the status edits of a call that
// returns an error are discarded.
//
//	return bosun.ControllerManagedBy[*v1.Web](mgr).Complete(children.Generating("web", kinds, generate))
func Generating[T client.Object](name string, kinds []Kind, generate DesiredFunc[T], opts ...Option) *bosun.Reconciler[T] {
	step := NewStep(name, func(ctx context.Context, req *bosun.Pass[T]) ([]client.Object, error) {
		var objs []client.Object
		err := statusfield.Rollback(req.Object, func() error {
			var err error
			objs, err = generate(ctx, req)
			return err
		})
		return objs, err
	}, kinds, opts...)
	return &bosun.Reconciler[T]{Name: name, Steps: []bosun.Step[T]{step}}
}
