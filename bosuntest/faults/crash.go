package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
)

// defaultBound is how long a Scenario's objects may take to converge, or
// to be cleaned up, when Scenario.Bound is zero.
const defaultBound = time.Minute

// pollInterval is how often the driver checks a scenario's oracles, and
// checkTimeout how long one check may take.
const (
	pollInterval = 100 * time.Millisecond
	checkTimeout = 30 * time.Second
)

// Scenario is an operator and a piece of work for it, which CrashEveryWrite
// runs again and again, killing the operator at a different write each
// time. The oracles are the scenario's own functions, usually made of
// package bosuntest/oracle's checks.
type Scenario struct {
	// Setup registers the operator with a manager; see Start. It must pass
	// p.External() to its managed steps, if any, for their calls to count.
	Setup func(mgr ctrl.Manager, p *Process) error
	// Create makes the scenario's objects in the namespace ns and returns
	// them.
	Create func(ctx context.Context, c client.Client, ns string) ([]client.Object, error)
	// Converged returns nil once the operator has done its work for objs:
	// every object Ready, its children and external resources there. The
	// driver calls it until it does, for at most Bound.
	Converged func(ctx context.Context, c client.Client, ns string, objs []client.Object) error
	// Duplicates, when set, counts the objects that ended with more than
	// one of what they should have one of (external resources, children).
	// The driver calls it once the objects converged.
	Duplicates func(ctx context.Context, c client.Client, ns string, objs []client.Object) (int, error)
	// Cleaned, when set, makes the driver delete objs once they converged
	// and call it until it returns nil, for at most Bound: the objects
	// gone and nothing of theirs left, in Kubernetes or outside. The
	// crash points then cover the deletions too.
	Cleaned func(ctx context.Context, c client.Client, ns string, objs []client.Object) error
	// Bound is how long convergence and cleaning up may each take after
	// the restart; zero means one minute.
	Bound time.Duration
	// Manager adjusts every manager's options (see Options.Manager). The
	// driver already limits each manager's cache to the trial's namespace
	// and the cluster-scoped objects.
	Manager func(*ctrl.Options)
	// ClusterScoped are the kinds of the cluster-scoped objects Create
	// makes, whose caches the driver limits to the trial's objects (see
	// Options.ClusterScoped): Create labels each ScenarioLabel with ns and
	// names it after ns, since trials run side by side.
	ClusterScoped []client.Object
}

// CrashOptions chooses the crash points CrashEveryWrite tries.
type CrashOptions struct {
	// During makes each crash happen during the write instead of right
	// after it: the write takes effect and its answer is lost.
	During bool
	// Stride tries every Stride-th write point; zero means every point,
	// or, with Limit, points spread evenly over the scenario.
	Stride int
	// Limit stops after this many trials; zero means no limit.
	Limit int
	// Match limits the writes that count as crash points (see
	// CrashPoint.Match).
	Match func(Call) bool
}

// CrashReport is what CrashEveryWrite found.
type CrashReport struct {
	// Points is the number of writes of the fault-free run.
	Points int
	// Trials is the number of crash points tried.
	Trials int
	// Crashed is how many trials reached their crash point.
	Crashed int
	// Converged is how many crashed trials converged after the restart.
	Converged int
	// Duplicates is the number of duplicates Scenario.Duplicates counted,
	// over all trials.
	Duplicates int
	// Leaks is how many trials did not clean up within the bound.
	Leaks int
	// Failures describe each failed trial.
	Failures []string
}

// CrashEveryWrite runs the scenario once without faults to count its
// writes (to the API server and, through Process.External, to external
// systems), then once per write point k: it makes the scenario's objects in
// a fresh namespace, runs the operator until it dies right after (or,
// with During, in the middle of) its k-th write, starts a fresh operator
// against the same control plane and external systems, and checks that
// the objects converge, that nothing was duplicated, and (with
// Scenario.Cleaned) that deleting them leaves nothing behind. The trials
// are parallel subtests of a subtest "trials", as many at once as
// -test.parallel allows. Each trial that fails is reported with t.Errorf,
// naming the write the crash followed; the report has the counts for a
// figures table.
func CrashEveryWrite(t *testing.T, cp *controlplane.ControlPlane, s Scenario, opts CrashOptions) CrashReport {
	t.Helper()
	var report CrashReport
	first := runTrial(t, cp, s, 0, opts)
	if first.failure != "" {
		t.Errorf("faults: the scenario fails without faults: %s", first.failure)
		report.Failures = append(report.Failures, "fault-free run: "+first.failure)
		return report
	}
	report.Points = first.points
	stride := max(opts.Stride, 1)
	if opts.Stride == 0 && opts.Limit > 0 {
		// Spread the trials over the whole scenario.
		stride = max(1, (report.Points+opts.Limit-1)/opts.Limit)
	}
	var ks []int
	for k := 1; k <= report.Points; k += stride {
		if opts.Limit > 0 && len(ks) >= opts.Limit {
			break
		}
		ks = append(ks, k)
	}
	report.Trials = len(ks)
	var mu sync.Mutex
	// Each trial is a parallel subtest: trials share nothing but the
	// control plane, so as many run at once as -test.parallel allows.
	t.Run("trials", func(t *testing.T) {
		for _, k := range ks {
			t.Run(fmt.Sprintf("%s-write-%d", when(opts.During), k), func(t *testing.T) {
				t.Parallel()
				r := runTrial(t, cp, s, k, opts)
				mu.Lock()
				defer mu.Unlock()
				report.add(r)
				if r.failure != "" {
					msg := fmt.Sprintf("crash %s write %d (%s): %s", when(opts.During), k, r.at, r.failure)
					report.Failures = append(report.Failures, msg)
					t.Errorf("faults: %s", msg)
				}
			})
		}
	})
	return report
}

// add counts a trial.
func (r *CrashReport) add(tr trial) {
	if !tr.crashed {
		return
	}
	r.Crashed++
	if tr.converged {
		r.Converged++
	}
	r.Duplicates += tr.duplicates
	if tr.leaked {
		r.Leaks++
	}
}

// when names where the crash is.
func when(during bool) string {
	if during {
		return "during"
	}
	return "after"
}

// trial is the outcome of one run of a scenario.
type trial struct {
	points     int
	crashed    bool
	at         string
	converged  bool
	duplicates int
	leaked     bool
	failure    string
}

// runTrial runs the scenario with a crash at write k (none for 0).
func runTrial(t *testing.T, cp *controlplane.ControlPlane, s Scenario, k int, opts CrashOptions) trial {
	t.Helper()
	ctx := t.Context()
	bound := s.Bound
	if bound <= 0 {
		bound = defaultBound
	}
	ns := bosuntest.Namespace(t, cp.Client)
	objs, err := s.Create(ctx, cp.Client, ns)
	if err != nil {
		t.Fatalf("faults: creating the scenario's objects: %v", err)
	}
	plan := Plan{Crash: CrashPoint{After: k, During: opts.During, Match: opts.Match}}
	p1 := Start(t, cp, Options{Name: fmt.Sprintf("trial-%d", k), Namespace: ns, Plan: plan, Manager: s.Manager, ClusterScoped: s.ClusterScoped}, s.Setup)

	var out trial
	deleted := false
	err = waitUnlessCrashed(ctx, p1, bound, func(ctx context.Context) error { return s.Converged(ctx, cp.Client, ns, objs) })
	if err == nil && !p1.dead() && s.Cleaned != nil {
		deleted = true
		if derr := deleteAll(ctx, cp.Client, objs); derr != nil {
			t.Fatalf("faults: deleting the scenario's objects: %v", derr)
		}
		err = waitUnlessCrashed(ctx, p1, bound, func(ctx context.Context) error { return s.Cleaned(ctx, cp.Client, ns, objs) })
	}
	if !p1.dead() {
		p1.Stop()
		out.points = p1.Points()
		if err != nil {
			out.failure = err.Error()
		}
		return out
	}
	out.crashed = true
	calls := p1.Calls()
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i].TookEffect() && !calls[i].AfterCrash {
			out.at = calls[i].String()
			break
		}
	}

	p2 := Start(t, cp, Options{Name: fmt.Sprintf("trial-%d-restart", k), Namespace: ns, Manager: s.Manager, ClusterScoped: s.ClusterScoped}, s.Setup)
	defer p2.Stop()
	if !deleted {
		if err := poll(ctx, bound, func(ctx context.Context) error { return s.Converged(ctx, cp.Client, ns, objs) }); err != nil {
			out.failure = fmt.Sprintf("not converged within %s after the restart: %v", bound, err)
			return out
		}
		out.converged = true
		if s.Duplicates != nil {
			n, err := s.Duplicates(ctx, cp.Client, ns, objs)
			if err != nil {
				out.failure = fmt.Sprintf("counting duplicates: %v", err)
				return out
			}
			out.duplicates = n
			if n > 0 {
				out.failure = fmt.Sprintf("%d duplicates", n)
			}
		}
		if s.Cleaned == nil {
			return out
		}
		if err := deleteAll(ctx, cp.Client, objs); err != nil {
			t.Fatalf("faults: deleting the scenario's objects: %v", err)
		}
	} else {
		out.converged = true
	}
	if err := poll(ctx, bound, func(ctx context.Context) error { return s.Cleaned(ctx, cp.Client, ns, objs) }); err != nil {
		out.leaked = true
		out.failure = joinFailure(out.failure, fmt.Sprintf("not cleaned up within %s after the restart: %v", bound, err))
	}
	return out
}

// joinFailure joins two failure descriptions.
func joinFailure(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// deleteAll deletes objs, ignoring those already gone.
func deleteAll(ctx context.Context, c client.Client, objs []client.Object) error {
	for _, o := range objs {
		if err := c.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// errCrashedFirst ends a wait because the process died.
var errCrashedFirst = errors.New("the process crashed")

// waitUnlessCrashed polls check until it returns nil, the process dies, or
// bound passes; it returns the last error of check (nil once it held or
// when the process died first).
func waitUnlessCrashed(ctx context.Context, p *Process, bound time.Duration, check func(context.Context) error) error {
	err := pollUntil(ctx, bound, p.Crashed(), check)
	if errors.Is(err, errCrashedFirst) {
		return nil
	}
	return err
}

// poll calls check until it returns nil or bound passes.
func poll(ctx context.Context, bound time.Duration, check func(context.Context) error) error {
	return pollUntil(ctx, bound, nil, check)
}

// pollUntil calls check every pollInterval until it returns nil, stop is
// closed, or bound passes, and returns check's last error (errCrashedFirst
// when stop was closed).
func pollUntil(ctx context.Context, bound time.Duration, stop <-chan struct{}, check func(context.Context) error) error {
	pctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	if stop != nil {
		go func() {
			select {
			case <-stop:
				cancel()
			case <-pctx.Done():
			}
		}()
	}
	var last error
	err := wait.PollUntilContextCancel(pctx, pollInterval, true, func(context.Context) (bool, error) {
		// Each check gets a deadline of its own, not the bound's, so that
		// the last one before the bound runs whole and says what it found
		// (a client refuses to start a request it cannot finish in time).
		cctx, cancelCheck := context.WithTimeout(ctx, checkTimeout)
		defer cancelCheck()
		last = check(cctx)
		return last == nil, nil
	})
	if err == nil {
		return nil
	}
	select {
	case <-stop:
		return errCrashedFirst
	default:
	}
	if last == nil {
		// The wait ended before check ran.
		return err
	}
	return last
}
