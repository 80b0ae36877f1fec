package operator_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/operator"
)

// TestPlanGuardsClientsOfTheOperator runs, under --plan, an operator that
// adds to its manager a runnable that writes through clients of its own,
// one controller-runtime client built from the manager's rest.Config and
// one client-go clientset (as a storage migration or a leader runnable
// would): nothing reaches the cluster, and the plan counts those writes.
func TestPlanGuardsClientsOfTheOperator(t *testing.T) {
	cp, ns, w, before := planGuardWidget(t)
	ctx := t.Context()

	opts := stepsOperator("guarded", ns, greetings("hello", false))
	setup := opts.Setup
	wrote := make(chan error, 1)
	opts.Setup = func(mgr ctrl.Manager) error {
		if err := setup(mgr); err != nil {
			return err
		}
		own, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), HTTPClient: mgr.GetHTTPClient()})
		if err != nil {
			return err
		}
		cs, err := kubernetes.NewForConfig(mgr.GetConfig())
		if err != nil {
			return err
		}
		return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-a-runnable"}, Data: map[string]string{"k": "v"}}
			err := own.Create(ctx, cm)
			if err == nil {
				patch := client.MergeFrom(w.DeepCopy())
				changed := w.DeepCopy()
				changed.Annotations = map[string]string{"written": "by a runnable"}
				err = own.Patch(ctx, changed, patch)
			}
			if err == nil {
				_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "by-a-clientset"}}, metav1.CreateOptions{})
			}
			if err == nil {
				err = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
			}
			wrote <- err
			<-ctx.Done()
			return nil
		}))
	}
	report := runPlan(t, opts)
	if err := <-wrote; err != nil {
		t.Errorf("the runnable's writes: %v, want them answered as dry runs", err)
	}
	if !strings.Contains(report, "writes of other clients of the operator, sent as dry runs: 4") {
		t.Errorf("the plan does not count the runnable's 4 writes:\n%s", report)
	}
	for _, name := range []string{"by-a-runnable", "by-a-clientset"} {
		err := cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.ConfigMap{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("ConfigMap %s: %v, want it never created", name, err)
		}
	}
	var got corev1.Namespace
	if err := cp.Client.Get(ctx, client.ObjectKey{Name: ns}, &got); err != nil || got.DeletionTimestamp != nil {
		t.Errorf("namespace %s: %v, deleting %v; want it untouched", ns, err, got.DeletionTimestamp)
	}
	after := snapshot(ctx, t, cp.Client, ns)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("--plan changed %s: %s -> %s", k, v, after[k])
		}
	}
}

// fakeMigration is a runnable with a Migrate method, as a
// migrate.Migrator is: as a runnable it migrates once and waits.
type fakeMigration struct {
	calls   atomic.Int32
	migrate func(ctx context.Context) error
}

func (m *fakeMigration) Start(ctx context.Context) error {
	_ = m.Migrate(ctx)
	<-ctx.Done()
	return nil
}

func (m *fakeMigration) Migrate(ctx context.Context) error {
	m.calls.Add(1)
	return m.migrate(ctx)
}

// TestPlanRunsMigrations runs, under --plan, an operator whose Setup adds
// two migrations (runnables with a Migrate method, as a migrate.Migrator):
// one that writes through a client of its own once the Widget's pass has
// ended, one that fails. The plan runs each once, beside the passes, and
// waits for both before it reports: the report lists the first one's write
// as a dry run and says the second failed, the plan fails with its error,
// and the cluster is unchanged.
func TestPlanRunsMigrations(t *testing.T) {
	cp, ns, _, before := planGuardWidget(t)
	ctx := t.Context()

	failure := errors.New("the second migration fails")
	failing := &fakeMigration{migrate: func(context.Context) error { return failure }}
	var writing *fakeMigration
	opts := stepsOperator("migrating", ns, greetings("hello", false))
	setup := opts.Setup
	opts.Setup = func(mgr ctrl.Manager) error {
		if err := setup(mgr); err != nil {
			return err
		}
		passed := make(chan struct{})
		var once sync.Once
		bosun.ObservationOf(mgr).AddObserver(bosun.PassObserverFunc(func(context.Context, bosun.PassReport) { once.Do(func() { close(passed) }) }))
		own, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), HTTPClient: mgr.GetHTTPClient()})
		if err != nil {
			return err
		}
		writing = &fakeMigration{migrate: func(ctx context.Context) error {
			select {
			case <-passed:
			case <-ctx.Done():
				return ctx.Err()
			}
			return own.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "by-a-migration"}})
		}}
		if err := mgr.Add(writing); err != nil {
			return err
		}
		return mgr.Add(failing)
	}
	flags := planFlags()
	flags.Plan = true
	pctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out := &syncBuffer{}
	err := operator.Run(pctx, opts, flags, out)
	report := out.String()
	t.Logf("--plan printed:\n%s", report)
	if !errors.Is(err, failure) {
		t.Errorf("--plan: %v, want the failed migration's error", err)
	}
	if !strings.Contains(report, "a migration failed: "+failure.Error()) {
		t.Errorf("the report does not say the second migration failed")
	}
	write := "POST /api/v1/namespaces/" + ns + "/configmaps"
	if forced := strings.Contains(report, "sent as dry runs: 1\n  "+write+"\n"); !forced {
		t.Errorf("the report does not list the first migration's write %q as a dry run", write)
	}
	if n, m := writing.calls.Load(), failing.calls.Load(); n != 1 || m != 1 {
		t.Errorf("the migrations ran %d and %d times, want once each", n, m)
	}
	err = cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "by-a-migration"}, &corev1.ConfigMap{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the migration's ConfigMap: %v, want it never created", err)
	}
	after := snapshot(ctx, t, cp.Client, ns)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("--plan changed %s: %s -> %s", k, v, after[k])
		}
	}
}

// planGuardWidget makes a Widget "a" in a namespace of its own of the
// shared control plane, points the kubeconfig at it, and returns the
// snapshot of the namespace before a plan.
func planGuardWidget(t *testing.T) (*controlplane.ControlPlane, string, *testapi.Widget, map[string]string) {
	cp := shared.ControlPlane(t)
	useKubeconfig(t, cp)
	ns := bosuntest.Namespace(t, cp.Client)
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}, Spec: testapi.WidgetSpec{Value: 1}}
	if err := cp.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	return cp, ns, w, snapshot(t.Context(), t, cp.Client, ns)
}
