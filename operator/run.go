package operator

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/debugpage"
	"github.com/bosunkit/bosun/internal/devhook"
	"github.com/bosunkit/bosun/internal/plan"
	"github.com/bosunkit/bosun/version"
)

// Options describe an operator to Main and Run.
type Options struct {
	// Name names the operator in logs and in the default Lease name.
	// Required.
	Name string
	// AddToScheme adds the operator's API types to the scheme, which
	// already holds the built-in kinds. Required.
	AddToScheme func(*runtime.Scheme) error
	// Setup registers the operator's controllers with the manager.
	// Required.
	Setup func(ctrl.Manager) error
	// CRDs are the operator's CustomResourceDefinitions, which --dev
	// installs. Nil means --dev installs none.
	CRDs func() ([]*apiextensionsv1.CustomResourceDefinition, error)
	// Webhooks, when set, returns the operator's admission webhook
	// configurations (controller-gen's config/webhook manifests, see
	// manifest.DecodeWebhooks), which --dev installs pointing at the
	// operator's webhook server with a certificate it trusts. Setting it
	// also adds the webhook server to /readyz. Register the webhooks
	// themselves in Setup (package webhook).
	Webhooks func() ([]client.Object, error)
	// Prepare, when set, makes what the samples need (a Secret they
	// read, say) in the namespace --dev creates them in, before them.
	Prepare func(ctx context.Context, c client.Client, namespace string) error
	// Samples are objects --dev creates in the namespace it is given once
	// the operator runs. Nil means none.
	Samples func(namespace string) []client.Object
	// Manager, when set, adjusts the manager options the flags chose
	// before the manager is made: a cache's namespaces or a controller
	// setting the flags do not cover. The options it is given already
	// carry the lean cache and, with --tuning, bosun's tuning, in their
	// NewCache and NewClient: to change how the cache or the client is
	// made, wrap the functions it finds there rather than replace them.
	Manager func(*ctrl.Options)
	// Sensitive names, per kind, the fields whose values --plan never
	// prints, besides the data and stringData of Secrets, which it never
	// prints either: for such a field the plan says that it would change,
	// and of a map which keys would be added, changed or removed, with
	// "(sensitive value)" in place of every value, old and new (and in
	// place of the digest package children keeps in an annotation of a
	// child of such a kind). A field is
	// named by its path as the plan prints it, without list indexes: a
	// list on the way stands for each of its elements ("spec.password",
	// "spec.users.password", `metadata.annotations["example.com/token"]`).
	// A kind is matched in every version of its group.
	Sensitive map[schema.GroupKind][]string
	// Config, when set, finds the cluster in place of the --kubeconfig
	// flag, in-cluster configuration or ~/.kube/config: for a binary that
	// parses connection flags of its own (kubectl's, say). --dev ignores
	// it.
	Config func() (*rest.Config, error)
}

func (o Options) validate() error {
	switch {
	case o.Name == "":
		return errors.New("operator: Options.Name is empty")
	case o.AddToScheme == nil:
		return fmt.Errorf("operator %q: Options.AddToScheme is nil", o.Name)
	case o.Setup == nil:
		return fmt.Errorf("operator %q: Options.Setup is nil", o.Name)
	}
	if _, err := plan.NewSensitive(o.Sensitive); err != nil {
		return fmt.Errorf("operator %q: Options.Sensitive: %w", o.Name, err)
	}
	return nil
}

// Main runs the operator as a program: it binds Flags to the command line,
// parses it, runs until SIGTERM or SIGINT (a second signal exits at once,
// stopping the --dev control plane first),
// and exits 0 after a clean stop, 1 after an error and 2 for bad flags.
func Main(opts Options) {
	flags := DefaultFlags()
	flags.Bind(flag.CommandLine)
	flag.Parse()
	ctx, onForce := signalContext()
	if err := run(ctx, opts, flags, os.Stdout, onForce); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, ErrFlags) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// ErrFlags is wrapped by Run's error when the flags cannot work together.
var ErrFlags = errors.New("invalid flags")

// Run runs the operator with flags until ctx ends, then stops it within
// flags.GracefulShutdownTimeout. It connects to the cluster of the
// --kubeconfig flag, in-cluster configuration or ~/.kube/config, unless
// flags.Dev starts an embedded control plane. out receives what --version,
// --role, --dev and --plan print.
func Run(ctx context.Context, opts Options, flags Flags, out io.Writer) error {
	return run(ctx, opts, flags, out, nil)
}

// run is Run; onForce, when set, registers what must still happen when a
// second signal ends the process at once.
func run(ctx context.Context, opts Options, flags Flags, out io.Writer, onForce func(func())) error {
	if err := opts.validate(); err != nil {
		return err
	}
	if flags.Version {
		fmt.Fprint(out, version.Get().Lines())
		return nil
	}
	if flags.Role {
		return printRole(opts, out)
	}
	return runManager(ctx, opts, flags, out, onForce)
}

// runManager is run for an operator that reconciles: it checks the flags,
// sets up logging and tracing, finds the cluster (or starts the --dev
// control plane) and runs the manager, or the plan.
func runManager(ctx context.Context, opts Options, flags Flags, out io.Writer, onForce func(func())) error {
	if err := flags.Validate(); err != nil {
		return fmt.Errorf("operator %q: %w: %w", opts.Name, ErrFlags, err)
	}
	log := zap.New(zap.UseFlagOptions(&flags.Zap)).WithValues("operator", opts.Name)
	ctrl.SetLogger(log)
	stopTracing, err := startTracing(ctx, opts.Name, out)
	if err != nil {
		return fmt.Errorf("operator %q: %w", opts.Name, err)
	}
	defer func() {
		// The spans of the last passes still go out, within a bound.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := stopTracing(sctx); err != nil {
			log.Error(err, "flushing the traces")
		}
	}()

	scheme, err := opts.scheme()
	if err != nil {
		return err
	}

	var cfg *rest.Config
	var dev *devEnv
	if flags.Dev {
		d, err := startDev(ctx, devhook.Start, opts, flags, scheme, out)
		if err != nil {
			return err
		}
		defer d.stop(out)
		if onForce != nil {
			// The control plane's processes run in process groups of
			// their own, which a Ctrl-C does not reach: stop them even
			// when a second Ctrl-C cuts the graceful shutdown short.
			onForce(func() { d.stop(out) })
		}
		dev, cfg = d, d.cp.Config
	} else {
		find := opts.Config
		if find == nil {
			find = ctrl.GetConfig
		}
		c, err := find()
		if err != nil {
			return fmt.Errorf("operator %q: finding the cluster: %w", opts.Name, err)
		}
		cfg = c
	}

	mopts := flags.ManagerOptions(opts.Name)
	if flags.Plan {
		return runPlan(ctx, opts, flags, cfg, scheme, mopts, out)
	}
	if dev != nil {
		// The control plane's configurations call a local server with a
		// certificate of its own.
		mopts.WebhookServer = webhook.NewServer(withTLSOpts(dev.cp.WebhookServer, flags))
	}
	mgr, err := opts.newManager(cfg, scheme, mopts, flags)
	if err != nil {
		return err
	}
	if dev != nil {
		if err := mgr.Add(dev.samplesRunnable(opts, out, mgr)); err != nil {
			return fmt.Errorf("operator %q: %w", opts.Name, err)
		}
	}
	log.Info("starting manager", "version", version.Get().String(), "leaderElection", flags.LeaderElect)
	if err := mgr.Start(ctx); err != nil {
		return fmt.Errorf("operator %q: %w", opts.Name, err)
	}
	log.Info("manager stopped")
	return nil
}

// scheme returns a scheme of the built-in kinds and the operator's own.
func (o Options) scheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("operator %q: adding the built-in kinds to the scheme: %w", o.Name, err)
	}
	if err := o.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("operator %q: adding its kinds to the scheme: %w", o.Name, err)
	}
	return scheme, nil
}

// newManager makes the operator's manager on the cluster of cfg, with the
// options of flags and o.Manager, the debug page when flags ask for it,
// the health and readiness checks, and the operator's controllers.
func (o Options) newManager(cfg *rest.Config, scheme *runtime.Scheme, mopts ctrl.Options, flags Flags) (ctrl.Manager, error) {
	mopts.Scheme = scheme
	if o.Manager != nil {
		o.Manager(&mopts)
	}
	var page *debugpage.Page
	if flags.DebugPage {
		page = debugpage.New(debugpage.Options{})
		if mopts.Metrics.ExtraHandlers == nil {
			mopts.Metrics.ExtraHandlers = map[string]http.Handler{}
		}
		mopts.Metrics.ExtraHandlers[debugpage.Path] = page
	}
	mgr, err := ctrl.NewManager(cfg, mopts)
	if err != nil {
		return nil, fmt.Errorf("operator %q: making the manager: %w", o.Name, err)
	}
	// The manager carries an Observation, which the debug page and any
	// observer the setup adds watch.
	obs := &bosun.Observation{Build: buildOf(version.Get()), AllowMassDeletion: flags.AllowMassDeletion}
	mgr = obs.Attach(mgr)
	if page != nil {
		page.Observe(obs)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, fmt.Errorf("operator %q: %w", o.Name, err)
	}
	if err := mgr.AddReadyzCheck("caches", cachesSynced(mgr)); err != nil {
		return nil, fmt.Errorf("operator %q: %w", o.Name, err)
	}
	if o.Webhooks != nil {
		if err := mgr.AddReadyzCheck("webhooks", mgr.GetWebhookServer().StartedChecker()); err != nil {
			return nil, fmt.Errorf("operator %q: %w", o.Name, err)
		}
	}
	if err := o.Setup(mgr); err != nil {
		return nil, fmt.Errorf("operator %q: setting up its controllers: %w", o.Name, err)
	}
	return mgr, nil
}

// buildOf is the build the reconcilers record on their objects
// (bosun.Observation.Build): the version of the binary's main module, or
// none for a binary that no version names ("(devel)").
func buildOf(info version.Info) string {
	if info.Version == "(devel)" {
		return ""
	}
	return info.Version
}

// signalContext returns a context that ends at the first SIGTERM or
// SIGINT. A second signal runs what was registered with the returned
// function and exits with status 1 at once.
func signalContext() (context.Context, func(func())) {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var last []func()
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-ch
		cancel()
		<-ch
		mu.Lock()
		for _, f := range last {
			f()
		}
		os.Exit(1)
	}()
	return ctx, func(f func()) {
		mu.Lock()
		defer mu.Unlock()
		last = append(last, f)
	}
}

// cacheSyncWait is how long one readiness probe waits for the caches.
const cacheSyncWait = time.Second

// cachesSynced is a readiness check that passes once the manager's caches
// hold every informer's first list.
func cachesSynced(mgr ctrl.Manager) healthz.Checker {
	return func(req *http.Request) error {
		ctx, cancel := context.WithTimeout(req.Context(), cacheSyncWait)
		defer cancel()
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return errors.New("caches have not synced yet")
		}
		return nil
	}
}
