package cronjob_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/cronjob"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/testapi"
	"github.com/bosunkit/bosun/conditions"
)

// The tests in this file run the generated steps of CronJobControllerManager
// through the bosun engine, one reconcile at a time, against the in-memory
// client of package bosuntest/unit.

// The action names, as the document lists them.
const (
	listActive = cronjob.CronJobControllerManagerListActiveJobsAndUpdateStatus
	cleanUp    = cronjob.CronJobControllerManagerCleanUpOldJobsExceedsHistoryLimits
	runNext    = cronjob.CronJobControllerManagerRunNextScheduledJob
	updateStat = cronjob.CronJobControllerManagerUpdateCronJobStatus
)

// documentOrder are the action names in the order of gen/testdata/cronjob.bosun.
var documentOrder = []string{
	"ListActiveJobsAndUpdateStatus",
	"CleanUpOldJobsExceedsHistoryLimits",
	"RunNextScheduledJob",
	"UpdateCronJobStatus",
}

// arrangement lays the steps of s out in a reconciler.
type arrangement func(s *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target]

// always is an If predicate that lets the step run.
func always(*bosun.Pass[*testapi.Target]) bool { return true }

// nightly is the reconciled Target, as stored.
func nightly() *testapi.Target { return target("nightly", "uid-nightly") }

// around are Jobs in the Target's namespace and elsewhere; the jobs state
// selects mine-1 and mine-2 alone.
func around() []client.Object {
	mine := map[string]string{"cronjob": "nightly"}
	ours := controllerRef("cronjob.bosun.dev/v1", "Target", "nightly", "uid-nightly")
	return []client.Object{
		job(ns, "mine-1", mine, ours),
		job(ns, "mine-2", mine, ours),
		job(ns, "unlabelled", nil, ours),
		job(ns, "stale", mine, controllerRef("cronjob.bosun.dev/v1", "Target", "nightly", "uid-old")),
		job(ns, "other-kind", mine, controllerRef("apps/v1", "Deployment", "nightly", "uid-nightly")),
		job(ns, "owned-only", mine, metav1.OwnerReference{APIVersion: "cronjob.bosun.dev/v1", Kind: "Target", Name: "nightly", UID: "uid-nightly"}),
		job("elsewhere", "far", mine, ours),
	}
}

// mineJobs is how the impl logs the jobs the state selects.
const mineJobs = " [mine-1 mine-2]"

// journal records what the steps do: the passes newImpl was called with,
// and what each impl and hook ran, in order. It is safe for concurrent use.
type journal struct {
	// panicIn names the action whose impl method panics; fail maps an
	// action to the error its impl method returns.
	panicIn string
	fail    map[string]error

	mu      sync.Mutex
	passes  []*bosun.Pass[*testapi.Target]
	entries []string
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.entries = append(j.entries, fmt.Sprintf(format, args...))
}

// newImpl is the function given to NewCronJobControllerManagerSteps: the
// n-th call makes impl n.
func (j *journal) newImpl(req *bosun.Pass[*testapi.Target], state *cronjob.CronJobControllerManagerState) cronjob.CronJobControllerManagerImpl {
	j.mu.Lock()
	j.passes = append(j.passes, req)
	n := len(j.passes)
	j.mu.Unlock()
	if state.Target() != req.Object {
		j.add("%d: newImpl got the state of another object", n)
	}
	return &impl{j: j, n: n}
}

// steps returns the steps of a new CronJobControllerManagerSteps that
// records into j.
func (j *journal) steps() *cronjob.CronJobControllerManagerSteps {
	return cronjob.NewCronJobControllerManagerSteps(j.newImpl)
}

// impls returns how many times newImpl was called.
func (j *journal) impls() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.passes)
}

// all returns the entries so far.
func (j *journal) all() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.entries)
}

// byImpl returns the entries of the impl methods, sorted, per impl number:
// "ACTION [JOBS]" for an action that reads the jobs state, "ACTION" for
// the others.
func (j *journal) byImpl() map[int][]string {
	out := map[int][]string{}
	for _, e := range j.all() {
		var n int
		var rest string
		if _, err := fmt.Sscanf(e, "%d:", &n); err != nil {
			continue
		}
		_, rest, _ = strings.Cut(e, ": ")
		out[n] = append(out[n], rest)
	}
	for _, es := range out {
		slices.Sort(es)
	}
	return out
}

// impl is the CronJobControllerManagerImpl of reconcile n.
type impl struct {
	j *journal
	n int
}

func (i *impl) run(action string, jobs []batchv1.Job, read bool) (ctrl.Result, error) {
	if action == i.j.panicIn {
		panic("impl gave up")
	}
	if read {
		i.j.add("%d: %s %v", i.n, action, names(jobs))
	} else {
		i.j.add("%d: %s", i.n, action)
	}
	return ctrl.Result{}, i.j.fail[action]
}

func (i *impl) ListActiveJobsAndUpdateStatus(_ context.Context, _ logr.Logger, jobs []batchv1.Job) (ctrl.Result, error) {
	return i.run(listActive, jobs, true)
}

func (i *impl) CleanUpOldJobsExceedsHistoryLimits(_ context.Context, _ logr.Logger, jobs []batchv1.Job) (ctrl.Result, error) {
	return i.run(cleanUp, jobs, true)
}

func (i *impl) RunNextScheduledJob(context.Context, logr.Logger) (ctrl.Result, error) {
	return i.run(runNext, nil, false)
}

func (i *impl) UpdateCronJobStatus(context.Context, logr.Logger) (ctrl.Result, error) {
	return i.run(updateStat, nil, false)
}

var _ cronjob.CronJobControllerManagerImpl = (*impl)(nil)

// listCounter counts the List calls of JobLists that reach the in-memory
// client, and fails them with err when it is set.
type listCounter struct {
	n   atomic.Int32
	err error
	// failing is how many lists, from the first, fail with err; zero
	// means all of them.
	failing int32
}

func (c *listCounter) funcs() interceptor.Funcs {
	return interceptor.Funcs{
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*batchv1.JobList); ok {
				n := c.n.Add(1)
				if c.err != nil && (c.failing == 0 || n <= c.failing) {
					return c.err
				}
			}
			return cl.List(ctx, list, opts...)
		},
	}
}

// ready is the Ready condition of a reconcile that succeeded.
var ready = metav1.Condition{Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), ObservedGeneration: 1}

// TestOneImplPerReconcile checks that newImpl is called once per reconcile,
// by the first step that runs, whatever the number and arrangement of the
// steps (steps a ParallelJoin runs at the same time among them), that each
// reconcile gets an impl of its own, made with its own pass, and that the
// jobs state is read once per reconcile by all the steps that name it, and
// not at all when none does.
func TestOneImplPerReconcile(t *testing.T) {
	const reconciles = 20
	tests := []struct {
		name    string
		steps   arrangement
		actions []string
		lists   int32 // per reconcile
	}{
		{
			name: "one step that reads no state",
			steps: func(s *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target] {
				return []bosun.Step[*testapi.Target]{s.RunNextScheduledJob()}
			},
			actions: []string{runNext},
		},
		{
			name: "one step that reads the state",
			steps: func(s *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target] {
				return []bosun.Step[*testapi.Target]{s.CleanUpOldJobsExceedsHistoryLimits()}
			},
			actions: []string{cleanUp + mineJobs},
			lists:   1,
		},
		{
			name:    "every step, in Reconciler.Steps",
			steps:   (*cronjob.CronJobControllerManagerSteps).All,
			actions: []string{listActive + mineJobs, cleanUp + mineJobs, runNext, updateStat},
			lists:   1,
		},
		{
			name: "every step in a Join",
			steps: func(s *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target] {
				return []bosun.Step[*testapi.Target]{bosun.Join(s.All()...)}
			},
			actions: []string{listActive + mineJobs, cleanUp + mineJobs, runNext, updateStat},
			lists:   1,
		},
		{
			name: "every step in a ParallelJoin",
			steps: func(s *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target] {
				return []bosun.Step[*testapi.Target]{bosun.ParallelJoin(s.All()...)}
			},
			actions: []string{listActive + mineJobs, cleanUp + mineJobs, runNext, updateStat},
			lists:   1,
		},
		{
			name: "nested composites with a step between them",
			steps: func(s *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target] {
				return []bosun.Step[*testapi.Target]{
					bosun.ParallelJoin(s.RunNextScheduledJob(), bosun.Sequence(s.ListActiveJobsAndUpdateStatus())),
					s.UpdateCronJobStatus(),
					bosun.If(always, s.CleanUpOldJobsExceedsHistoryLimits()),
				}
			},
			actions: []string{listActive + mineJobs, cleanUp + mineJobs, runNext, updateStat},
			lists:   1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &journal{}
			lists := &listCounter{}
			r := unit.Steps(tt.steps(j.steps())...)
			c := unit.Case[*testapi.Target]{Object: nightly(), Given: around(), Interceptor: lists.funcs(), ExpectConditions: []metav1.Condition{ready}}
			unit.Check(t, c, unit.Reconcile(t, scheme(t), r, c))
			if n := j.impls(); n != 1 {
				t.Fatalf("newImpl called %d times in the first reconcile, want once", n)
			}
			// Later reconciles of the same reconciler, on the same
			// client. They change nothing, so they record no event (the
			// recorder unit.Reconcile gave r is closed by now).
			key := client.ObjectKeyFromObject(c.Object)
			for i := 2; i <= reconciles; i++ {
				if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
					t.Fatalf("reconcile %d: %v", i, err)
				}
				if n := j.impls(); n != i {
					t.Fatalf("newImpl called %d times in %d reconciles, want once each", n, i)
				}
			}

			want := map[int][]string{}
			for i := 1; i <= reconciles; i++ {
				want[i] = slices.Sorted(slices.Values(tt.actions))
			}
			if diff := cmp.Diff(want, j.byImpl()); diff != "" {
				t.Errorf("actions run by each reconcile's impl (-want +got):\n%s", diff)
			}
			if got, want := lists.n.Load(), tt.lists*reconciles; got != want {
				t.Errorf("Jobs listed %d times in %d reconciles, want %d", got, reconciles, want)
			}
			seen := map[*bosun.Pass[*testapi.Target]]bool{}
			for _, p := range j.passes {
				if seen[p] {
					t.Errorf("newImpl got the pass of an earlier reconcile again")
				}
				seen[p] = true
			}
		})
	}
}

// TestFailedStateReadIsTriedAgain checks that a read of the jobs state that
// fails is not kept: each step that names the state reads it again, no impl
// method runs while it fails, and Ready reports the failure; and that a
// bosun.Retry of a step gets past a read that failed once.
func TestFailedStateReadIsTriedAgain(t *testing.T) {
	t.Run("every read fails", func(t *testing.T) {
		j := &journal{}
		lists := &listCounter{err: errors.New("apiserver away")}
		s := j.steps()
		r := unit.Steps(bosun.Join(s.ListActiveJobsAndUpdateStatus(), s.CleanUpOldJobsExceedsHistoryLimits()), s.UpdateCronJobStatus())
		c := unit.Case[*testapi.Target]{
			Object:      nightly(),
			Given:       around(),
			Interceptor: lists.funcs(),
			ExpectErr:   "ListActiveJobsAndUpdateStatus: get state jobs: apiserver away\nCleanUpOldJobsExceedsHistoryLimits: get state jobs: apiserver away",
			ExpectConditions: []metav1.Condition{{
				Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(conditions.ReasonError),
				Message: "ListActiveJobsAndUpdateStatus: get state jobs: apiserver away\nCleanUpOldJobsExceedsHistoryLimits: get state jobs: apiserver away",
			}},
			ExpectWrites: []string{"patch status Target jobs/nightly"},
		}
		unit.Check(t, c, unit.Reconcile(t, scheme(t), r, c))
		if got := lists.n.Load(); got != 2 {
			t.Errorf("Jobs listed %d times, want twice: once by each step", got)
		}
		if n := j.impls(); n != 1 {
			t.Errorf("newImpl called %d times, want once", n)
		}
		// The Join interrupts the reconcile: UpdateCronJobStatus does not run.
		if e := j.all(); len(e) != 0 {
			t.Errorf("impl methods ran after the state failed: %q", e)
		}
	})
	t.Run("a retry gets past one failed read", func(t *testing.T) {
		j := &journal{}
		lists := &listCounter{err: errors.New("apiserver away"), failing: 1}
		s := j.steps()
		r := unit.Steps(bosun.Retry(3, time.Millisecond, s.ListActiveJobsAndUpdateStatus()), s.CleanUpOldJobsExceedsHistoryLimits())
		c := unit.Case[*testapi.Target]{
			Object:           nightly(),
			Given:            around(),
			Interceptor:      lists.funcs(),
			ExpectConditions: []metav1.Condition{ready},
		}
		unit.Check(t, c, unit.Reconcile(t, scheme(t), r, c))
		if got := lists.n.Load(); got != 2 {
			t.Errorf("Jobs listed %d times, want twice: the failed read and the one that was kept", got)
		}
		if e := j.all(); len(e) != 2 {
			t.Errorf("impl methods that ran: %q, want both actions once", e)
		}
	})
}

// TestStepNames checks that each step is named after its action, the
// name of the action's constant, and that All lists the steps in the order
// of the document.
func TestStepNames(t *testing.T) {
	s := cronjob.NewCronJobControllerManagerSteps(nil)
	tests := []struct {
		step     bosun.Step[*testapi.Target]
		constant string
		want     string
	}{
		{s.ListActiveJobsAndUpdateStatus(), cronjob.CronJobControllerManagerListActiveJobsAndUpdateStatus, "ListActiveJobsAndUpdateStatus"},
		{s.CleanUpOldJobsExceedsHistoryLimits(), cronjob.CronJobControllerManagerCleanUpOldJobsExceedsHistoryLimits, "CleanUpOldJobsExceedsHistoryLimits"},
		{s.RunNextScheduledJob(), cronjob.CronJobControllerManagerRunNextScheduledJob, "RunNextScheduledJob"},
		{s.UpdateCronJobStatus(), cronjob.CronJobControllerManagerUpdateCronJobStatus, "UpdateCronJobStatus"},
	}
	for _, tt := range tests {
		if got := bosun.StepName(tt.step); got != tt.want || tt.constant != tt.want {
			t.Errorf("StepName = %q, constant %q; want both %q", got, tt.constant, tt.want)
		}
	}
	var all []string
	for _, st := range s.All() {
		all = append(all, bosun.StepName(st))
	}
	if diff := cmp.Diff(documentOrder, all); diff != "" {
		t.Errorf("names of All() (-want +got):\n%s", diff)
	}
	if got, want := bosun.Join(s.All()...).Name(), "Join("+strings.Join(documentOrder, ",")+")"; got != want {
		t.Errorf("name of a Join of All() = %q, want %q", got, want)
	}
}

// TestSameStepsTwiceAreRefused checks that a reconciler that lists an
// action of one decl twice, from one Steps value or two, at the top or in a
// composite, is refused by Validate for the duplicate name, and that a
// reconcile of it ends with that error before any impl is made.
func TestSameStepsTwiceAreRefused(t *testing.T) {
	tests := []struct {
		name  string
		steps func(s, other *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target]
		want  string
	}{
		{
			name: "All twice",
			steps: func(s, _ *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target] {
				return append(s.All(), s.All()...)
			},
			want: `steps 0 and 4 are both named "ListActiveJobsAndUpdateStatus"`,
		},
		{
			name: "one action of two Steps values",
			steps: func(s, other *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target] {
				return []bosun.Step[*testapi.Target]{s.RunNextScheduledJob(), other.RunNextScheduledJob()}
			},
			want: `steps 0 and 1 are both named "RunNextScheduledJob"`,
		},
		{
			name: "one action at the top and in a Join",
			steps: func(s, _ *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target] {
				return []bosun.Step[*testapi.Target]{
					s.UpdateCronJobStatus(),
					bosun.Join(s.ListActiveJobsAndUpdateStatus(), bosun.If(always, s.UpdateCronJobStatus())),
				}
			},
			// The walk counts composites: 0 UpdateCronJobStatus, 1 the
			// Join, 2 ListActiveJobsAndUpdateStatus, 3 the If, 4 its step.
			want: `steps 0 and 4 are both named "UpdateCronJobStatus"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &journal{}
			want := `bosun: reconciler "unit": invalid reconciler configuration: ` + tt.want

			r := unit.Steps(tt.steps(j.steps(), j.steps())...)
			r.Client = fake.NewClientBuilder().WithScheme(scheme(t)).Build()
			err := r.Validate()
			if !errors.Is(err, bosun.ErrInvalidConfig) {
				t.Errorf("Validate = %v, want an error wrapping ErrInvalidConfig", err)
			}
			if err == nil || err.Error() != want {
				t.Errorf("Validate = %v, want %q", err, want)
			}

			c := unit.Case[*testapi.Target]{Object: nightly(), Given: around(), ExpectErr: want, ExpectNoWrites: true}
			unit.Check(t, c, unit.Reconcile(t, scheme(t), unit.Steps(tt.steps(j.steps(), j.steps())...), c))
			if n := j.impls(); n != 0 {
				t.Errorf("newImpl called %d times, want never", n)
			}
		})
	}
}

// TestImplPanicIsTheStepsPanic checks that the engine recovers a panic in an
// impl method as the panic of that action's step: Ready False with reason
// Panic and an error naming the action and the panic value, and the other
// steps of a Join (or a ParallelJoin) still run, with the same impl.
func TestImplPanicIsTheStepsPanic(t *testing.T) {
	tests := []struct {
		name    string
		group   func(...bosun.Step[*testapi.Target]) *bosun.Group[*testapi.Target]
		actions []string
	}{
		{"Join", bosun.Join[*testapi.Target], []string{cleanUp + mineJobs, listActive + mineJobs, updateStat}},
		{"ParallelJoin", bosun.ParallelJoin[*testapi.Target], []string{cleanUp + mineJobs, listActive + mineJobs, updateStat}},
		// A Sequence stops at the panic as at any error.
		{"Sequence", bosun.Sequence[*testapi.Target], []string{cleanUp + mineJobs, listActive + mineJobs}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &journal{panicIn: runNext}
			s := j.steps()
			r := unit.Steps(tt.group(s.ListActiveJobsAndUpdateStatus(), s.CleanUpOldJobsExceedsHistoryLimits(), s.RunNextScheduledJob(), s.UpdateCronJobStatus()))
			c := unit.Case[*testapi.Target]{
				Object:       nightly(),
				Given:        around(),
				ExpectErr:    "impl gave up",
				ExpectWrites: []string{"patch status Target jobs/nightly"},
				Check: func(t bosuntest.TB, out *unit.Outcome[*testapi.Target]) {
					if !strings.Contains(out.Err.Error(), runNext) {
						t.Errorf("error %q does not name the step %s", out.Err, runNext)
					}
					ready := meta.FindStatusCondition(out.Object.Status.Conditions, conditions.TypeReady)
					if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != string(conditions.ReasonPanic) || !strings.Contains(ready.Message, "impl gave up") {
						t.Errorf("Ready = %+v, want False with reason %s and the panic in the message", ready, conditions.ReasonPanic)
					}
				},
			}
			unit.Check(t, c, unit.Reconcile(t, scheme(t), r, c))
			if n := j.impls(); n != 1 {
				t.Errorf("newImpl called %d times, want once", n)
			}
			if diff := cmp.Diff(map[int][]string{1: tt.actions}, j.byImpl()); diff != "" {
				t.Errorf("impl methods that ran (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPassReportNamesEachAction checks that the engine's report of a pass
// (what a bosun.PassObserver gets) lists the step of every action that ran,
// named after the action, in the order they ran, with the error of the one
// that failed: what a hook around each action used to record.
func TestPassReportNamesEachAction(t *testing.T) {
	boom := errors.New("status write refused")
	j := &journal{fail: map[string]error{updateStat: boom}}
	var reports []bosun.PassReport
	r := unit.Steps(j.steps().All()...)
	r.Options.Observers = []bosun.PassObserver{bosun.PassObserverFunc(func(_ context.Context, report bosun.PassReport) {
		reports = append(reports, report)
	})}
	c := unit.Case[*testapi.Target]{
		Object:           nightly(),
		Given:            around(),
		ExpectErr:        boom.Error(),
		ExpectConditions: []metav1.Condition{{Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(conditions.ReasonError), Message: boom.Error()}},
	}
	unit.Check(t, c, unit.Reconcile(t, scheme(t), r, c))
	if len(reports) != 1 {
		t.Fatalf("%d pass reports, want 1", len(reports))
	}
	var got []string
	for _, st := range reports[0].Steps {
		got = append(got, fmt.Sprintf("%s %s %q", st.Name, st.Phase, st.Error))
	}
	var want []string
	for _, action := range documentOrder {
		var msg string
		if action == updateStat {
			msg = boom.Error()
		}
		want = append(want, fmt.Sprintf("%s do %q", action, msg))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps of the pass report (-want +got):\n%s", diff)
	}
}

// TestFieldIndexesOfSteps checks that bosun.FieldIndexes finds the one
// field index of the decl, Job .metadata.controller, once, whichever of its
// steps the reconciler lists and however it arranges them, from one Steps
// value or several, and again on every call (the steps set up once per
// builder, and each call uses a new one).
func TestFieldIndexesOfSteps(t *testing.T) {
	tests := []struct {
		name  string
		steps func(s, other *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target]
	}{
		{
			name: "one step that reads no state",
			steps: func(s, _ *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target] {
				return []bosun.Step[*testapi.Target]{s.UpdateCronJobStatus()}
			},
		},
		{
			name: "every step",
			steps: func(s, _ *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target] {
				return s.All()
			},
		},
		{
			name: "steps in composites",
			steps: func(s, _ *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target] {
				return []bosun.Step[*testapi.Target]{
					bosun.Join(s.ListActiveJobsAndUpdateStatus(), s.CleanUpOldJobsExceedsHistoryLimits()),
					bosun.If(always, s.RunNextScheduledJob()),
					bosun.Timeout(time.Minute, s.UpdateCronJobStatus()),
				}
			},
		},
		{
			name: "steps of two Steps values",
			steps: func(s, other *cronjob.CronJobControllerManagerSteps) []bosun.Step[*testapi.Target] {
				return []bosun.Step[*testapi.Target]{s.ListActiveJobsAndUpdateStatus(), other.CleanUpOldJobsExceedsHistoryLimits()}
			},
		},
	}
	ours := job(ns, "a", nil, controllerRef("cronjob.bosun.dev/v1", "Target", "nightly", "u"))
	theirs := job(ns, "b", nil, controllerRef("apps/v1", "Deployment", "nightly", "u"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := &journal{}
			r := unit.Steps(tt.steps(j.steps(), j.steps())...)
			for call := 1; call <= 2; call++ {
				indexes, err := r.FieldIndexes(scheme(t))
				if err != nil {
					t.Fatalf("FieldIndexes call %d: %v", call, err)
				}
				var got []string
				for _, ix := range indexes {
					got = append(got, fmt.Sprintf("%T %s %v %v", ix.Object, ix.Field, ix.Extract(ours), ix.Extract(theirs)))
				}
				if diff := cmp.Diff([]string{"*v1.Job .metadata.controller [nightly] []"}, got); diff != "" {
					t.Errorf("FieldIndexes call %d (-want +got):\n%s", call, diff)
				}
			}
			if n := j.impls(); n != 0 {
				t.Errorf("newImpl called %d times by FieldIndexes, want never", n)
			}
		})
	}
}
