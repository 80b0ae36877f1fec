package bosuntest_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
)

// A WriteCounter counts the writes made through the clients it wraps, per
// operation and kind. Here it wraps an in-memory client; in a test it wraps
// the client of the controller under test.
func ExampleWriteCounter() {
	ctx := context.Background()
	var counter bosuntest.WriteCounter
	c := counter.Wrap(fake.NewClientBuilder().WithStatusSubresource(&corev1.Pod{}).Build())

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	_ = c.Create(ctx, pod)
	pod.Status.Message = "ready"
	_ = c.Status().Update(ctx, pod)
	_ = c.Get(ctx, client.ObjectKeyFromObject(pod), pod) // reads are not counted
	_ = c.Delete(ctx, pod)

	counts := counter.Counts()
	for _, op := range slices.Sorted(maps.Keys(counts)) {
		fmt.Println(op, counts[op])
	}
	fmt.Println("total", counter.Total())
	fmt.Println("last", counter.Writes()[counter.Total()-1])
	// Output:
	// create Pod 1
	// delete Pod 1
	// update status Pod 1
	// total 3
	// last delete Pod default/web
}

// A ConflictInjector answers chosen writes with a 409 Conflict without making
// them. Here the first update conflicts and the retry goes through.
func ExampleConflictInjector() {
	ctx := context.Background()
	injector := &bosuntest.ConflictInjector{Fraction: 1, Verbs: []string{"update"}, Limit: 1}
	c := injector.Wrap(fake.NewClientBuilder().Build())

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}}
	fmt.Println("create:", c.Create(ctx, cm))
	err := c.Update(ctx, cm)
	fmt.Println("update conflicts:", apierrors.IsConflict(err), bosuntest.IsInjectedConflict(err))
	fmt.Println("retry:", c.Update(ctx, cm))
	fmt.Println("injected:", injector.InjectedWrites())
	// Output:
	// create: <nil>
	// update conflicts: true true
	// retry: <nil>
	// injected: [update ConfigMap default/settings]
}

// Counting the writes of a controller in a manager, some of which conflict:
// the counter wraps the injector, so it sees the writes the injector refuses
// too, and the log recorder catches what the controller logs.
func ExampleManagerWithClient() {
	testController := func(t *testing.T) {
		cp := bosuntest.Start(t, controlplane.Options{})
		injector := &bosuntest.ConflictInjector{Fraction: 0.3, Seed: 1, Verbs: []string{"update", "patch status"}}
		var writes bosuntest.WriteCounter
		var logs bosuntest.LogRecorder
		bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
			mgr = bosuntest.ManagerWithClient(mgr, writes.Wrap(injector.Wrap(mgr.GetClient())))
			mgr = bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger()))
			// Register the controller under test with mgr here.
			return nil
		})

		// ... create objects, wait for the controller with Eventually ...

		for _, e := range logs.Errors() {
			if apierrors.IsConflict(e.Err) {
				t.Errorf("a conflict was logged as an error: %s", e)
			}
		}
		t.Logf("%d writes, %d conflicts", writes.Total(), injector.Injected())
	}
	_ = testController
}

// Sharing the counting client with a manager built by the test itself.
func ExampleNewClientFunc() {
	var writes bosuntest.WriteCounter
	injector := &bosuntest.ConflictInjector{Fraction: 0.5, Verbs: []string{"update"}}
	opts := ctrl.Options{NewClient: bosuntest.NewClientFunc(injector.Wrap, writes.Wrap)}
	_ = opts // ctrl.NewManager(cfg, opts)
}

// A ReconcileCounter counts the calls of a reconciler per object, to check
// that a controller settles.
func ExampleReconcileCounter() {
	var counter bosuntest.ReconcileCounter
	r := counter.Wrap(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
		return reconcile.Result{}, errors.New("not yet")
	}))
	key := types.NamespacedName{Namespace: "default", Name: "web"}
	mark := time.Now()
	for range 3 {
		_, _ = r.Reconcile(context.Background(), reconcile.Request{NamespacedName: key})
	}
	fmt.Println("calls:", counter.Count(key), counter.CountSince(key, mark))
	fmt.Println("last error:", counter.Calls()[2].Err)
	// Output:
	// calls: 3 3
	// last error: not yet
}

// A LogRecorder keeps every line logged through its loggers.
func ExampleLogRecorder() {
	var logs bosuntest.LogRecorder
	log := logs.Logger().WithName("greeting").WithValues("object", "default/hello")
	log.V(1).Info("rendering", "step", "configmap")
	log.Error(errors.New("quota exceeded"), "saving failed")

	for _, e := range logs.Entries() {
		fmt.Println(e)
	}
	obj, _ := logs.Errors()[0].Value("object")
	fmt.Println("error about", obj)
	// Output:
	// V1 greeting: rendering object="default/hello" step="configmap"
	// ERROR greeting: saving failed err="quota exceeded" object="default/hello"
	// error about default/hello
}
