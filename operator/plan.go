package operator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/plan"
)

// planPoll is how often a plan looks whether every object has had its pass.
const planPoll = 100 * time.Millisecond

// planRun is one run of the operator under --plan.
type planRun struct {
	rec *plan.Recorder
	// keys are the objects present when the caches synced, set by wait.
	keys []plan.Key
	// listed is closed once keys is set.
	listed chan struct{}
	// guard makes dry runs of the writes of every other client built
	// from the manager's config.
	guard dryRunGuard
	// migrations are the migrations Setup added (see planManager.Add),
	// which the plan runs once each; failed holds the errors of those
	// that failed, set by wait.
	migrations []migration
	failed     []error
	// edits are the objects of a proposed edit (Flags.PlanEdit), which
	// the plan covers alone.
	edits []plan.Key
}

// migration is a runnable with a round of work of its own to run, as a
// migrate.Migrator has: a storage version migration whose writes belong
// in the plan.
type migration interface {
	manager.Runnable
	Migrate(ctx context.Context) error
}

// runPlan runs the operator of opts under --plan on the cluster of cfg
// and prints the plan to out.
func runPlan(ctx context.Context, opts Options, flags Flags, cfg *rest.Config, scheme *runtime.Scheme, mopts ctrl.Options, out io.Writer) error {
	p, opts := newPlanRun(opts)
	mgr, err := opts.newManager(p.guard.config(cfg), scheme, mopts, flags)
	if err != nil {
		return err
	}
	if flags.PlanEdit != "" {
		if p.edits, err = planEdits(ctx, flags.PlanEdit, cfg, mgr, p.rec); err != nil {
			return fmt.Errorf("operator %q: %w", opts.Name, err)
		}
	}
	return p.run(ctx, opts, mgr, out)
}

// newPlanRun returns a plan and opts changed for it: a client that sends
// every write as a dry run and records it, without the values of the
// fields of opts.Sensitive (checked by Options.validate), a context that
// tells the managed steps to record their external writes, no events, no
// leader election, metrics, probes or webhook server; a rest.Config whose
// every write is a dry run (dryRunGuard), so that a client the operator
// builds of its own changes nothing either; and the whole of each sharded
// kind in the cache (unshard).
func newPlanRun(opts Options) (*planRun, Options) {
	sensitive, _ := plan.NewSensitive(opts.Sensitive)
	p := &planRun{rec: plan.NewRecorder(sensitive), listed: make(chan struct{})}
	adjust := opts.Manager
	opts.Manager = func(o *ctrl.Options) {
		if adjust != nil {
			adjust(o)
		}
		p.managerOptions(o)
	}
	setup := opts.Setup
	opts.Setup = func(mgr ctrl.Manager) error { return setup(planManager{Manager: mgr, plan: p}) }
	return p, opts
}

// managerOptions turns o into the options of a manager that changes
// nothing.
func (p *planRun) managerOptions(o *ctrl.Options) {
	newClient := o.NewClient
	if newClient == nil {
		newClient = client.New
	}
	o.NewClient = func(cfg *rest.Config, co client.Options) (client.Client, error) {
		c, err := newClient(cfg, co)
		if err != nil {
			return nil, err
		}
		live, err := client.New(cfg, client.Options{Scheme: co.Scheme, Mapper: co.Mapper, HTTPClient: co.HTTPClient})
		if err != nil {
			return nil, err
		}
		return p.rec.Client(c, live), nil
	}
	base := o.BaseContext
	o.BaseContext = func() context.Context {
		ctx := context.Background()
		if base != nil {
			ctx = base()
		}
		return plan.Into(ctx, p.rec)
	}
	// Every member's share of a sharded kind: the plan covers them all.
	unshard(&o.Cache)
	o.LeaderElection = false
	o.HealthProbeBindAddress = "0"
	o.Metrics.BindAddress = "0"
	if o.WebhookServer != nil {
		o.WebhookServer = idleWebhooks{o.WebhookServer}
	}
}

// run runs mgr until every object of the operator's kinds present when
// its caches synced has had a pass, or ctx ends, and prints the plan.
func (p *planRun) run(ctx context.Context, opts Options, mgr ctrl.Manager, out io.Writer) error {
	bosun.ObservationOf(mgr).AddObserver(p.rec)
	mctx, stop := context.WithCancel(ctx)
	defer stop()
	var waitErr error
	if err := mgr.Add(manager.RunnableFunc(func(rctx context.Context) error {
		waitErr = p.wait(rctx, mgr)
		stop()
		return nil
	})); err != nil {
		return fmt.Errorf("operator %q: %w", opts.Name, err)
	}
	if err := mgr.Start(mctx); err != nil {
		return fmt.Errorf("operator %q: %w", opts.Name, err)
	}
	select {
	case <-p.listed:
	default:
		return fmt.Errorf("operator %q: --plan: stopped before the caches synced", opts.Name)
	}
	missing, failed := p.rec.Report(out, p.keys)
	p.guard.report(out)
	for _, err := range p.failed {
		fmt.Fprintf(out, "a migration failed: %v\n", err)
	}
	switch {
	case waitErr != nil:
		return fmt.Errorf("operator %q: --plan: %w", opts.Name, waitErr)
	case len(p.failed) > 0:
		return fmt.Errorf("operator %q: --plan: %w", opts.Name, errors.Join(p.failed...))
	case missing > 0:
		return fmt.Errorf("operator %q: --plan: stopped before %d objects had a pass", opts.Name, missing)
	case failed > 0:
		return fmt.Errorf("operator %q: --plan: the passes of %d objects failed", opts.Name, failed)
	}
	return nil
}

// wait lists the objects of the reconcilers' kinds once the caches have
// synced, runs each migration once meanwhile, and waits until each object
// has had a pass or is gone and each migration has ended.
func (p *planRun) wait(ctx context.Context, mgr ctrl.Manager) error {
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return errors.New("the caches did not sync")
	}
	migrated := p.migrate(ctx)
	err := p.waitPasses(ctx, mgr)
	migrated()
	return err
}

// migrate runs the migrations, each once, in the background, and returns
// a function that waits for their end and records their errors.
func (p *planRun) migrate(ctx context.Context) (wait func()) {
	errs := make([]error, len(p.migrations))
	var wg sync.WaitGroup
	for i, m := range p.migrations {
		wg.Go(func() { errs[i] = m.Migrate(ctx) })
	}
	return func() {
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				p.failed = append(p.failed, err)
			}
		}
	}
}

// waitPasses lists the objects of the reconcilers' kinds and waits until
// each has had a pass or is gone.
func (p *planRun) waitPasses(ctx context.Context, mgr ctrl.Manager) error {
	c, scheme := mgr.GetClient(), mgr.GetScheme()
	p.keys = append(p.keys, p.edits...)
	for _, r := range bosun.ObservationOf(mgr).Reconcilers() {
		if len(p.edits) > 0 {
			// The plan of an edit covers the edited objects alone.
			break
		}
		list, err := scheme.New(r.GVK.GroupVersion().WithKind(r.GVK.Kind + "List"))
		if err != nil {
			return fmt.Errorf("listing the objects of %s: %w", r.Name, err)
		}
		if err := c.List(ctx, list.(client.ObjectList)); err != nil {
			return fmt.Errorf("listing the objects of %s: %w", r.Name, err)
		}
		if err := meta.EachListItem(list, func(o runtime.Object) error {
			obj := o.(client.Object)
			p.keys = append(p.keys, plan.Key{Controller: r.Name, Kind: r.GVK.Kind, Object: client.ObjectKeyFromObject(obj)})
			return nil
		}); err != nil {
			return err
		}
	}
	close(p.listed)
	return wait.PollUntilContextCancel(ctx, planPoll, true, func(ctx context.Context) (bool, error) {
		kept := p.keys[:0:0]
		done := true
		for _, k := range p.keys {
			if !p.rec.Passed(k) {
				gone, err := p.gone(ctx, mgr, k)
				if err != nil {
					return false, fmt.Errorf("reading %s %s from the operator's cache: %w", k.Kind, k.Object, err)
				}
				if gone && slices.Contains(p.edits, k) {
					return false, fmt.Errorf("%s %s, which --plan-edit edits, is not among the objects the operator's cache holds (its namespaces and selectors): no pass of it would run", k.Kind, k.Object)
				}
				if gone {
					continue
				}
				done = false
			}
			kept = append(kept, k)
		}
		p.keys = kept
		return done, nil
	})
}

// gone reports whether the object of k has left the cache.
func (p *planRun) gone(ctx context.Context, mgr ctrl.Manager, k plan.Key) (bool, error) {
	for _, r := range bosun.ObservationOf(mgr).Reconcilers() {
		if r.Name != k.Controller {
			continue
		}
		o, err := mgr.GetScheme().New(r.GVK)
		if err != nil {
			return false, err
		}
		err = mgr.GetClient().Get(ctx, k.Object, o.(client.Object))
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	}
	return true, nil
}

// planManager is the manager the operator's Setup sees under --plan: its
// event recorders drop every event, and it keeps the migrations Setup
// adds for the plan to run.
type planManager struct {
	ctrl.Manager
	plan *planRun
}

// Add keeps a migration (a runnable with a Migrate method, as a
// migrate.Migrator) for the plan, which runs it once beside the passes
// and waits for it, so that its writes are in the report; any other
// runnable goes to the manager.
func (m planManager) Add(r manager.Runnable) error {
	if mig, ok := r.(migration); ok {
		m.plan.migrations = append(m.plan.migrations, mig)
		return nil
	}
	return m.Manager.Add(r)
}

// GetCache returns the manager's cache, but that the objects of a
// proposed edit read as edited.
func (m planManager) GetCache() cache.Cache {
	return editedCache{Cache: m.Manager.GetCache(), reader: m.plan.rec.Reader(m.Manager.GetCache(), m.GetScheme())}
}

// editedCache is a cache whose reads overlay the objects of a proposed
// edit (plan.Recorder.Reader); informers and indexes are the cache's.
type editedCache struct {
	cache.Cache
	reader client.Reader
}

func (c editedCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.reader.Get(ctx, key, obj, opts...)
}

func (c editedCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.reader.List(ctx, list, opts...)
}

// GetAPIReader returns the manager's reader, but that the objects of a
// proposed edit read as edited.
func (m planManager) GetAPIReader() client.Reader {
	return m.plan.rec.Reader(m.Manager.GetAPIReader(), m.GetScheme())
}

// Observation keeps the manager's bosun.Observation visible through the
// wrapper.
func (m planManager) Observation() *bosun.Observation { return bosun.ObservationOf(m.Manager) }

// PlanRun marks the manager of a --plan run (see plan.Running).
func (planManager) PlanRun() {}

func (planManager) GetEventRecorder(string) recorder.EventRecorder { return dropEvents{} }

func (planManager) GetEventRecorderFor(string) record.EventRecorder { return &record.FakeRecorder{} }

// dropEvents is an event recorder that records nothing.
type dropEvents struct{}

func (dropEvents) Eventf(_, _ runtime.Object, _, _, _, _ string, _ ...any) {}
func (dropEvents) AnnotatedEventf(_, _ runtime.Object, _ map[string]string, _, _, _, _ string, _ ...any) {
}

// idleWebhooks is a webhook server that takes registrations and serves
// nothing, so that a plan needs no certificate and opens no port.
type idleWebhooks struct{ webhook.Server }

func (idleWebhooks) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}
