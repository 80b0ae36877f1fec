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

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/cronjob"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/testapi"
)

const ns = "jobs"

func scheme(t testing.TB) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := testapi.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func target(name, uid string) *testapi.Target {
	return &testapi.Target{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(uid)}}
}

// controllerRef is a controller owner reference to an object of the given
// API version and kind.
func controllerRef(apiVersion, kind, name, uid string) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: &yes}
}

func job(namespace, name string, labels map[string]string, owners ...metav1.OwnerReference) *batchv1.Job {
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels, OwnerReferences: owners}}
}

// indexRecorder is a client.FieldIndexer that passes the indexes on to a
// fake client builder and remembers them.
type indexRecorder struct {
	b     *fake.ClientBuilder
	index map[string]client.IndexerFunc
}

func (r *indexRecorder) IndexField(_ context.Context, obj client.Object, field string, fn client.IndexerFunc) error {
	r.b.WithIndex(obj, field, fn)
	r.index[fmt.Sprintf("%T %s", obj, field)] = fn
	return nil
}

// fixture is a fake cluster with the target "nightly" and Jobs around it,
// and a count of the List calls that reach the client.
type fixture struct {
	target *testapi.Target
	client client.Client
	lists  atomic.Int32
	index  map[string]client.IndexerFunc
}

func newFixture(t *testing.T, listErr error) *fixture {
	t.Helper()
	f := &fixture{target: target("nightly", "uid-nightly")}
	mine := map[string]string{"cronjob": "nightly"}
	objs := []client.Object{
		f.target,
		job(ns, "mine-1", mine, controllerRef("cronjob.bosun.dev/v1", "Target", "nightly", "uid-nightly")),
		job(ns, "mine-2", mine, controllerRef("cronjob.bosun.dev/v1", "Target", "nightly", "uid-nightly")),
		// Controlled by the target but without the label.
		job(ns, "unlabelled", nil, controllerRef("cronjob.bosun.dev/v1", "Target", "nightly", "uid-nightly")),
		// Controlled by an earlier Target of the same name.
		job(ns, "stale", mine, controllerRef("cronjob.bosun.dev/v1", "Target", "nightly", "uid-old")),
		// Controlled by an object of another kind with the same name.
		job(ns, "other-kind", mine, controllerRef("apps/v1", "Deployment", "nightly", "uid-nightly")),
		// Owned but not controlled.
		job(ns, "owned-only", mine, metav1.OwnerReference{APIVersion: "cronjob.bosun.dev/v1", Kind: "Target", Name: "nightly", UID: "uid-nightly"}),
		// In another namespace.
		job("elsewhere", "far", mine, controllerRef("cronjob.bosun.dev/v1", "Target", "nightly", "uid-nightly")),
	}
	b := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...)
	rec := &indexRecorder{b: b, index: make(map[string]client.IndexerFunc)}
	if err := cronjob.IndexCronJobControllerManagerFields(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	f.index = rec.index
	b.WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			f.lists.Add(1)
			if err := ctx.Err(); err != nil {
				return err
			}
			if listErr != nil {
				return listErr
			}
			return c.List(ctx, list, opts...)
		},
	})
	f.client = b.Build()
	return f
}

func names(jobs []batchv1.Job) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	slices.Sort(out)
	return out
}

func TestGetJobsSelectsLabelledJobsControlledByTarget(t *testing.T) {
	f := newFixture(t, nil)
	s := cronjob.NewCronJobControllerManagerState(f.client, f.target)
	jobs, err := s.GetJobs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mine-1", "mine-2"}, names(jobs)); diff != "" {
		t.Errorf("GetJobs (-want +got):\n%s", diff)
	}
}

func TestIndexExtractsControllerOfTargetKind(t *testing.T) {
	f := newFixture(t, nil)
	fn := f.index["*v1.Job .metadata.controller"]
	if fn == nil {
		t.Fatalf("indexes registered: %v, want *v1.Job .metadata.controller", f.index)
	}
	tests := []struct {
		name string
		obj  *batchv1.Job
		want []string
	}{
		{"controlled by target kind", job(ns, "a", nil, controllerRef("cronjob.bosun.dev/v1", "Target", "nightly", "u")), []string{"nightly"}},
		{"other version of the group", job(ns, "a", nil, controllerRef("cronjob.bosun.dev/v2", "Target", "weekly", "u")), []string{"weekly"}},
		{"other group", job(ns, "a", nil, controllerRef("other.bosun.dev/v1", "Target", "nightly", "u")), nil},
		{"other kind", job(ns, "a", nil, controllerRef("cronjob.bosun.dev/v1", "CronJob", "nightly", "u")), nil},
		{"bad api version", job(ns, "a", nil, controllerRef("a/b/c", "Target", "nightly", "u")), nil},
		{"no controller", job(ns, "a", nil), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, fn(tt.obj)); diff != "" {
				t.Errorf("index value (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStateIsReadOnceUntilReset(t *testing.T) {
	f := newFixture(t, nil)
	s := cronjob.NewCronJobControllerManagerState(f.client, f.target)
	ctx := context.Background()
	first, err := s.GetJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.client.Create(ctx, job(ns, "mine-3", map[string]string{"cronjob": "nightly"}, controllerRef("cronjob.bosun.dev/v1", "Target", "nightly", "uid-nightly"))); err != nil {
		t.Fatal(err)
	}
	second, err := s.GetJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(names(first), names(second)); diff != "" {
		t.Errorf("second GetJobs before Reset (-want +got):\n%s", diff)
	}
	if got := f.lists.Load(); got != 1 {
		t.Errorf("List calls before Reset = %d, want 1", got)
	}
	s.Reset()
	third, err := s.GetJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mine-1", "mine-2", "mine-3"}, names(third)); diff != "" {
		t.Errorf("GetJobs after Reset (-want +got):\n%s", diff)
	}
	if got := f.lists.Load(); got != 2 {
		t.Errorf("List calls after Reset = %d, want 2", got)
	}
}

func TestCancelledReadIsNotKept(t *testing.T) {
	f := newFixture(t, nil)
	s := cronjob.NewCronJobControllerManagerState(f.client, f.target)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.GetJobs(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("GetJobs with a cancelled context: err = %v, want context.Canceled", err)
	}
	jobs, err := s.GetJobs(context.Background())
	if err != nil {
		t.Fatalf("GetJobs after a cancelled read: %v", err)
	}
	if diff := cmp.Diff([]string{"mine-1", "mine-2"}, names(jobs)); diff != "" {
		t.Errorf("GetJobs (-want +got):\n%s", diff)
	}
}

// recorder is an Impl that records what runs, in order, and what it logs.
type recorder struct {
	mu     sync.Mutex
	events []string
	log    *strings.Builder
}

func (r *recorder) add(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) ListActiveJobsAndUpdateStatus(ctx context.Context, log logr.Logger, jobs []batchv1.Job) (ctrl.Result, error) {
	r.add(fmt.Sprintf("ListActiveJobsAndUpdateStatus %v", names(jobs)))
	log.Info("listing")
	logr.FromContextOrDiscard(ctx).Info("from context")
	return ctrl.Result{}, nil
}

func (r *recorder) CleanUpOldJobsExceedsHistoryLimits(_ context.Context, _ logr.Logger, jobs []batchv1.Job) (ctrl.Result, error) {
	r.add(fmt.Sprintf("CleanUpOldJobsExceedsHistoryLimits %v", names(jobs)))
	return ctrl.Result{}, nil
}

func (r *recorder) RunNextScheduledJob(context.Context, logr.Logger) (ctrl.Result, error) {
	r.add("RunNextScheduledJob")
	return ctrl.Result{RequeueAfter: 42}, nil
}

func (r *recorder) UpdateCronJobStatus(context.Context, logr.Logger) (ctrl.Result, error) {
	r.add("UpdateCronJobStatus")
	return ctrl.Result{}, errors.New("status conflict")
}

var _ cronjob.CronJobControllerManagerImpl = (*recorder)(nil)

func newRecorder() *recorder { return &recorder{log: &strings.Builder{}} }

func (r *recorder) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.log.WriteString(args + "\n")
	}, funcr.Options{})
}

// pass returns a pass over the fixture's target, as the engine makes one,
// for steps run by hand.
func (f *fixture) pass(log logr.Logger) *bosun.Pass[*testapi.Target] {
	return &bosun.Pass[*testapi.Target]{Object: f.target, Client: f.client, Log: log, Values: &bosun.Values{}}
}

// TestStepRunsImpl checks that the step of an action reads the action's
// states for req.Object through req.Client, calls the Impl's method with
// them and returns its result and error as they are, and gives the method
// req.Log with the action's name, as its logger and in its context.
func TestStepRunsImpl(t *testing.T) {
	f := newFixture(t, nil)
	r := newRecorder()
	var states []*cronjob.CronJobControllerManagerState
	steps := cronjob.NewCronJobControllerManagerSteps(func(_ *bosun.Pass[*testapi.Target], state *cronjob.CronJobControllerManagerState) cronjob.CronJobControllerManagerImpl {
		states = append(states, state)
		return r
	})
	req := f.pass(r.logger())
	ctx := context.Background()

	if _, err := steps.ListActiveJobsAndUpdateStatus().Do(ctx, req); err != nil {
		t.Fatal(err)
	}
	if res, err := steps.RunNextScheduledJob().Do(ctx, req); err != nil || res.RequeueAfter != 42 {
		t.Errorf("RunNextScheduledJob = %+v, %v; want RequeueAfter 42 and no error", res, err)
	}
	if _, err := steps.UpdateCronJobStatus().Do(ctx, req); err == nil || err.Error() != "status conflict" {
		t.Errorf("UpdateCronJobStatus: err = %v, want status conflict", err)
	}
	want := []string{"ListActiveJobsAndUpdateStatus [mine-1 mine-2]", "RunNextScheduledJob", "UpdateCronJobStatus"}
	if diff := cmp.Diff(want, r.events); diff != "" {
		t.Errorf("impl calls (-want +got):\n%s", diff)
	}
	if len(states) != 1 || states[0].Target() != f.target {
		t.Errorf("newImpl called %d times, want once with the state of req.Object", len(states))
	}
	wantLog := `"level"=0 "msg"="listing" "action"="ListActiveJobsAndUpdateStatus"` + "\n" +
		`"level"=0 "msg"="from context" "action"="ListActiveJobsAndUpdateStatus"` + "\n"
	if diff := cmp.Diff(wantLog, r.log.String()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// TestStateErrorStopsAction checks that a state read that fails ends the
// step with the error, wrapped and naming the action, before the Impl's
// method runs.
func TestStateErrorStopsAction(t *testing.T) {
	boom := errors.New("boom")
	f := newFixture(t, boom)
	r := newRecorder()
	steps := cronjob.NewCronJobControllerManagerSteps(func(*bosun.Pass[*testapi.Target], *cronjob.CronJobControllerManagerState) cronjob.CronJobControllerManagerImpl {
		return r
	})
	_, err := steps.CleanUpOldJobsExceedsHistoryLimits().Do(context.Background(), f.pass(logr.Discard()))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want it to wrap boom", err)
	}
	if want := "CleanUpOldJobsExceedsHistoryLimits: get state jobs: boom"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	if len(r.events) != 0 {
		t.Errorf("impl ran: %v", r.events)
	}
}
