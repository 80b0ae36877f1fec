// Package devhook joins package operator's --dev to the embedded control
// plane that package operator/dev links into a binary. An operator's
// release build links neither the control plane nor envtest: Start stays
// nil, and --dev says how to get a build that has them.
package devhook

import (
	"context"
	"io"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Request is the control plane --dev asks for.
type Request struct {
	// Scheme is the operator's scheme, for the cluster's client.
	Scheme *runtime.Scheme
	// CRDs and Webhooks are installed once the API server runs; the
	// webhook configurations are rewritten to call Cluster.WebhookServer.
	CRDs     []*apiextensionsv1.CustomResourceDefinition
	Webhooks []client.Object
	// Workloads runs kube-controller-manager and kube-scheduler, and Nodes
	// simulated nodes.
	Workloads bool
	Nodes     int
	// Progress receives the lines of the binaries' first build.
	Progress io.Writer
}

// Cluster is a control plane Start started.
type Cluster struct {
	// Config connects as an administrator, and Client on it with the
	// request's scheme.
	Config *rest.Config
	Client client.Client
	// WebhookServer are the options of the webhook server the installed
	// configurations call.
	WebhookServer webhook.Options
	// WriteKubeconfig writes a kubeconfig of Config at path.
	WriteKubeconfig func(path string) error
	// Stop stops every process of the cluster.
	Stop func() error
}

// Start starts the control plane of --dev. It is nil unless package
// operator/dev is linked into the binary.
var Start func(ctx context.Context, r Request) (*Cluster, error)
