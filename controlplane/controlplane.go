package controlplane

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

const (
	// defaultStartTimeout is how long kube-apiserver, etcd and
	// kube-controller-manager may each take to become ready when
	// Options.StartTimeout is zero. It is generous because
	// several race-enabled test binaries starting control planes at once on a
	// small machine are slow.
	defaultStartTimeout = 2 * time.Minute
	// defaultStopTimeout is how long each process of the control plane may
	// take to stop when Options.StopTimeout is zero.
	defaultStopTimeout = time.Minute

	// kubeconfigName names the cluster, user and context of Kubeconfig.
	kubeconfigName = "bosun"
)

// Options configures Start. The zero value starts a bare control plane.
type Options struct {
	// Scheme is the scheme of ControlPlane.Client. Nil means NewScheme(). Add
	// the types of the CRDs a test uses to it.
	Scheme *runtime.Scheme
	// CRDs are installed, and waited for, before Start returns.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// CRDPaths are files or directories of CRD manifests (YAML or JSON) to
	// install like CRDs. A path that does not exist is an error.
	CRDPaths []string
	// Webhooks are admission webhook configurations
	// (*admissionregistrationv1.MutatingWebhookConfiguration and
	// *admissionregistrationv1.ValidatingWebhookConfiguration, as
	// manifest.DecodeWebhooks reads them from controller-gen's manifests) to install
	// before Start returns. Each webhook's client configuration is pointed
	// at ControlPlane.WebhookServer and trusts its certificate, whatever
	// Service it names. The CRDs of kinds that are convertible in Scheme (a
	// hub and its spokes) get a conversion webhook at the same server's
	// /convert, with or without Webhooks.
	Webhooks []client.Object
	// Progress receives progress lines while the binaries are built on first
	// use (see Binaries). Nil discards them.
	Progress io.Writer
	// Output receives what kube-apiserver, etcd and kube-controller-manager
	// write. Nil discards it; either way the last lines are quoted when they
	// fail to start.
	Output io.Writer
	// APIServerFlags are extra kube-apiserver flags, by name without the
	// leading dashes, for example {"feature-gates": {"SomeGate=true"}}. They
	// replace the defaults of the same name, among them
	// enable-admission-plugins, which is OwnerReferencesPermissionEnforcement
	// (see Start), and service-cluster-ip-range ("10.96.0.0/16").
	APIServerFlags map[string][]string
	// ControllerManager runs kube-controller-manager against the API server
	// with Controllers, by default DefaultControllers: garbage collection,
	// namespace deletion and the workload controllers (Deployments,
	// ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs, EndpointSlices,
	// service accounts). It runs as the administrator and serves no
	// endpoint. Start returns once its garbage collector works, and records
	// the controllers on the kube-system namespace (see
	// RunningControllers). The binary comes from Binaries, which builds it
	// on first use. Without it nothing collects garbage and no workload
	// controller runs.
	ControllerManager bool
	// Controllers names the kube-controller-manager controllers to run, as
	// its --controllers flag takes them; nil means DefaultControllers.
	// Start waits for the garbage collector, so it must be among them.
	Controllers []string
	// Nodes is how many simulated nodes to run pods on: kube-scheduler
	// places pods onto them and kwok moves the pods through their life
	// without a kubelet or containers. A pod becomes Running and Ready as
	// soon as it is placed, a Job's pod then succeeds, and a pod labelled
	// PodExitCodeLabel fails with that exit code; a deleted pod goes at
	// once. The nodes are named bosun-node-0, bosun-node-1, ...; each
	// offers 1000 CPUs, 1Ti of memory and 10000 pods, and carries a
	// topology.kubernetes.io/zone label of zone-0, zone-1 or zone-2 in
	// turn. Start returns once a probe pod has become Ready. Zero runs no
	// nodes: pods stay Pending. The binaries come from Binaries, which
	// builds them on first use.
	Nodes int
	// StartTimeout bounds how long each of kube-apiserver, etcd and
	// kube-controller-manager may take to become ready, and how long
	// installed CRDs may take to be served. Zero means two minutes:
	// generous, for several race-enabled test binaries starting control
	// planes at once on a small machine.
	StartTimeout time.Duration
	// StopTimeout bounds how long each process may take to stop. Zero means
	// one minute.
	StopTimeout time.Duration
}

// ControlPlane is a running kube-apiserver and etcd, and
// kube-controller-manager, kube-scheduler and kwok if Options asked for
// them, started by Start.
type ControlPlane struct {
	// Config connects to the API server as an administrator (a member of
	// system:masters).
	Config *rest.Config
	// Client is a controller-runtime client on Config using Scheme.
	Client client.Client
	// Scheme is the scheme of Client: Options.Scheme or NewScheme().
	Scheme *runtime.Scheme
	// BinaryDir is the directory the binaries were run from.
	BinaryDir string
	// CRDs are the CRDs that Start installed.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// WebhookServer are the options of the webhook server that the
	// installed webhook configurations and conversion webhooks call: a
	// local address and a directory holding a serving certificate
	// (tls.crt, tls.key) they trust. Give them to the manager that serves
	// the webhooks (ctrl.Options.WebhookServer = webhook.NewServer(...));
	// bosuntest's managers and `bosun dev` do.
	WebhookServer webhook.Options

	env *envtest.Environment
	// procs are the processes started besides kube-apiserver and etcd, in
	// the order they started; procDir holds their kubeconfig and
	// configuration.
	procs    []*process
	procDir  string
	stopOnce sync.Once
	stopErr  error
}

// admissionPlugins are the admission plugins Start enables besides
// kube-apiserver's defaults (envtest only disables ServiceAccount). With
// OwnerReferencesPermissionEnforcement, setting blockOwnerDeletion on an
// owner reference needs update on the owner's finalizers subresource, as in
// a production cluster, so tests see when a controller's role lacks it.
var admissionPlugins = []string{"OwnerReferencesPermissionEnforcement"}

// serviceClusterIPRange is the range Start gives Services their cluster
// IPs from, unless APIServerFlags says otherwise. It holds 65,534 Services,
// where envtest's own default (a /24) runs out after 254, which a test of
// a thousand objects with a Service each would hit.
const serviceClusterIPRange = "10.96.0.0/16"

// NewScheme returns a scheme holding the built-in Kubernetes types (client-go's
// scheme) and apiextensions.k8s.io/v1, the default scheme of Start.
func NewScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	return s
}

// OptionsFor returns a function that makes the Options of a control plane
// for one API: NewScheme with the types of addToScheme, and the CRDs crds
// returns installed. It fits bosuntest.Shared's Options field:
//
//	var shared = bosuntest.Shared{Options: controlplane.OptionsFor(v1.AddToScheme, v1.CRDs)}
func OptionsFor(addToScheme func(*runtime.Scheme) error, crds func() ([]*apiextensionsv1.CustomResourceDefinition, error)) func() (Options, error) {
	return func() (Options, error) {
		scheme := NewScheme()
		if err := addToScheme(scheme); err != nil {
			return Options{}, fmt.Errorf("controlplane: registering types: %w", err)
		}
		defs, err := crds()
		if err != nil {
			return Options{}, fmt.Errorf("controlplane: loading CRDs: %w", err)
		}
		return Options{Scheme: scheme, CRDs: defs}, nil
	}
}

// Start finds or builds the binaries (see Binaries), starts etcd and
// kube-apiserver, installs the CRDs of opts and returns once they are served.
// With Options.ControllerManager it then starts kube-controller-manager
// (see Binaries) and waits until its garbage collector works.
// The caller must call Stop. ctx bounds finding or building the binaries; the
// processes run until Stop.
//
// The API server authorizes with RBAC and enables the admission plugin
// OwnerReferencesPermissionEnforcement besides its default ones: a user
// (see AddUser) may set blockOwnerDeletion on an owner reference only with
// update on the owner's finalizers subresource, for example update on
// "widgets/finalizers" for a Widget owner.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if opts.Nodes < 0 {
		return nil, fmt.Errorf("starting control plane: Options.Nodes is %d, want zero or more", opts.Nodes)
	}
	if opts.ControllerManager && !slices.Contains(controllersOf(opts), GarbageCollectorController) {
		return nil, fmt.Errorf("starting control plane: Options.Controllers lacks %s, which Start waits for", GarbageCollectorController)
	}
	bins, err := binaries(ctx, opts)
	if err != nil {
		return nil, err
	}
	dir := bins.dir
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("starting control plane: %w", err)
	}
	scheme := opts.Scheme
	if scheme == nil {
		scheme = NewScheme()
	}
	startTimeout := cmp.Or(opts.StartTimeout, defaultStartTimeout)

	apiLog, etcdLog := &outputLog{max: 20}, &outputLog{max: 8}
	apiOut, etcdOut := io.Writer(apiLog), io.Writer(etcdLog)
	if opts.Output != nil {
		apiOut, etcdOut = io.MultiWriter(opts.Output, apiLog), io.MultiWriter(opts.Output, etcdLog)
	}
	env, err := newEnv(opts, dir, scheme, startTimeout, apiOut, etcdOut)
	if err != nil {
		return nil, err
	}

	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("starting kube-apiserver and etcd from %s: %w\n\n"+
			"last lines of kube-apiserver's output:\n%s\n\nlast lines of etcd's output:\n%s\n\n"+
			"how to fix: the output above usually says what went wrong; if the processes were only slow "+
			"(a busy machine), raise Options.StartTimeout (now %s); Options.Output receives all of it",
			dir, err, apiLog.tail(), etcdLog.tail(), startTimeout)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("creating client for the control plane: %w", err)
	}
	cp := &ControlPlane{
		Config:    cfg,
		Client:    c,
		Scheme:    scheme,
		BinaryDir: dir,
		CRDs:      env.CRDs,
		env:       env,
		WebhookServer: webhook.Options{
			Host:    env.WebhookInstallOptions.LocalServingHost,
			Port:    env.WebhookInstallOptions.LocalServingPort,
			CertDir: env.WebhookInstallOptions.LocalServingCertDir,
		},
	}
	if err := cp.startProcesses(bins, opts, startTimeout); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	return cp, nil
}

// newEnv returns the envtest environment of a control plane started with
// opts from the binaries in dir.
func newEnv(opts Options, dir string, scheme *runtime.Scheme, startTimeout time.Duration, apiOut, etcdOut io.Writer) (*envtest.Environment, error) {
	env := &envtest.Environment{
		Scheme:                   scheme,
		CRDs:                     opts.CRDs,
		CRDDirectoryPaths:        opts.CRDPaths,
		ErrorIfCRDPathMissing:    true,
		BinaryAssetsDirectory:    dir,
		UseExistingCluster:       ptr.To(false),
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  stopTimeoutOf(opts),
		CRDInstallOptions:        envtest.CRDInstallOptions{MaxTime: startTimeout},
	}
	if err := setWebhooks(&env.WebhookInstallOptions, opts.Webhooks, startTimeout); err != nil {
		return nil, err
	}
	env.ControlPlane.Etcd = &envtest.Etcd{Out: etcdOut, Err: etcdOut}
	api := env.ControlPlane.GetAPIServer()
	api.Out, api.Err = apiOut, apiOut
	api.Configure().Set("enable-admission-plugins", admissionPlugins...)
	api.Configure().Set("service-cluster-ip-range", serviceClusterIPRange)
	flags := make([]string, 0, len(opts.APIServerFlags))
	for name := range opts.APIServerFlags {
		flags = append(flags, name)
	}
	sort.Strings(flags)
	for _, name := range flags {
		api.Configure().Set(name, opts.APIServerFlags[name]...)
	}
	return env, nil
}

// stopTimeoutOf returns how long each process of a control plane started
// with opts may take to stop.
func stopTimeoutOf(opts Options) time.Duration { return cmp.Or(opts.StopTimeout, defaultStopTimeout) }

// Stop stops kwok, kube-scheduler and kube-controller-manager, those that
// run, then kube-apiserver and etcd, and removes their data. It reports an
// error, too, if one of the first three had exited on its own before.
// Calling it again returns the first result.
func (c *ControlPlane) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		for _, p := range slices.Backward(c.procs) {
			if err := p.stop(); err != nil {
				errs = append(errs, err)
			}
		}
		if c.procDir != "" {
			if err := os.RemoveAll(c.procDir); err != nil {
				errs = append(errs, fmt.Errorf("removing the directory of the control plane's processes: %w", err))
			}
		}
		if err := c.env.Stop(); err != nil {
			errs = append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			c.stopErr = fmt.Errorf("stopping control plane: %w", err)
		}
	})
	return c.stopErr
}

// Kubeconfig returns a kubeconfig whose current context connects to the
// control plane as the administrator of Config, for kubectl or any client-go
// program. Credentials are inlined; the file is valid until Stop.
func (c *ControlPlane) Kubeconfig() ([]byte, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[kubeconfigName] = &clientcmdapi.Cluster{
		Server:                   c.Config.Host,
		CertificateAuthorityData: c.Config.CAData,
	}
	kc.AuthInfos[kubeconfigName] = &clientcmdapi.AuthInfo{
		ClientCertificateData: c.Config.CertData,
		ClientKeyData:         c.Config.KeyData,
		Token:                 c.Config.BearerToken,
	}
	kc.Contexts[kubeconfigName] = &clientcmdapi.Context{Cluster: kubeconfigName, AuthInfo: kubeconfigName}
	kc.CurrentContext = kubeconfigName
	b, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("encoding kubeconfig: %w", err)
	}
	return b, nil
}

// WriteKubeconfig writes Kubeconfig to path, readable only by its owner as it
// holds credentials.
func (c *ControlPlane) WriteKubeconfig(path string) error {
	b, err := c.Kubeconfig()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}

// AddUser provisions a user of the control plane with a client certificate
// and returns a rest.Config that connects as that user, in the given groups.
// The API server authorizes with RBAC, so the user may do nothing until a
// role is bound to it: tests use this to run a controller with exactly the
// permissions its RBAC markers grant.
func (c *ControlPlane) AddUser(name string, groups ...string) (*rest.Config, error) {
	u, err := c.env.AddUser(envtest.User{Name: name, Groups: groups}, c.Config)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", name, err)
	}
	return u.Config(), nil
}

// startProcesses starts the processes of bins that opts asks for, as the
// administrator: kube-controller-manager, kube-scheduler and kwok, all at
// once, then makes the simulated nodes and returns once each process works
// (the garbage collector has deleted a probe, a probe pod became Ready), at
// most startTimeout later.
func (c *ControlPlane) startProcesses(bins binaryPaths, opts Options, startTimeout time.Duration) error {
	if !opts.ControllerManager && opts.Nodes == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "bosun-controlplane-")
	if err != nil {
		return fmt.Errorf("starting the control plane's processes: %w", err)
	}
	c.procDir = dir
	kubeconfig := filepath.Join(dir, "kubeconfig")
	caFile := filepath.Join(dir, "ca.crt")
	kwokConfig := filepath.Join(dir, "kwok.yaml")
	if err := c.WriteKubeconfig(kubeconfig); err != nil {
		return fmt.Errorf("starting the control plane's processes: %w", err)
	}
	for path, text := range map[string][]byte{caFile: c.Config.CAData, kwokConfig: []byte(kwokStages)} {
		if err := os.WriteFile(path, text, 0o600); err != nil {
			return fmt.Errorf("starting the control plane's processes: %w", err)
		}
	}
	start := func(name, path string, args []string) (*process, error) {
		p, err := startProcess(name, path, args, opts)
		if err != nil {
			return nil, fmt.Errorf("%w\n\nhow to fix: %s", err, startHint(name, startTimeout))
		}
		c.procs = append(c.procs, p)
		return p, nil
	}
	var kcm, scheduler, kwok *process
	if opts.ControllerManager {
		saKey := filepath.Join(c.env.ControlPlane.APIServer.CertDir, "sa-signer.key")
		if kcm, err = start(controllerManagerBinary, bins.controllerManager, controllerManagerArgs(opts, kubeconfig, saKey, caFile)); err != nil {
			return err
		}
	}
	if opts.Nodes > 0 {
		if scheduler, err = start(schedulerBinary, bins.scheduler, schedulerArgs(kubeconfig)); err != nil {
			return err
		}
		if kwok, err = start(kwokBinary, bins.kwok, kwokArgs(kubeconfig, kwokConfig)); err != nil {
			return err
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if opts.Nodes > 0 {
		if err := startNodes(ctx, c.Client, opts.Nodes, kwok); err != nil {
			return kwok.failed(err, startHint(kwokBinary, startTimeout))
		}
		if err := waitPodsRun(ctx, c.Client, scheduler, kwok); err != nil {
			return kwok.failed(fmt.Errorf("%w\n\nlast lines of %s's output:\n%s", err, schedulerBinary, scheduler.log.tail()),
				startHint(kwokBinary, startTimeout))
		}
	}
	if kcm != nil {
		if err := waitGarbageCollector(ctx, c.Client, kcm); err != nil {
			return kcm.failed(err, startHint(controllerManagerBinary, startTimeout))
		}
		if err := recordControllers(ctx, c.Client, controllersOf(opts)); err != nil {
			return fmt.Errorf("starting %s: %w", controllerManagerBinary, err)
		}
	}
	return nil
}
