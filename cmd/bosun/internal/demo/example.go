package demo

import (
	"context"
	"errors"
	"fmt"
	"io"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Example is one example operator as the demo sees it.
type Example struct {
	// Name identifies the example in progress lines, for example "hello".
	Name string
	// AddToScheme registers the example's API types.
	AddToScheme func(*runtime.Scheme) error
	// CRDs returns the example's custom resource definitions.
	CRDs func() ([]*apiextensionsv1.CustomResourceDefinition, error)
	// Start, if set, starts what the example's controllers talk to outside
	// Kubernetes (a database server, say) before Setup is called, writing
	// progress lines to out. The demo calls the returned stop when it ends,
	// after the manager has stopped.
	Start func(ctx context.Context, out io.Writer) (stop func() error, err error)
	// Setup adds the example's controllers, and its webhooks if it has
	// Webhooks, to the manager.
	Setup func(ctrl.Manager) error
	// Webhooks, if set, returns the example's admission webhook
	// configurations, which the demo installs pointed at the manager's
	// webhook server; the samples are created once it answers.
	Webhooks func() ([]client.Object, error)
	// Prepare, if set, runs once the demo namespace exists and before the
	// samples are created, to make what the samples need but the demo should
	// not wait for, such as the input Secrets they read.
	Prepare func(ctx context.Context, c client.Client, namespace string) error
	// Samples returns the objects the demo creates in namespace. The demo
	// waits for each of them to be Ready.
	Samples func(namespace string) []client.Object
	// Children lists the kinds the example manages; the final table shows
	// every object of these kinds in the demo namespace.
	Children []schema.GroupVersionKind
}

// validate reports the first missing field of e.
func (e Example) validate() error {
	switch {
	case e.Name == "":
		return errors.New("example without a name")
	case e.AddToScheme == nil:
		return fmt.Errorf("example %q: AddToScheme is nil", e.Name)
	case e.CRDs == nil:
		return fmt.Errorf("example %q: CRDs is nil", e.Name)
	case e.Setup == nil:
		return fmt.Errorf("example %q: Setup is nil", e.Name)
	case e.Samples == nil:
		return fmt.Errorf("example %q: Samples is nil", e.Name)
	}
	return nil
}
