package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/bosunkit/bosun/controlplane"
)

// DefaultNamespace is the namespace the demo creates its samples in.
const DefaultNamespace = "bosun-demo"

// DefaultTimeout bounds the wait for every sample to be Ready when the demo
// runs once. The control plane's first build is not counted.
const DefaultTimeout = 2 * time.Minute

// pollInterval is how often the demo reads the samples' status.
const pollInterval = 200 * time.Millisecond

// Options configures Run.
type Options struct {
	// Examples are the operators to run. At least one is required.
	Examples []Example
	// Once makes Run return as soon as every sample is Ready, or with an
	// error after Timeout. Without it Run reports until ctx ends.
	Once bool
	// Timeout bounds the wait for readiness when Once is set.
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// Namespace for the samples. Empty means DefaultNamespace.
	Namespace string
	// Out receives progress and the final table. Nil means os.Stdout.
	Out io.Writer
	// Logger is handed to the manager and the controllers.
	// The zero value discards their logs.
	Logger logr.Logger
	// NoWorkloads starts only kube-apiserver and etcd. By default the
	// control plane also runs kube-controller-manager with its workload
	// controllers and garbage collector, kube-scheduler and WorkloadNodes
	// simulated nodes, so that the examples' Deployments and Jobs run pods.
	NoWorkloads bool
}

// WorkloadNodes is how many simulated nodes Run starts unless
// Options.NoWorkloads is set.
const WorkloadNodes = 2

// Run starts a control plane, runs every example's controllers in one
// manager, creates the samples and reports their progress. It stops the
// manager and the control plane before it returns.
func Run(ctx context.Context, opts Options) (err error) {
	opts = opts.withDefaults()
	if len(opts.Examples) == 0 {
		return errors.New("demo: no examples to run")
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return fmt.Errorf("demo: registering core types: %w", err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	var hooks []client.Object
	for _, ex := range opts.Examples {
		if err := ex.validate(); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		if err := ex.AddToScheme(scheme); err != nil {
			return fmt.Errorf("demo: example %q: registering types: %w", ex.Name, err)
		}
		defs, err := ex.CRDs()
		if err != nil {
			return fmt.Errorf("demo: example %q: loading CRDs: %w", ex.Name, err)
		}
		crds = append(crds, defs...)
		if ex.Webhooks != nil {
			objs, err := ex.Webhooks()
			if err != nil {
				return fmt.Errorf("demo: example %q: loading webhook configurations: %w", ex.Name, err)
			}
			hooks = append(hooks, objs...)
		}
	}

	out := opts.Out
	cpOpts := controlplane.Options{Scheme: scheme, CRDs: crds, Webhooks: hooks, Progress: out}
	what := fmt.Sprintf("kube-apiserver %s, etcd %s", controlplane.KubernetesVersion, controlplane.EtcdVersion)
	if !opts.NoWorkloads {
		cpOpts.ControllerManager, cpOpts.Nodes = true, WorkloadNodes
		what += fmt.Sprintf(", kube-controller-manager, kube-scheduler, %d simulated nodes", WorkloadNodes)
	}
	fmt.Fprintf(out, "starting control plane (%s)\n", what)
	cp, err := controlplane.Start(ctx, cpOpts)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer func() {
		fmt.Fprintln(out, "stopping control plane")
		if stopErr := cp.Stop(); stopErr != nil {
			err = errors.Join(err, fmt.Errorf("demo: stopping control plane: %w", stopErr))
		}
	}()
	fmt.Fprintf(out, "control plane ready at %s, %d CRDs installed\n", cp.Config.Host, len(crds))

	dir, err := os.MkdirTemp("", "bosun-demo-")
	if err != nil {
		return fmt.Errorf("demo: creating a directory for the kubeconfig: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		return fmt.Errorf("demo: %w", err)
	}

	for _, ex := range opts.Examples {
		if ex.Start == nil {
			continue
		}
		stop, startErr := ex.Start(ctx, out)
		if startErr != nil {
			return fmt.Errorf("demo: example %q: starting: %w", ex.Name, startErr)
		}
		defer func() {
			if stopErr := stop(); stopErr != nil {
				err = errors.Join(err, fmt.Errorf("demo: example %q: stopping: %w", ex.Name, stopErr))
			}
		}()
	}

	stopManager, err := startManager(ctx, cp, scheme, opts)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopManager()) }()

	samples, err := createSamples(ctx, cp.Client, opts)
	if err != nil {
		return err
	}

	if err := waitReady(ctx, cp.Client, samples, opts); err != nil {
		return err
	}
	if err := printTable(ctx, cp.Client, samples, opts); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nkubeconfig: %s\n", kubeconfig)
	// Every example kind is in the "bosun" category, so one command lists them all.
	fmt.Fprintf(out, "  kubectl --kubeconfig %s get bosun -n %s\n", kubeconfig, opts.Namespace)
	for _, crd := range crds {
		// The fully qualified resource: plurals such as roles and cronjobs are also built-in kinds.
		fmt.Fprintf(out, "  kubectl --kubeconfig %s get %s.%s -n %s\n", kubeconfig, crd.Spec.Names.Plural, crd.Spec.Group, opts.Namespace)
	}
	if opts.Once {
		fmt.Fprintln(out, "every sample is Ready")
		return nil
	}
	fmt.Fprintln(out, "running; press Ctrl-C to stop")
	watchUntilDone(ctx, cp.Client, samples, opts)
	return nil
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return o
}

// startManager runs one manager with every example's controllers and
// returns a function that stops it and waits for it to end.
func startManager(ctx context.Context, cp *controlplane.ControlPlane, scheme *runtime.Scheme, opts Options) (func() error, error) {
	mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 opts.Logger,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(cp.WebhookServer),
	})
	if err != nil {
		return nil, fmt.Errorf("demo: creating manager: %w", err)
	}
	serving := false
	for _, ex := range opts.Examples {
		if err := ex.Setup(mgr); err != nil {
			return nil, fmt.Errorf("demo: example %q: setting up controllers: %w", ex.Name, err)
		}
		serving = serving || ex.Webhooks != nil
	}
	mgrCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(mgrCtx) }()
	stop := func() error {
		cancel()
		if err := <-done; err != nil {
			return fmt.Errorf("demo: manager: %w", err)
		}
		return nil
	}
	if serving {
		// The samples go through the webhooks: wait until they answer.
		check := mgr.GetWebhookServer().StartedChecker()
		err := wait.PollUntilContextTimeout(mgrCtx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			return check(nil) == nil, nil
		})
		if err != nil {
			return nil, errors.Join(fmt.Errorf("demo: the webhook server did not start: %w", err), stop())
		}
	}
	return stop, nil
}

// sample is one created object and the example it belongs to.
type sample struct {
	example string
	gvk     schema.GroupVersionKind
	key     client.ObjectKey
}

func (s sample) String() string {
	return fmt.Sprintf("%s %s/%s", s.gvk.Kind, s.key.Namespace, s.key.Name)
}

func createSamples(ctx context.Context, c client.Client, opts Options) ([]sample, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: opts.Namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("demo: creating namespace %s: %w", opts.Namespace, err)
	}
	for _, ex := range opts.Examples {
		if ex.Prepare == nil {
			continue
		}
		if err := ex.Prepare(ctx, c, opts.Namespace); err != nil {
			return nil, fmt.Errorf("demo: example %q: preparing samples: %w", ex.Name, err)
		}
	}
	var samples []sample
	for _, ex := range opts.Examples {
		for _, obj := range ex.Samples(opts.Namespace) {
			gvk, err := c.GroupVersionKindFor(obj)
			if err != nil {
				return nil, fmt.Errorf("demo: example %q: sample %s: %w", ex.Name, obj.GetName(), err)
			}
			if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
				return nil, fmt.Errorf("demo: example %q: creating %s %s: %w", ex.Name, gvk.Kind, obj.GetName(), err)
			}
			samples = append(samples, sample{
				example: ex.Name,
				gvk:     gvk,
				key:     client.ObjectKeyFromObject(obj),
			})
		}
	}
	fmt.Fprintf(opts.Out, "created %d samples in namespace %s\n", len(samples), opts.Namespace)
	return samples, nil
}

// readiness is what the demo knows of one sample at one moment.
type readiness struct {
	ready   bool
	summary string
	message string
}

// readinessOf reads the Ready condition of obj. A sample is ready when its
// Ready condition is True and both the condition and status.observedGeneration
// (when present) describe the object's current generation.
func readinessOf(obj *unstructured.Unstructured) readiness {
	gen := obj.GetGeneration()
	if observed, found, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration"); found && observed != gen {
		return readiness{summary: fmt.Sprintf("status describes generation %d, object is at %d", observed, gen)}
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, raw := range conds {
		cond, ok := raw.(map[string]any)
		if !ok || cond["type"] != "Ready" {
			continue
		}
		status, _ := cond["status"].(string)
		reason, _ := cond["reason"].(string)
		message, _ := cond["message"].(string)
		if observed, found, _ := unstructured.NestedInt64(cond, "observedGeneration"); found && observed != gen {
			return readiness{summary: fmt.Sprintf("Ready condition describes generation %d, object is at %d", observed, gen), message: message}
		}
		if status == string(metav1.ConditionTrue) {
			return readiness{ready: true, summary: "Ready", message: message}
		}
		summary := fmt.Sprintf("Ready=%s %s", status, reason)
		if message != "" {
			summary += ": " + message
		}
		return readiness{summary: summary, message: message}
	}
	return readiness{summary: "no Ready condition yet"}
}

func readSample(ctx context.Context, c client.Client, s sample) (readiness, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(s.gvk)
	if err := c.Get(ctx, s.key, u); err != nil {
		if apierrors.IsNotFound(err) {
			return readiness{summary: "not found"}, nil
		}
		return readiness{}, err
	}
	return readinessOf(u), nil
}

// poll reads every sample, prints the ones whose state changed since last,
// and reports whether all are ready.
func poll(ctx context.Context, c client.Client, samples []sample, last map[string]readiness, out io.Writer) (bool, error) {
	all := true
	for _, s := range samples {
		r, err := readSample(ctx, c, s)
		if err != nil {
			return false, fmt.Errorf("demo: reading %s: %w", s, err)
		}
		if prev, seen := last[s.String()]; !seen || prev.summary != r.summary {
			fmt.Fprintf(out, "  [%s] %s: %s\n", s.example, s, r.summary)
			last[s.String()] = r
		}
		all = all && r.ready
	}
	return all, nil
}

func waitReady(ctx context.Context, c client.Client, samples []sample, opts Options) error {
	var cancel context.CancelFunc = func() {}
	if opts.Once {
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
	}
	defer cancel()
	last := map[string]readiness{}
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	for {
		all, err := poll(ctx, c, samples, last, opts.Out)
		if err != nil && ctx.Err() == nil {
			return err
		}
		if all {
			return nil
		}
		select {
		case <-ctx.Done():
			var waiting []string
			for _, s := range samples {
				if r := last[s.String()]; !r.ready {
					waiting = append(waiting, fmt.Sprintf("%s (%s)", s, r.summary))
				}
			}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("demo: not every sample was Ready after %s: %s", opts.Timeout, strings.Join(waiting, "; "))
			}
			return fmt.Errorf("demo: stopped before every sample was Ready: %w", ctx.Err())
		case <-ticker.C:
		}
	}
}

// watchUntilDone keeps reporting state changes until ctx ends.
func watchUntilDone(ctx context.Context, c client.Client, samples []sample, opts Options) {
	last := map[string]readiness{}
	for _, s := range samples {
		if r, err := readSample(ctx, c, s); err == nil {
			last[s.String()] = r
		}
	}
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			_, _ = poll(ctx, c, samples, last, opts.Out)
		}
	}
}

// printTable lists the samples and every object of the examples' child kinds
// in the demo namespace.
func printTable(ctx context.Context, c client.Client, samples []sample, opts Options) error {
	w := tabwriter.NewWriter(opts.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(opts.Out)
	fmt.Fprintln(w, "KIND\tNAME\tREADY\tDETAIL")
	for _, s := range samples {
		r, err := readSample(ctx, c, s)
		if err != nil {
			return fmt.Errorf("demo: reading %s: %w", s, err)
		}
		ready := "False"
		if r.ready {
			ready = "True"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.gvk.Kind, s.key.Name, ready, r.message)
	}
	seen := map[string]bool{}
	for _, ex := range opts.Examples {
		for _, gvk := range ex.Children {
			if seen[gvk.String()] {
				continue
			}
			seen[gvk.String()] = true
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := c.List(ctx, list, client.InNamespace(opts.Namespace)); err != nil {
				return fmt.Errorf("demo: listing %s: %w", gvk.Kind, err)
			}
			items := list.Items
			sort.Slice(items, func(i, j int) bool { return items[i].GetName() < items[j].GetName() })
			for _, item := range items {
				fmt.Fprintf(w, "%s\t%s\t-\t%s\n", gvk.Kind, item.GetName(), ownerOf(&item))
			}
		}
	}
	return w.Flush()
}

func ownerOf(obj client.Object) string {
	for _, ref := range obj.GetOwnerReferences() {
		if ref.Controller != nil && *ref.Controller {
			return fmt.Sprintf("controlled by %s/%s", ref.Kind, ref.Name)
		}
	}
	return ""
}
