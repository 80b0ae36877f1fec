package cronjob

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
)

// shared is the control plane, with the CronJob CRD and the webhook
// configurations installed, that the envtest tests of this package share;
// each test runs its own manager and works in a namespace of its own. A
// manager of the control plane's own serves the webhooks from its start to
// the end of TestMain: with failure policy Fail every write of a CronJob
// needs them, between tests too, and the garbage collector and the
// namespace controller list CronJobs at v2 (the version discovery prefers),
// which needs the conversion. It runs the garbage collector, as a cluster
// does: the children of a CronJob go with it, since the operator sets owner
// references and no finalizer. It runs no Job controller and no nodes: a
// Job stays as the operator made it until a test finishes it by hand
// (env.finish), so that the tests decide when each run ends. jobs_test.go
// runs the real Job controller on a control plane of its own.
var shared = bosuntest.Shared{
	Options: func() (controlplane.Options, error) {
		opts, err := webhookOptions()
		opts.ControllerManager = true
		opts.Controllers = []string{controlplane.GarbageCollectorController, controlplane.NamespaceController}
		return opts, err
	},
	Webhooks: SetupWebhookWithManager,
}

// webhookOptions are the options of a control plane with the CronJob CRD
// and the operator's admission webhook configurations installed. The CRD
// converts through the webhook server too, since the scheme holds both
// versions. A manager of the control plane must serve the webhooks
// (SetupWebhookWithManager) before a CronJob can be written: the
// configurations' failure policy is Fail.
func webhookOptions() (controlplane.Options, error) {
	opts, err := controlplane.OptionsFor(AddToScheme, CRDs)()
	if err != nil {
		return opts, err
	}
	opts.Webhooks, err = Webhooks()
	return opts, err
}

func TestMain(m *testing.M) { shared.Main(m) }

// touchAnnotation is changed by env.at to make the controller look at a
// CronJob again after the fake clock moved.
const touchAnnotation = "test.bosun.dev/touch"

// env is one envtest test: a client, a namespace, and the fake clock of the
// running CronJob controller.
type env struct {
	t     *testing.T
	c     client.Client
	ns    string
	clock *clocktesting.FakeClock
}

// start runs the CronJob controller, set up as the demo sets it up but with
// a fake clock at the current time, until the test ends. setup, when not
// nil, registers the controller instead of SetupWithManager.
func start(t *testing.T, setup func(mgr ctrl.Manager, opts Options) error) *env {
	t.Helper()
	return startOn(t, shared.ControlPlane(t), setup)
}

// startOn is start on the control plane cp.
func startOn(t *testing.T, cp *controlplane.ControlPlane, setup func(mgr ctrl.Manager, opts Options) error) *env {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Now())
	if setup == nil {
		setup = SetupWithManager
	}
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error { return setup(mgr, Options{Clock: clk}) })
	return &env{t: t, c: cp.Client, ns: bosuntest.Namespace(t, cp.Client), clock: clk}
}

// newCronJob returns a CronJob named name on schedule, whose Job runs one
// busybox container, changed by each of mutate.
func newCronJob(ns, name, schedule string, mutate ...func(*cronjobv1.CronJob)) *cronjobv1.CronJob {
	cj := &cronjobv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: cronjobv1.CronJobSpec{
			Schedule: schedule,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "test"}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
				}}},
			},
		},
	}
	for _, m := range mutate {
		m(cj)
	}
	return cj
}

// create creates a CronJob (see newCronJob) and waits until the controller
// reconciled it once.
func (e *env) create(name, schedule string, mutate ...func(*cronjobv1.CronJob)) *cronjobv1.CronJob {
	e.t.Helper()
	cj := newCronJob(e.ns, name, schedule, mutate...)
	if err := e.c.Create(e.t.Context(), cj); err != nil {
		e.t.Fatalf("create cronjob %s: %v", name, err)
	}
	return e.waitObserved(name)
}

// runs returns the first n scheduled times of cj after its creation.
func (e *env) runs(cj *cronjobv1.CronJob, n int) []time.Time {
	e.t.Helper()
	sched, err := cron.ParseStandard(cj.Spec.Schedule)
	if err != nil {
		e.t.Fatal(err)
	}
	var ts []time.Time
	for t := cj.CreationTimestamp.Time; len(ts) < n; {
		t = sched.Next(t)
		ts = append(ts, t)
	}
	return ts
}

// jobName is the name of cj's Job for the run scheduled at t.
func jobName(cj *cronjobv1.CronJob, t time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, t.Unix())
}

// at sets the fake clock to t and makes the controller look at each CronJob
// named, by changing an annotation.
func (e *env) at(t time.Time, names ...string) {
	e.t.Helper()
	e.clock.SetTime(t)
	for _, name := range names {
		cj := e.get(name)
		base := cj.DeepCopy()
		metav1.SetMetaDataAnnotation(&cj.ObjectMeta, touchAnnotation, t.UTC().Format(time.RFC3339Nano))
		if err := e.c.Patch(e.t.Context(), cj, client.MergeFrom(base)); err != nil {
			e.t.Fatalf("touch cronjob %s: %v", name, err)
		}
	}
}

// window is bosuntest.Window with the CronJob clock, whose passes counter
// counts.
func (e *env) window(counter *bosuntest.ReconcileCounter, clock string, d time.Duration, n int) {
	e.t.Helper()
	cj := &cronjobv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: clock}}
	bosuntest.Window(e.t, e.c, cj, func() int { return counter.Count(client.ObjectKeyFromObject(cj)) }, d, n)
}

// update changes the spec of the CronJob named with mutate and waits until
// the controller reconciled the new generation, at the current fake time.
func (e *env) update(name string, mutate func(*cronjobv1.CronJob)) *cronjobv1.CronJob {
	e.t.Helper()
	cj := e.get(name)
	base := cj.DeepCopy()
	mutate(cj)
	if err := e.c.Patch(e.t.Context(), cj, client.MergeFrom(base)); err != nil {
		e.t.Fatalf("update cronjob %s: %v", name, err)
	}
	return e.waitObserved(name)
}

// get reads the CronJob named.
func (e *env) get(name string) *cronjobv1.CronJob {
	e.t.Helper()
	cj := &cronjobv1.CronJob{}
	if err := e.c.Get(e.t.Context(), client.ObjectKey{Namespace: e.ns, Name: name}, cj); err != nil {
		e.t.Fatalf("get cronjob %s: %v", name, err)
	}
	return cj
}

// waitObserved waits until the status of the CronJob named describes its
// current generation, and returns it.
func (e *env) waitObserved(name string) *cronjobv1.CronJob {
	e.t.Helper()
	return e.waitCronJob(name, func(cj *cronjobv1.CronJob) error {
		if cj.Status.ObservedGeneration != cj.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", cj.Status.ObservedGeneration, cj.Generation)
		}
		return nil
	})
}

// waitReady waits until the CronJob named has a Ready condition with the
// status and reason given, for its current generation, and returns it.
func (e *env) waitReady(name string, status metav1.ConditionStatus, reason conditions.Reason) *cronjobv1.CronJob {
	e.t.Helper()
	return e.waitCronJob(name, func(cj *cronjobv1.CronJob) error {
		c := conditions.Find(cj.Status.Conditions, conditions.TypeReady)
		switch {
		case c == nil:
			return errors.New("no Ready condition")
		case c.Status != status || c.Reason != string(reason):
			return fmt.Errorf("Ready is %s/%s (%q), want %s/%s", c.Status, c.Reason, c.Message, status, reason)
		case c.ObservedGeneration != cj.Generation:
			return fmt.Errorf("Ready describes generation %d, object is at %d", c.ObservedGeneration, cj.Generation)
		}
		return nil
	})
}

// waitCronJob waits until check accepts the CronJob named, and returns it.
func (e *env) waitCronJob(name string, check func(*cronjobv1.CronJob) error) *cronjobv1.CronJob {
	e.t.Helper()
	var got *cronjobv1.CronJob
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		cj := &cronjobv1.CronJob{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, cj); err != nil {
			return err
		}
		if err := check(cj); err != nil {
			return err
		}
		got = cj
		return nil
	})
	return got
}

// jobs returns the Jobs labelled for the CronJob named, sorted by name.
func (e *env) jobs(ctx context.Context, name string) ([]batchv1.Job, error) {
	var list batchv1.JobList
	if err := e.c.List(ctx, &list, client.InNamespace(e.ns), client.MatchingLabels{LabelCronJob: name}); err != nil {
		return nil, err
	}
	slices.SortFunc(list.Items, func(x, y batchv1.Job) int { return strings.Compare(x.Name, y.Name) })
	return list.Items, nil
}

// waitJobs waits until the Jobs of the CronJob named are exactly those
// named want, and returns them sorted by name.
func (e *env) waitJobs(name string, want ...string) []batchv1.Job {
	e.t.Helper()
	slices.Sort(want)
	if want == nil {
		want = []string{}
	}
	var got []batchv1.Job
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		jobs, err := e.jobs(ctx, name)
		if err != nil {
			return err
		}
		names := []string{}
		for _, j := range jobs {
			names = append(names, j.Name)
		}
		if diff := cmp.Diff(want, names); diff != "" {
			return fmt.Errorf("jobs of %s (-want +got):\n%s", name, diff)
		}
		got = jobs
		return nil
	})
	return got
}

// finish marks the Job named as succeeded or failed through its status
// subresource, the way the Job controller would.
func (e *env) finish(jobName string, succeeded bool) {
	e.t.Helper()
	job := &batchv1.Job{}
	if err := e.c.Get(e.t.Context(), client.ObjectKey{Namespace: e.ns, Name: jobName}, job); err != nil {
		e.t.Fatalf("get job %s: %v", jobName, err)
	}
	now := metav1.Now()
	started := metav1.NewTime(now.Add(-time.Second))
	job.Status.StartTime = &started
	cond := func(typ batchv1.JobConditionType, reason string) batchv1.JobCondition {
		return batchv1.JobCondition{
			Type: typ, Status: corev1.ConditionTrue, Reason: reason,
			LastProbeTime: now, LastTransitionTime: now,
		}
	}
	if succeeded {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = []batchv1.JobCondition{
			cond(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached),
			cond(batchv1.JobComplete, batchv1.JobReasonCompletionsReached),
		}
	} else {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			cond(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded),
			cond(batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded),
		}
	}
	if err := e.c.Status().Update(e.t.Context(), job); err != nil {
		e.t.Fatalf("finish job %s: %v", jobName, err)
	}
}
