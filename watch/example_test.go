package watch_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/watch"
)

// enqueued sends h an update event of obj (unchanged) and returns what it
// enqueued, as a controller's queue would receive it.
func enqueued(h handler.EventHandler, obj client.Object) []string {
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	h.Update(context.Background(), event.UpdateEvent{ObjectOld: obj, ObjectNew: obj}, q)
	var out []string
	for q.Len() > 0 {
		req, _ := q.Get()
		out = append(out, req.String())
		q.Done(req)
	}
	return out
}

// A Secret wakes the ConfigMaps of its namespace that name it in
// data["secret"]. In a controller the reader is the manager's cache and
// IndexField registers the index; here a fake client holds both.
func ExampleByIndex() {
	secretOf := func(o client.Object) []string { return []string{o.(*corev1.ConfigMap).Data["secret"]} }
	c := fake.NewClientBuilder().
		WithIndex(&corev1.ConfigMap{}, "data.secret", secretOf).
		WithObjects(
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Data: map[string]string{"secret": "tls"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api"}, Data: map[string]string{"secret": "tls"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}, Data: map[string]string{"secret": "db-password"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "blog", Name: "web"}, Data: map[string]string{"secret": "tls"}},
		).Build()

	h := watch.ByIndex(c, &corev1.ConfigMapList{}, "data.secret")
	fmt.Println(enqueued(h, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "tls"}}))
	// Output:
	// [shop/api shop/web]
}

// Referenced indexes the parents by the names they refer to and watches the
// related kind; the step that reads the Secrets carries it, so Complete
// wires it.
func ExampleReferenced() {
	setup := func(mgr ctrl.Manager, readSecrets bosun.Step[*corev1.ConfigMap]) error {
		secrets := watch.Referenced(&corev1.Secret{}, "data.secrets", func(cm *corev1.ConfigMap) []string {
			return strings.Split(cm.Data["secrets"], ",")
		})
		return bosun.ControllerManagedBy[*corev1.ConfigMap](mgr).Complete(&bosun.Reconciler[*corev1.ConfigMap]{
			Name:  "configmaps",
			Steps: []bosun.Step[*corev1.ConfigMap]{bosun.WithSetup(readSecrets, secrets)},
		})
	}
	_ = setup
}

// Services select Pods by label: a Pod's event wakes the Services of its
// namespace whose selector matches it. A Service without a selector
// selects nothing.
func ExampleBySelector() {
	svc := func(name string, sel map[string]string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}, Spec: corev1.ServiceSpec{Selector: sel}}
	}
	c := fake.NewClientBuilder().WithObjects(
		svc("web", map[string]string{"app": "web"}),
		svc("web-canary", map[string]string{"app": "web", "track": "canary"}),
		svc("db", map[string]string{"app": "db"}),
		svc("external", nil),
	).Build()

	h := watch.BySelector(c, &corev1.ServiceList{}, func(s *corev1.Service) (labels.Selector, error) {
		if len(s.Spec.Selector) == 0 {
			return nil, nil
		}
		return labels.SelectorFromSet(s.Spec.Selector), nil
	})
	stable := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", Labels: map[string]string{"app": "web"}}}
	canary := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-2", Labels: map[string]string{"app": "web", "track": "canary"}}}
	fmt.Println(enqueued(h, stable))
	fmt.Println(enqueued(h, canary))
	// Output:
	// [shop/web]
	// [shop/web shop/web-canary]
}

// A Secret that names its parent in labels wakes that parent, in the
// namespace its other label names or else in its own.
func ExampleByLabels() {
	h := watch.ByLabels("example.com/owner-name", "example.com/owner-namespace")
	fmt.Println(enqueued(h, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Namespace: "shop", Name: "web-tls",
		Labels: map[string]string{"example.com/owner-name": "web"},
	}}))
	fmt.Println(enqueued(h, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Namespace: "vault", Name: "shop-db",
		Labels: map[string]string{"example.com/owner-name": "db", "example.com/owner-namespace": "shop"},
	}}))
	fmt.Println(enqueued(h, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "unowned"}}))
	// Output:
	// [shop/web]
	// [shop/db]
	// []
}

// A parent tracked what it read; a change of that object wakes it. After
// the lease, the next change wakes it one last time: had it still read the
// object, that reconcile would have tracked it again.
func ExampleTracker() {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	tracker := watch.NewTracker(nil, watch.WithLease(time.Minute), watch.WithClock(clk))
	h := tracker.Handler()

	app := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "app"}}
	settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "settings"}}
	tracker.Track(app, corev1.SchemeGroupVersion.WithKind("ConfigMap"), client.ObjectKeyFromObject(settings))
	fmt.Println(tracker.References(client.ObjectKeyFromObject(app)))

	fmt.Println("fresh:", enqueued(h, settings))
	clk.Step(2 * time.Minute)
	fmt.Println("expired:", enqueued(h, settings))
	fmt.Println("dropped:", enqueued(h, settings))
	// Output:
	// [ConfigMap shop/settings]
	// fresh: [shop/app]
	// expired: [shop/app]
	// dropped: []
}

// A step reads the ConfigMap named in its object and tracks it in one
// call; the controller watches ConfigMaps with the tracker's handler, and
// the parents' own kind to forget deleted ones.
func ExampleTracker_Get() {
	setup := func(mgr ctrl.Manager) error {
		tracker := watch.NewTracker(mgr.GetScheme())
		readSettings := bosun.NewStep("readSettings", func(ctx context.Context, req *bosun.Pass[*corev1.Secret]) (ctrl.Result, error) {
			key := client.ObjectKey{Namespace: req.Object.Namespace, Name: req.Object.Annotations["example.com/settings"]}
			settings := &corev1.ConfigMap{}
			if err := tracker.Get(ctx, req.Client, req.Object, key, settings); err != nil {
				// Not found: wait; the ConfigMap's creation wakes the Secret.
				return ctrl.Result{}, client.IgnoreNotFound(err)
			}
			// ... use settings ...
			return ctrl.Result{}, nil
		})
		r := &bosun.Reconciler[*corev1.Secret]{Name: "secrets", Steps: []bosun.Step[*corev1.Secret]{readSettings}}
		return bosun.ControllerManagedBy[*corev1.Secret](mgr).
			Watches(&corev1.ConfigMap{}, tracker.Handler()).
			Watches(&corev1.Secret{}, tracker.ForgetOnDelete()).
			Complete(r)
	}
	_ = setup
}
