package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/config"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/figures"
	"github.com/bosunkit/bosun/shard"
)

// Names of the battery's rows, as its figures name them.
const (
	rowCrashAfter    = "crash after every write"
	rowCrashDuring   = "crash during every write"
	rowCreateWindow  = "crash between external create and recording it"
	rowAPIFaults     = "30% 409 + 5% 500 + 2% lost responses"
	rowStaleReads    = "reads lagging 1/5/50 versions, time travel"
	rowDroppedEvents = "20% dropped events"
	rowScale         = "many objects, 8 workers"
	rowFailover      = "leader killed mid-create, 2 replicas"
	rowQuiescence    = "quiescence with a forced resync"
)

// Operator is what RunBattery needs to know of an operator.
type Operator struct {
	// Name names the operator in the figures ("postgres").
	Name string
	// Setup registers the operator with a manager; see Start. It must pass
	// p.External() to its managed steps, if any.
	Setup func(mgr ctrl.Manager, p *Process) error
	// Object returns the i-th object of a scenario in namespace ns, not
	// yet created. Objects of different i must have different names.
	//
	// The kind may be cluster-scoped, as the battery finds from the API
	// server: its objects must then be named after ns too, since the
	// scenarios of several namespaces run side by side, and the battery
	// labels each ScenarioLabel with ns, by which the processes of the
	// scenario cache it (Options.ClusterScoped), its shard rings assign
	// it, and the battery lists the kind where it would list ns. The
	// operator's children and other objects stay in ns: nothing may be
	// written outside ns but the scenario's own objects.
	Object func(ns string, i int) client.Object
	// Prepare, when set, makes what the objects of a scenario need in ns
	// (a Secret they read, an object they refer to) before they are made.
	Prepare func(ctx context.Context, c client.Client, ns string) error
	// Converged, when set, checks what oracle.CheckReady cannot see: the
	// children and external resources of objs. It runs once every object
	// is Ready for its generation.
	Converged func(ctx context.Context, c client.Client, ns string, objs []client.Object) error
	// Duplicates, when set, counts the objects with more than one of what
	// they should have one of: external resources, children.
	Duplicates func(ctx context.Context, c client.Client, ns string, objs []client.Object) (int, error)
	// Cleaned, when set, checks what is left of deleted objects outside
	// the objects themselves, which RunBattery waits to be gone.
	Cleaned func(ctx context.Context, c client.Client, ns string, objs []client.Object) error
	// Secrets, when set, returns the secret values the operator handled in
	// ns (passwords it generated), which must not show in its log, in
	// Events or in status.
	Secrets func(ctx context.Context, c client.Client, ns string) ([]string, error)
	// Lists are the kinds whose status the secrets check reads.
	Lists []client.ObjectList
	// Manager, when set, adjusts the options of every manager the battery
	// starts for the operator, as the operator's own main does (its cache
	// options, say), before the row's and the feature's adjustments.
	Manager func(*ctrl.Options)
	// External is true when the operator has managed steps: the battery
	// then kills processes in the middle of external creates.
	External bool
	// FailoverAt chooses the write in the middle of which the leader dies
	// in the failover row: by default its first external create when
	// External, its first API write otherwise.
	FailoverAt func(Call) bool
	// Shard, when set, returns the shard rings of the matrix's shard
	// features for the objects in ns (Ring, Object and Key matter; the
	// kit fills in the rest); Setup builds each ring's controller through
	// Shard. Nil means one ring of the kind of Object(ns, 0), by name.
	Shard func(ns string) []shard.Options
	// Change, when set, changes the spec of an object in place (the
	// matrix applies it to every object once they converged): what
	// Converged then sees must follow the new spec, or a change was lost.
	Change func(obj client.Object)
	// Budget is what the operator may spend per object on each operation,
	// which the matrix's fault-free cell checks.
	Budget Budget
	// Bound is how long a scenario may take to converge after its last
	// fault; zero means one minute.
	Bound time.Duration
	// PerObject is the time each object adds to Bound in the rows that
	// make many objects at once; zero means 200ms. An operator whose
	// objects each cost a slow external call needs more.
	PerObject time.Duration
	// Migration, when set, adds the storage migration to the matrix's
	// features: see Migration.
	Migration *Migration
	// Rolling, when set, adds rolling children to the matrix's features:
	// see Rolling.
	Rolling *Rolling
}

// Rolling is an operator's roll-out of a change to its children of one
// kind a few at a time (children.Kind.MaxUnavailable), which the matrix
// runs under every fault as the feature "rolling children": the cell's
// processes are set up by Setup, the spec is changed twice, the second
// time once the first's roll-out took a child down, and from before the
// first change until the objects converged again, every version of the
// children the API server stores is watched. At no moment may more than MaxUnavailable
// children of one object (their controller) be not ready, by Ready; and
// the roll-out must have shown a child not ready at least once, or the
// watch saw nothing to judge.
type Rolling struct {
	// Setup is Operator.Setup with the roll-out on: the kind's
	// MaxUnavailable set to MaxUnavailable.
	Setup func(mgr ctrl.Manager, p *Process) error
	// List is an empty list of the children's kind, such as
	// &appsv1.DeploymentList{}.
	List client.ObjectList
	// MaxUnavailable is the kind's children.Kind.MaxUnavailable in Setup.
	MaxUnavailable int
	// Ready tells whether a version of a child is ready, as the kind's
	// readiness check in Setup does.
	Ready func(obj client.Object) bool
	// Budget is what the operator set up by Setup may spend per object,
	// in place of Operator.Budget: the children of the kind, and the
	// status writes that report the roll-out's progress, cost more.
	Budget Budget
}

// Migration is the storage version migration of an operator's kind of
// several versions, which the matrix runs under every fault as the
// feature "storage migration while the operator writes": every process
// of the cell runs a migrate.Migrator of CRD beside the operator, as the
// operator's leader would; the cell makes the API server store the kind
// at the next version CRD serves (the release that moves the storage
// version), and changes the spec of half the objects once the migration's
// first rewrite is seen, the other half left to the migration alone. The
// objects then must come
// out of the migration and the operator's writes with nothing lost: each
// reads as the kit last wrote it (spec, labels, annotations), the CRD's
// status.storedVersions ends as the new version alone, and the change
// costs at most one write per object more than Budget.Change (the
// migrator's rewrite), and the migration at most three writes of the
// CRD (its progress, the progress's removal and the trim).
type Migration struct {
	// CRD is the name of the CustomResourceDefinition of Operator.Object's
	// kind.
	CRD string
	// ControlPlane starts a control plane of the cell's own, with the CRD
	// and its conversion served, that ends with the test: a cell changes
	// the CRD's storage version and rewrites every object of the kind,
	// which no other test on a shared control plane may see.
	ControlPlane func(t *testing.T) *controlplane.ControlPlane
}

// defaultPerObject is Operator.PerObject when it is zero.
const defaultPerObject = 200 * time.Millisecond

// batterySizes are the sizes of the battery's rows. shortSizes are what
// `make test` runs; fullSizes what `make reliability` runs.
type batterySizes struct {
	// CrashObjects is the number of objects of the crash scenarios, and
	// CrashTrials the most crash points tried (zero: every one).
	CrashObjects, CrashTrials int
	// CreateWindowTrials is the number of crashes in an external create.
	CreateWindowTrials int
	// FaultObjects is the number of objects under API faults.
	FaultObjects int
	// StaleObjects is the number of objects of the stale-read scenario,
	// and StaleLags the lags it runs.
	StaleObjects int
	StaleLags    []int
	// DropObjects is the number of objects under dropped events, Relist
	// how long a dropped event may stay lost before its watch is ended
	// (WatchFaults.Relist).
	DropObjects int
	Relist      time.Duration
	// ScaleObjects is the number of objects of the scale and quiescence
	// rows, and Quiet the quiet period of the latter.
	ScaleObjects int
	Quiet        time.Duration
	// FailoverObjects is the number of objects being created when the
	// leader dies.
	FailoverObjects int
}

// shortSizes keep every row to seconds, so every fault path runs in CI.
var shortSizes = batterySizes{
	CrashObjects: 2, CrashTrials: 4, CreateWindowTrials: 2,
	FaultObjects: 6, StaleObjects: 2, StaleLags: []int{5},
	DropObjects: 4, Relist: 4 * time.Second,
	ScaleObjects: 20, Quiet: 9 * time.Second, FailoverObjects: 2,
}

// fullSizes are the sizes docs/RELIABILITY.md reports.
var fullSizes = batterySizes{
	CrashObjects: 20, CreateWindowTrials: 1000,
	FaultObjects: 100, StaleObjects: 20, StaleLags: []int{1, 5, 50},
	DropObjects: 20, Relist: 30 * time.Second,
	ScaleObjects: 1000, Quiet: 60 * time.Second, FailoverObjects: 10,
}

// RunBattery runs every row of the reliability battery on op, each as a
// subtest in a namespace of its own, and records the figures of each with
// package internal/figures. The sizes are short, each row taking
// seconds, unless BOSUN_BATTERY=full asks for the full sizes that
// docs/RELIABILITY.md reports. A row whose oracle fails fails its
// subtest.
func RunBattery(t *testing.T, cp *controlplane.ControlPlane, op Operator) {
	t.Helper()
	b := newBattery(t, cp, op, figures.Size(shortSizes, fullSizes))
	t.Run("CrashAfterEveryWrite", func(t *testing.T) { b.crash(t, false) })
	t.Run("CrashDuringEveryWrite", func(t *testing.T) { b.crash(t, true) })
	if op.External {
		t.Run("CrashInExternalCreate", b.createWindow)
	}
	t.Run("APIFaults", b.apiFaults)
	t.Run("StaleReads", b.staleReads)
	t.Run("DroppedEvents", b.droppedEvents)
	t.Run("ScaleAndQuiescence", b.scale)
	t.Run("LeaderFailover", b.failover)
	t.Run("Matrix", b.matrix)
}

// battery runs the rows for one operator.
type battery struct {
	cp    *controlplane.ControlPlane
	op    Operator
	sizes batterySizes
	// scoped is an object of the operator's kind when the kind is
	// cluster-scoped, nil when it is namespaced; scopedResource is then
	// the kind's resource, as the calls of processes name it.
	scoped         client.Object
	scopedResource schema.GroupResource
}

// newBattery returns the battery of op on cp at sizes, with the scope of
// op's kind read from the API server.
func newBattery(t *testing.T, cp *controlplane.ControlPlane, op Operator, sizes batterySizes) *battery {
	t.Helper()
	b := &battery{cp: cp, op: op, sizes: sizes}
	probe := op.Object("faults-probe", 0)
	namespaced, err := cp.Client.IsObjectNamespaced(probe)
	if err != nil {
		t.Fatalf("faults: the scope of %T: %v", probe, err)
	}
	if namespaced {
		return b
	}
	if other := op.Object("faults-other", 0); other.GetName() == probe.GetName() {
		t.Fatalf("faults: Operator.Object names the objects of the cluster-scoped %T alike in every namespace (%q): name them after the namespace, since scenarios run side by side", probe, probe.GetName())
	}
	gvk, err := apiutil.GVKForObject(probe, cp.Scheme)
	if err != nil {
		t.Fatalf("faults: the kind of %T: %v", probe, err)
	}
	mapping, err := cp.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("faults: the resource of %s: %v", gvk.Kind, err)
	}
	b.scoped, b.scopedResource = probe, mapping.Resource.GroupResource()
	return b
}

// clusterScoped returns the kinds of Options.ClusterScoped of the
// battery's processes: the operator's kind when it is cluster-scoped.
func (b *battery) clusterScoped() []client.Object {
	if b.scoped == nil {
		return nil
	}
	return []client.Object{b.scoped}
}

// object returns the i-th object of a scenario in ns, labelled
// ScenarioLabel when its kind is cluster-scoped.
func (b *battery) object(ns string, i int) client.Object {
	o := b.op.Object(ns, i)
	if b.scoped != nil {
		l := o.GetLabels()
		if l == nil {
			l = map[string]string{}
		}
		l[ScenarioLabel] = ns
		o.SetLabels(l)
	}
	return o
}

// scenarioOf returns the namespace of the scenario of o, an object the
// battery made: its namespace, or, of a cluster-scoped kind, its
// ScenarioLabel.
func scenarioOf(o client.Object) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns
	}
	return o.GetLabels()[ScenarioLabel]
}

// options returns opts for a process of the operator: the battery's
// cluster-scoped kinds, and Operator.Manager before opts.Manager.
func (b *battery) options(opts Options) Options {
	opts.ClusterScoped = b.clusterScoped()
	opts.Manager = b.manager(opts.Manager)
	return opts
}

// manager returns Operator.Manager followed by then, either of which may
// be nil.
func (b *battery) manager(then func(*ctrl.Options)) func(*ctrl.Options) {
	first := b.op.Manager
	switch {
	case first == nil:
		return then
	case then == nil:
		return first
	}
	return func(o *ctrl.Options) {
		first(o)
		then(o)
	}
}

// inScenario returns the options that list the objects of kind gvk of the
// scenario of ns: those in ns, or, for a cluster-scoped kind, those
// labelled ScenarioLabel with ns.
func (b *battery) inScenario(gvk schema.GroupVersionKind, ns string) ([]client.ListOption, error) {
	mapping, err := b.cp.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("the scope of %s: %w", gvk.Kind, err)
	}
	if mapping.Scope.Name() == meta.RESTScopeNameRoot {
		return []client.ListOption{client.MatchingLabels{ScenarioLabel: ns}}, nil
	}
	return []client.ListOption{client.InNamespace(ns)}, nil
}

// scenarioObject reports whether call wrote one of the scenario's own
// objects of a cluster-scoped kind, named in names (or a subresource of
// one).
func (b *battery) scenarioObject(call Call, names map[string]bool) bool {
	resource, _, _ := strings.Cut(call.Resource, "/")
	return b.scoped != nil && call.Namespace == "" && call.Group == b.scopedResource.Group &&
		resource == b.scopedResource.Resource && names[call.Name]
}

// bound is the operator's convergence bound.
func (b *battery) bound() time.Duration {
	if b.op.Bound > 0 {
		return b.op.Bound
	}
	return defaultBound
}

// perObject is the operator's PerObject or defaultPerObject.
func (b *battery) perObject() time.Duration {
	if b.op.PerObject > 0 {
		return b.op.PerObject
	}
	return defaultPerObject
}

// record reports figures of a row.
func (b *battery) record(t *testing.T, row string, kv ...string) {
	t.Helper()
	for i := 0; i+2 < len(kv); i += 3 {
		figures.Record(t, figures.Figure{Test: row, Example: b.op.Name, Name: kv[i], Value: kv[i+1], Goal: kv[i+2]})
	}
}

// create makes n objects of the operator in ns, each passed to the
// tweaks first.
func (b *battery) create(ctx context.Context, c client.Client, ns string, n int, tweaks ...func(client.Object)) ([]client.Object, error) {
	if b.op.Prepare != nil {
		if err := b.op.Prepare(ctx, c, ns); err != nil {
			return nil, fmt.Errorf("preparing namespace %s: %w", ns, err)
		}
	}
	objs := make([]client.Object, 0, n)
	for i := range n {
		o := b.object(ns, i)
		for _, tweak := range tweaks {
			tweak(o)
		}
		if err := c.Create(ctx, o); err != nil {
			return nil, fmt.Errorf("creating %s: %w", o.GetName(), err)
		}
		objs = append(objs, o)
	}
	return objs, nil
}

// converged checks that every object is Ready for its generation and
// passes the operator's own check.
func (b *battery) converged(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	var errs []error
	for _, o := range objs {
		cur, ok := o.DeepCopyObject().(client.Object)
		if !ok {
			return fmt.Errorf("%T is not an object", o)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
			errs = append(errs, err)
			continue
		}
		if o.GetUID() != "" && cur.GetUID() != o.GetUID() {
			errs = append(errs, fmt.Errorf("%s was made again (UID %s, want %s)", o.GetName(), cur.GetUID(), o.GetUID()))
			continue
		}
		if err := oracle.CheckReady(cur); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.GetName(), err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if b.op.Converged != nil {
		return b.op.Converged(ctx, c, ns, objs)
	}
	return nil
}

// cleaned checks that the objects are gone with what they had.
func (b *battery) cleaned(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	var errs []error
	for _, o := range objs {
		cur, _ := o.DeepCopyObject().(client.Object)
		err := c.Get(ctx, client.ObjectKeyFromObject(o), cur)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			errs = append(errs, err)
		case o.GetUID() == "" || cur.GetUID() == o.GetUID():
			errs = append(errs, fmt.Errorf("%s still there (finalizers %v)", o.GetName(), cur.GetFinalizers()))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if b.op.Cleaned != nil {
		return b.op.Cleaned(ctx, c, ns, objs)
	}
	return nil
}

// duplicates counts duplicates with the operator's function, if any.
func (b *battery) duplicates(ctx context.Context, c client.Client, ns string, objs []client.Object) (int, error) {
	if b.op.Duplicates == nil {
		return 0, nil
	}
	return b.op.Duplicates(ctx, c, ns, objs)
}

// scenario is the crash scenario of n objects.
func (b *battery) scenario(n int, manager func(*ctrl.Options)) Scenario {
	return Scenario{
		Setup: b.op.Setup,
		Create: func(ctx context.Context, c client.Client, ns string) ([]client.Object, error) {
			return b.create(ctx, c, ns, n)
		},
		Converged: b.converged,
		Duplicates: func(ctx context.Context, c client.Client, ns string, objs []client.Object) (int, error) {
			return b.duplicates(ctx, c, ns, objs)
		},
		Cleaned:       b.cleaned,
		Bound:         b.bound(),
		Manager:       b.manager(manager),
		ClusterScoped: b.clusterScoped(),
	}
}

// crash is the row "crash after (during) every write".
func (b *battery) crash(t *testing.T, during bool) {
	n := b.sizes.CrashObjects
	opts := CrashOptions{During: during, Limit: b.sizes.CrashTrials}
	r := CrashEveryWrite(t, b.cp, b.scenario(n, nil), opts)
	row := rowCrashAfter
	if during {
		row = rowCrashDuring
	}
	b.record(t, row,
		"objects", strconv.Itoa(n), "",
		"write points", strconv.Itoa(r.Points), "",
		"crash points tried", strconv.Itoa(r.Crashed), "",
		"converged", fmt.Sprintf("%d/%d", r.Converged, r.Crashed), "all",
		"leaks", strconv.Itoa(r.Leaks), "0",
		"duplicates", strconv.Itoa(r.Duplicates), "0")
	if r.Crashed == 0 && r.Points > 0 {
		t.Errorf("no trial reached its crash point (%d writes in the fault-free run)", r.Points)
	}
}

// isExternalCreate matches the external creates.
func isExternalCreate(c Call) bool { return c.External && c.Verb == "create" }

// createWindow is the row "crash between external create and recording
// it": one object, the process killed during its external create (the
// resource made, the answer lost), again and again.
func (b *battery) createWindow(t *testing.T) {
	trials := b.sizes.CreateWindowTrials
	opts := CrashOptions{During: true, Match: isExternalCreate}
	var (
		mu     sync.Mutex
		report CrashReport
	)
	t.Run("trials", func(t *testing.T) {
		for i := range trials {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				r := runTrial(t, b.cp, b.scenario(1, nil), 1, opts)
				mu.Lock()
				defer mu.Unlock()
				report.Trials++
				report.add(r)
				switch {
				case !r.crashed:
					t.Errorf("the process made no external create")
				case r.failure != "":
					t.Errorf("crash during the external create: %s", r.failure)
				}
			})
		}
	})
	b.record(t, rowCreateWindow,
		"trials", strconv.Itoa(report.Crashed), "",
		"adopted and converged", fmt.Sprintf("%d/%d", report.Converged, report.Crashed), "all",
		"duplicates", strconv.Itoa(report.Duplicates), "0")
}

// timed runs n objects under plan to convergence and returns how long it
// took, the process, and its log. The objects are deleted and cleaned up
// before it returns.
func (b *battery) timed(t *testing.T, n int, plan Plan, logs *bosuntest.LogRecorder, manager func(*ctrl.Options)) (time.Duration, *Process, []client.Object) {
	t.Helper()
	ctx := t.Context()
	ns := bosuntest.Namespace(t, b.cp.Client)
	p := Start(t, b.cp, b.options(Options{Name: b.op.Name, Namespace: ns, Plan: plan, Logs: logs, Manager: manager}), b.op.Setup)
	start := time.Now()
	objs, err := b.create(ctx, b.cp.Client, ns, n)
	if err != nil {
		t.Fatal(err)
	}
	bound := b.bound() + time.Duration(n)*b.perObject()
	if err := poll(ctx, bound, func(ctx context.Context) error { return b.converged(ctx, b.cp.Client, ns, objs) }); err != nil {
		t.Fatalf("%d objects not converged within %s: %v", n, bound, err)
	}
	return time.Since(start), p, objs
}

// cleanup deletes objs and waits until they are cleaned up, by an
// operator that must still be running. The bound allows the garbage
// collector a quarter second per object for their children: with a
// thousand objects it, not the operator, takes the time.
func (b *battery) cleanup(t *testing.T, ns string, objs []client.Object) {
	t.Helper()
	ctx := t.Context()
	if err := deleteAll(ctx, b.cp.Client, objs); err != nil {
		t.Fatal(err)
	}
	bound := b.bound() + time.Duration(len(objs))*250*time.Millisecond
	if err := poll(ctx, bound, func(ctx context.Context) error { return b.cleaned(ctx, b.cp.Client, ns, objs) }); err != nil {
		t.Errorf("not cleaned up within %s: %v", bound, err)
	}
}

// apiFaults is the row "30% 409 + 5% 500 + 2% lost responses".
func (b *battery) apiFaults(t *testing.T) {
	n := b.sizes.FaultObjects
	clean, p0, objs0 := b.timed(t, n, Plan{}, nil, nil)
	b.cleanup(t, scenarioOf(objs0[0]), objs0)
	p0.Stop()

	logs := &bosuntest.LogRecorder{MaxLevel: bosuntest.LogVerbosity}
	plan := Plan{Seed: 1, Rules: []Rule{
		{Fault: Conflict, Rate: 0.30},
		{Fault: InternalError, Rate: 0.05},
		{Fault: ResponseLost, Rate: 0.02},
	}}
	faulty, p, objs := b.timed(t, n, plan, logs, nil)
	ns := scenarioOf(objs[0])
	dups, err := b.duplicates(t.Context(), b.cp.Client, ns, objs)
	if err != nil {
		t.Fatal(err)
	}
	conflictLogs := 0
	if err := oracle.NoConflictErrors(logs.Entries()); err != nil {
		conflictLogs = countConflictErrors(logs.Entries())
		t.Errorf("conflicts logged as errors: %v", err)
	}
	if b.op.Secrets != nil {
		b.checkSecrets(t, ns, logs)
	}
	stats := p.Stats()
	b.cleanup(t, ns, objs)
	p.Stop()
	if dups > 0 {
		t.Errorf("%d objects with duplicates", dups)
	}
	b.record(t, rowAPIFaults,
		"objects", strconv.Itoa(n), "",
		"faults injected", fmt.Sprintf("%d conflicts, %d errors, %d lost", stats.Faults[Conflict], stats.Faults[InternalError], stats.Faults[ResponseLost]), "",
		"time against fault-free", fmt.Sprintf("%.2fx (%s vs %s)", faulty.Seconds()/clean.Seconds(), faulty.Round(time.Millisecond), clean.Round(time.Millisecond)), "",
		"duplicates", strconv.Itoa(dups), "0",
		"409 error logs", strconv.Itoa(conflictLogs), "0")
}

// countConflictErrors counts the error lines that oracle.NoConflictErrors
// objects to.
func countConflictErrors(entries []bosuntest.LogEntry) int {
	n := 0
	for _, e := range entries {
		if oracle.NoConflictErrors([]bosuntest.LogEntry{e}) != nil {
			n++
		}
	}
	return n
}

// checkSecrets looks for the operator's secrets where they must not be.
func (b *battery) checkSecrets(t *testing.T, ns string, logs *bosuntest.LogRecorder) {
	t.Helper()
	secrets, err := b.op.Secrets(t.Context(), b.cp.Client, ns)
	if err != nil {
		t.Fatalf("reading the operator's secrets: %v", err)
	}
	if len(secrets) == 0 {
		t.Fatal("the operator handled no secret in the scenario: nothing to look for")
	}
	if err := oracle.NoSecrets(t.Context(), b.cp.Client, secrets, oracle.Scope{Logs: logs.Entries(), Namespaces: []string{ns}, Lists: b.op.Lists}); err != nil {
		t.Error(err)
	}
}

// staleReads is the row "reads lagging 1/5/50 versions, time travel": the
// objects converge, half of them are deleted and made again under their
// names at once, all converge again, and no delete may have removed
// anything of an object that lives.
func (b *battery) staleReads(t *testing.T) {
	for _, lag := range b.sizes.StaleLags {
		t.Run("lag="+strconv.Itoa(lag), func(t *testing.T) {
			ctx := t.Context()
			n := b.sizes.StaleObjects
			plan := Plan{Stale: StaleReads{Lag: lag, MaxAge: 3 * time.Second}}
			_, p, objs := b.timed(t, n, plan, nil, nil)
			ns := scenarioOf(objs[0])
			half := objs[:max(1, n/2)]
			if err := deleteAll(ctx, b.cp.Client, half); err != nil {
				t.Fatal(err)
			}
			if err := poll(ctx, b.bound(), func(ctx context.Context) error { return b.cleaned(ctx, b.cp.Client, ns, half) }); err != nil {
				t.Fatalf("not cleaned up: %v", err)
			}
			recreated := time.Now()
			for i := range half {
				o := b.object(ns, i)
				if err := b.cp.Client.Create(ctx, o); err != nil {
					t.Fatal(err)
				}
				objs[i] = o
			}
			if err := poll(ctx, b.bound(), func(ctx context.Context) error { return b.converged(ctx, b.cp.Client, ns, objs) }); err != nil {
				t.Fatalf("not converged after the objects were made again: %v", err)
			}
			// Let the lag run out and look again.
			if err := poll(ctx, b.bound(), func(ctx context.Context) error {
				if idle := time.Since(lastCall(p)); idle < 2*plan.Stale.maxAge() {
					return fmt.Errorf("the operator wrote %s ago", idle.Round(time.Millisecond))
				}
				return b.converged(ctx, b.cp.Client, ns, objs)
			}); err != nil {
				t.Fatalf("not converged once the lag ran out: %v", err)
			}
			wrong := wrongDeletes(p.Calls(), objs, recreated)
			for _, c := range wrong {
				t.Errorf("deleted something of a live object: %s", c)
			}
			stats := p.Stats()
			b.cleanup(t, ns, objs)
			p.Stop()
			b.record(t, rowStaleReads,
				fmt.Sprintf("lag %d: stale reads", lag), strconv.Itoa(stats.StaleReads), "",
				fmt.Sprintf("lag %d: wrong-object deletes", lag), strconv.Itoa(len(wrong)), "0")
		})
	}
}

// lastCall is when p last made a call.
func lastCall(p *Process) time.Time {
	calls := p.Calls()
	if len(calls) == 0 {
		return time.Time{}
	}
	return calls[len(calls)-1].At
}

// wrongDeletes returns the deletes that removed a live object or something
// of one: an API delete of a live object or of an object it owns, or an
// external delete for a live object made after the objects were made
// again.
func wrongDeletes(calls []Call, live []client.Object, since time.Time) []Call {
	uids := map[types.UID]bool{}
	for _, o := range live {
		uids[o.GetUID()] = true
	}
	var out []Call
	for _, c := range calls {
		if !c.TookEffect() {
			continue
		}
		switch {
		case c.External && c.Verb == "delete" && uids[c.UID] && c.At.After(since):
			out = append(out, c)
		case !c.External && c.Verb == verbDelete:
			if uids[c.UID] {
				out = append(out, c)
				continue
			}
			for _, o := range c.Owners {
				if uids[o] {
					out = append(out, c)
					break
				}
			}
		}
	}
	return out
}

// droppedEvents is the row "20% dropped events": the objects must converge
// within the relist period plus 30 seconds.
func (b *battery) droppedEvents(t *testing.T) {
	n := b.sizes.DropObjects
	relist := b.sizes.Relist
	plan := Plan{Seed: 2, Watch: WatchFaults{Drop: 0.2, Relist: relist}}
	ctx := t.Context()
	ns := bosuntest.Namespace(t, b.cp.Client)
	p := Start(t, b.cp, b.options(Options{Name: b.op.Name, Namespace: ns, Plan: plan}), b.op.Setup)
	start := time.Now()
	objs, err := b.create(ctx, b.cp.Client, ns, n)
	if err != nil {
		t.Fatal(err)
	}
	bound := relist + 30*time.Second
	err = poll(ctx, bound, func(ctx context.Context) error { return b.converged(ctx, b.cp.Client, ns, objs) })
	took := time.Since(start)
	stats := p.Stats()
	if err != nil {
		t.Errorf("not converged within the relist period + 30s (%s): %v", bound, err)
	}
	b.cleanup(t, ns, objs)
	p.Stop()
	b.record(t, rowDroppedEvents,
		"objects", strconv.Itoa(n), "",
		"events dropped", strconv.Itoa(stats.Dropped), "",
		"converged in", took.Round(time.Millisecond).String(), "< "+bound.String())
}

// scale is the rows "many objects, 8 workers" and "quiescence with a
// forced resync".
func (b *battery) scale(t *testing.T) {
	n := b.sizes.ScaleObjects
	// The informers' resync hands every object to the controller again
	// (at least twice in the quiet period), which must write nothing.
	sync := b.sizes.Quiet / 3
	took, p, objs := b.timed(t, n, Plan{}, nil, func(o *ctrl.Options) {
		o.Controller = config.Controller{SkipNameValidation: o.Controller.SkipNameValidation, MaxConcurrentReconciles: 8}
		o.Cache.SyncPeriod = &sync
	})
	ns := scenarioOf(objs[0])
	dups, err := b.duplicates(t.Context(), b.cp.Client, ns, objs)
	if err != nil {
		t.Fatal(err)
	}
	if dups > 0 {
		t.Errorf("%d objects with duplicates", dups)
	}
	writes, qerr := oracle.Quiet(t.Context(), p, b.sizes.Quiet)
	if qerr != nil {
		t.Errorf("writes once converged: %v", qerr)
	}
	b.cleanup(t, ns, objs)
	p.Stop()
	b.record(t, rowScale,
		"objects", strconv.Itoa(n), "",
		"converged in", took.Round(time.Millisecond).String(), "",
		"duplicates", strconv.Itoa(dups), "0")
	b.record(t, rowQuiescence,
		"objects", strconv.Itoa(n), "",
		"quiet period", b.sizes.Quiet.String(), "",
		"resync period", sync.String(), "",
		"writes", strconv.Itoa(len(writes)), "0")
}

// failover is the row "leader killed mid-create, 2 replicas".
func (b *battery) failover(t *testing.T) {
	ctx := t.Context()
	n := b.sizes.FailoverObjects
	ns := bosuntest.Namespace(t, b.cp.Client)
	le := &LeaderElection{ID: b.op.Name + "-battery", Namespace: ns}
	match := b.op.FailoverAt
	switch {
	case match != nil:
	case b.op.External:
		match = isExternalCreate
	default:
		match = func(c Call) bool { return !c.External }
	}
	leader := Start(t, b.cp, b.options(Options{Name: "replica-a", Namespace: ns, LeaderElection: le,
		Plan: Plan{Crash: CrashPoint{After: 1, During: true, Match: match}}}), b.op.Setup)
	if err := waitChan(ctx, leader.Elected(), b.bound()); err != nil {
		t.Fatalf("replica-a was not elected: %v", err)
	}
	other := Start(t, b.cp, b.options(Options{Name: "replica-b", Namespace: ns, LeaderElection: le}), b.op.Setup)
	objs, err := b.create(ctx, b.cp.Client, ns, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := waitChan(ctx, leader.Crashed(), b.bound()); err != nil {
		t.Fatalf("the leader made no create to die in: %v", err)
	}
	if err := waitChan(ctx, other.Elected(), b.bound()); err != nil {
		t.Fatalf("replica-b did not take over: %v", err)
	}
	takeover := time.Since(leader.CrashedAt())
	if err := poll(ctx, b.bound(), func(ctx context.Context) error { return b.converged(ctx, b.cp.Client, ns, objs) }); err != nil {
		t.Fatalf("not converged after the takeover: %v", err)
	}
	dups, err := b.duplicates(ctx, b.cp.Client, ns, objs)
	if err != nil {
		t.Fatal(err)
	}
	if dups > 0 {
		t.Errorf("%d objects with duplicates after the takeover", dups)
	}
	other.Stop()
	// A fresh replica cleans up (replica-b has stopped; its lease expires).
	cleaner := Start(t, b.cp, b.options(Options{Name: "cleaner", Namespace: ns}), b.op.Setup)
	b.cleanup(t, ns, objs)
	cleaner.Stop()
	b.record(t, rowFailover,
		"duplicate creates", strconv.Itoa(dups), "0",
		"takeover", takeover.Round(time.Millisecond).String(), "",
		"lease duration", defaultLeaseDuration.String(), "")
}

// waitChan waits for ch to close, for at most d.
func waitChan(ctx context.Context, ch <-chan struct{}, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// matrix runs the matrix of features and faults on the battery's
// operator, each cell a subtest "<feature>/<fault>".
func (b *battery) matrix(t *testing.T) {
	sizes := figures.Size(shortMatrix, fullMatrix)
	baseline := map[feature]time.Duration{}
	for _, c := range sizes.cells(b.op.Name) {
		f, x := features[c[0]], matrixFaults[c[1]]
		if x == slowExternal && !b.op.External || f == migrated && b.op.Migration == nil || f == rolled && b.op.Rolling == nil {
			continue
		}
		t.Run(string(f)+"/"+string(x), func(t *testing.T) {
			r := b.runCell(t, sizes, f, x)
			if x == noFault {
				baseline[f] = r.took
			}
			b.recordCell(t, sizes, f, x, r, baseline[f])
		})
	}
}

// recordCell records the figures of a cell.
func (b *battery) recordCell(t *testing.T, sizes matrixSizes, f feature, x matrixFault, r cellResult, base time.Duration) {
	kv := []string{
		"objects", strconv.Itoa(sizes.Objects), "",
		"faults injected", r.injected, "",
		"oracles passed", strconv.Itoa(r.oracles), "",
	}
	if x != noFault && base > 0 {
		kv = append(kv, "time against fault-free", fmt.Sprintf("%.2fx (%s)", r.took.Seconds()/base.Seconds(), r.took.Round(time.Millisecond)), "")
	} else {
		kv = append(kv, "time", r.took.Round(time.Millisecond).String(), "")
	}
	for _, op := range []string{"create", "change", "delete"} {
		if c, ok := r.costs[op]; ok {
			kv = append(kv, op+" per object", perObject(c, sizes.Objects), b.budgetIn(f, op).String())
		}
	}
	if r.costs != nil {
		kv = append(kv, "idle", r.costs["idle"].String(), Cost{}.String())
		kv = append(kv, "polls per object per period", fmt.Sprintf("%.1f", r.reads), strconv.Itoa(b.op.Budget.Poll))
	}
	kv = append(kv, r.extra...)
	b.record(t, rowMatrix+": "+string(f)+" x "+string(x), kv...)
}

// budgetIn returns the operator's budget of an operation in a cell of
// feature f: under rolled, Rolling.Budget's; under formerFinalizer, a
// creation may cost one write more,
// in which a release without a finalizer of its own drops the earlier
// release's (one with a finalizer replaces it in the claim's write);
// under migrated, a change may cost one write more, the migrator's
// rewrite of the object at the new storage version (its writes of the
// CRD are checked apart, by storageMove.check).
func (b *battery) budgetIn(f feature, op string) Cost {
	c := b.op.Budget.of(op)
	if f == rolled {
		c = b.op.Rolling.Budget.of(op)
	}
	if f == formerFinalizer && op == "create" || f == migrated && op == "change" {
		c.Writes++
	}
	return c
}

// of returns the budget of an operation: "create", "change" or "delete".
func (b Budget) of(op string) Cost {
	switch op {
	case "create":
		return b.Create
	case "change":
		return b.Change
	default:
		return b.Delete
	}
}

// runCell runs one cell and checks every promise.
func (b *battery) runCell(t *testing.T, sizes matrixSizes, f feature, x matrixFault) cellResult {
	ctx := t.Context()
	if f == migrated {
		own := *b
		own.cp = b.op.Migration.ControlPlane(t)
		b = &own
	}
	c := &cell{b: b, t: t, sizes: sizes, f: f, x: x,
		ns:      bosuntest.Namespace(t, b.cp.Client),
		logs:    &bosuntest.LogRecorder{MaxLevel: bosuntest.LogVerbosity},
		version: "v1", versions: map[string]string{}}
	if f == tracingOn {
		c.spans = traceFor(t)
	}
	c.crashPending = x == crashMidWrite
	if f == kstatusOn {
		kept, err := b.keepsObservedGeneration(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !kept {
			t.Skipf("%s: the kind's status has no observedGeneration, which the kstatus conditions need (bosun.Options.KStatus): without it kstatus calls an object whose spec changed Current until the operator writes its status", f)
		}
	}
	bystander := c.bystander(ctx)
	c.startReplicas()
	if (f == kstatusOn || f == planned || f == formerFinalizer || x == blockedCleanup || x == massHeld) && !c.configured() {
		t.Skipf("%s: the operator's Setup does not pass its reconcilers' options to Process.Configure (no bosun reconciler)", f)
	}
	var kw *kstatusWatch
	if f == kstatusOn {
		kw = c.watchKStatus()
	}
	// The fault-free cell of one replica checks every budget; a slow
	// external system must not make an operator repeat its external
	// changes either, so its cells check their budgets of external calls.
	measure := ((f == oneReplica || f == formerFinalizer || f == migrated || f == rolled) && x == noFault) || x == slowExternal
	if measure {
		c.result.costs = map[string]Cost{}
	}
	start := time.Now()
	objs := c.createAll(measure)
	c.changeAll(objs, measure)
	c.result.took = time.Since(start)
	if f == canaryRollout {
		c.waitOnVersion("v2")
		c.abortCanary(objs)
	}
	c.checkSettled(ctx, objs)
	if f == threeShards {
		c.leave()
	}
	switch x {
	case blockedCleanup:
		c.blockedDelete(objs)
	case massHeld:
		c.heldDelete(objs)
	default:
		c.deleteAll(objs, measure)
	}
	if kw != nil {
		versions, err := kw.check()
		if err != nil {
			t.Error(err)
		}
		c.result.extra = append(c.result.extra, "versions judged by kstatus", strconv.Itoa(versions), "")
		c.result.oracles++
	}
	c.checkBystander(ctx, bystander)
	c.result.injected = c.injected()
	return c.result
}

// change applies the operator's spec change to every object, retrying on
// conflicts.
func (b *battery) change(ctx context.Context, objs []client.Object) error {
	if b.op.Change == nil {
		return nil
	}
	for i, o := range objs {
		for attempt := 0; ; attempt++ {
			cur, _ := o.DeepCopyObject().(client.Object)
			if err := b.cp.Client.Get(ctx, client.ObjectKeyFromObject(o), cur); err != nil {
				return fmt.Errorf("reading %s: %w", o.GetName(), err)
			}
			b.op.Change(cur)
			err := b.cp.Client.Update(ctx, cur)
			if err == nil {
				objs[i] = cur
				break
			}
			if attempt > 10 || !apierrors.IsConflict(err) {
				return fmt.Errorf("changing %s: %w", o.GetName(), err)
			}
		}
	}
	return nil
}

// kinds returns the kinds of the operator's objects: those of
// Operator.Lists, or the kind of its first object.
func (b *battery) kinds(ns string) ([]schema.GroupVersionKind, error) {
	var out []schema.GroupVersionKind
	for _, l := range b.op.Lists {
		gvk, err := apiutil.GVKForObject(l, b.cp.Scheme)
		if err != nil {
			return nil, err
		}
		out = append(out, gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List")))
	}
	if len(out) > 0 {
		return out, nil
	}
	gvk, err := apiutil.GVKForObject(b.op.Object(ns, 0), b.cp.Scheme)
	if err != nil {
		return nil, err
	}
	return []schema.GroupVersionKind{gvk}, nil
}

// keepsObservedGeneration reports whether the schema of the operator's
// kind keeps status.observedGeneration, which the engine stamps and
// kstatus reads: true for a kind that is no CRD's, and for a status that
// keeps unknown fields.
func (b *battery) keepsObservedGeneration(ctx context.Context) (bool, error) {
	gvk, err := apiutil.GVKForObject(b.op.Object("faults-probe", 0), b.cp.Scheme)
	if err != nil {
		return false, err
	}
	mapping, err := b.cp.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, fmt.Errorf("the resource of %s: %w", gvk.Kind, err)
	}
	cl, err := crdClient(b.cp.Config, nil)
	if err != nil {
		return false, err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := cl.Get(ctx, client.ObjectKey{Name: mapping.Resource.GroupResource().String()}, crd); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("reading the CRD of %s: %w", gvk.Kind, err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name != gvk.Version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		top := v.Schema.OpenAPIV3Schema
		status, ok := top.Properties["status"]
		switch {
		case ptr.Deref(top.XPreserveUnknownFields, false):
			return true, nil
		case !ok:
			return false, nil
		case ptr.Deref(status.XPreserveUnknownFields, false):
			return true, nil
		}
		_, ok = status.Properties["observedGeneration"]
		return ok, nil
	}
	return true, nil
}
