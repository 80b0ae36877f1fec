// Command certmanager runs cert-manager's certificate controllers and its CA
// injector in one process against the cluster of a kubeconfig. bosun's tests
// of the cert-manager path of `bosun chart` build it from cert-manager's Go
// module, as the control plane builds kube-apiserver and kwok, and run it
// beside the dev cluster: it issues Certificates from self-signed and CA
// Issuers and injects their CA into webhook configurations, APIServices and
// CRDs that carry the cert-manager.io/inject-ca-from annotation.
//
// It runs no ACME, Vault or Venafi issuer, no ingress or gateway shim and no
// cert-manager webhook; the CRDs come from the module's deploy/crds.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"         // the CA issuer, for the issuers controllers
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned" // the self-signed issuer, likewise
	logf "github.com/cert-manager/cert-manager/pkg/logs"
)

// controllers are the cert-manager controllers this command runs, by the
// names they register under: what a Certificate from a self-signed or CA
// Issuer needs, from its private key to its Ready condition.
var controllers = []string{
	issuers.ControllerName,
	clusterissuers.ControllerName,
	trigger.ControllerName,
	keymanager.ControllerName,
	requestmanager.ControllerName,
	issuing.ControllerName,
	readiness.ControllerName,
	revisionmanager.ControllerName,
	approver.ControllerName,
	crselfsigned.CRControllerName,
	crca.CRControllerName,
}

// workers is how many items each controller works on at once.
const workers = 2

func main() {
	// A flag set of its own: controller-runtime defines --kubeconfig on
	// the command line's.
	fs := flag.NewFlagSet("certmanager", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "The kubeconfig of the cluster.")
	resourceNamespace := fs.String("cluster-resource-namespace", "cert-manager",
		"The namespace of the Secrets that ClusterIssuers refer to.")
	klog.InitFlags(fs)
	_ = fs.Parse(os.Args[1:])
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "certmanager: --kubeconfig (or KUBECONFIG) is required")
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, klog.Background(), "certmanager")
	if err := run(ctx, *kubeconfig, *resourceNamespace); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "certmanager:", err)
		os.Exit(1)
	}
}

// run runs the controllers and the CA injector until ctx ends or one of
// them fails.
func run(ctx context.Context, kubeconfig, resourceNamespace string) error {
	// The controllers end before run returns: cancel runs first.
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fail := func(err error) {
		if err != nil {
			cancel(err)
		}
	}

	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   50,
		KubernetesAPIBurst: 100,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: resourceNamespace},
		CertificateOptions: controller.CertificateOptions{
			// cert-manager's own defaults.
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	})
	if err != nil {
		return fmt.Errorf("building the controllers' context: %w", err)
	}
	known := controller.Known()
	for _, name := range controllers {
		construct, ok := known[name]
		if !ok {
			return fmt.Errorf("controller %s is not registered", name)
		}
		c, err := construct(factory)
		if err != nil {
			return fmt.Errorf("constructing controller %s: %w", name, err)
		}
		wg.Go(func() { fail(c.Run(workers, ctx)) })
	}
	shared, err := factory.Build()
	if err != nil {
		return fmt.Errorf("building the informers' context: %w", err)
	}
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())

	mgr, err := injector(ctx, kubeconfig)
	if err != nil {
		return err
	}
	wg.Go(func() { fail(mgr.Start(ctx)) })

	<-ctx.Done()
	return context.Cause(ctx)
}

// injector returns the manager of the CA injector's controllers.
func injector(ctx context.Context, kubeconfig string) (ctrl.Manager, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", kubeconfig, err)
	}
	// The injector applies the CA with the field manager its user agent
	// names.
	cfg.UserAgent = "cert-manager-cainjector"
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, admissionregistrationv1.AddToScheme, apiextensionsv1.AddToScheme,
		apiregistrationv1.AddToScheme, cmapi.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("building the injector's scheme: %w", err)
		}
	}
	ctrl.SetLogger(klog.Background())
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return nil, fmt.Errorf("creating the injector's manager: %w", err)
	}
	err = cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			cainjector.MutatingWebhookConfigurationName:   true,
			cainjector.ValidatingWebhookConfigurationName: true,
			cainjector.APIServiceName:                     true,
			cainjector.CustomResourceDefinitionName:       true,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("registering the CA injector: %w", err)
	}
	return mgr, nil
}
