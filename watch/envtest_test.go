package watch_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/watch"
)

// The tests in this file run real controllers against a real kube-apiserver:
// parents and related objects are built-in kinds, each controller records
// which parents it reconciles, and each test changes related objects and
// checks that exactly the right parents were woken.

// configMap returns a ConfigMap with data (nil: none) and labels.
func configMap(ns, name string, data, lbls map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls}, Data: data}
}

func newSecret(ns, name string, lbls map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls}}
}

func key(obj client.Object) client.ObjectKey { return client.ObjectKeyFromObject(obj) }

// ConfigMaps name a Secret in data["secret"]; an event on a Secret wakes
// the ConfigMaps of its namespace that name it, through IndexField and
// ByIndex on controller-runtime's builder.
func TestByIndexWakesTheParentsThatNameTheObject(t *testing.T) {
	e := newEnv(t)
	const field = "data.secret"
	parent := func(ns, name, secretName string) *corev1.ConfigMap {
		if secretName == "" {
			return configMap(ns, name, nil, nil)
		}
		return configMap(ns, name, map[string]string{"secret": secretName}, nil)
	}
	a, b, c, d := parent(e.ns, "a", "s1"), parent(e.ns, "b", "s1"), parent(e.ns, "c", "s2"), parent(e.ns, "d", "")
	far := parent(e.other, "a", "s1")
	e.create(a, b, c, d, far)

	rec := newRecorder()
	bosuntest.RunManager(t, e.cp, func(mgr ctrl.Manager) error {
		err := watch.IndexField(t.Context(), mgr, field, func(cm *corev1.ConfigMap) []string {
			return []string{cm.Data["secret"]}
		})
		if err != nil {
			return err
		}
		mine := builder.WithPredicates(inNamespaces(e.ns, e.other))
		return ctrl.NewControllerManagedBy(mgr).Named("byindex-"+e.ns).
			For(&corev1.ConfigMap{}, mine).
			Watches(&corev1.Secret{}, watch.ByIndex(mgr.GetCache(), &corev1.ConfigMapList{}, field), mine).
			Complete(rec.reconciler(nil))
	})
	start(t, rec, key(a), key(b), key(c), key(d), key(far))

	s1 := newSecret(e.ns, "s1", nil)
	e.create(s1)
	expectWoken(t, rec, "create s1", key(a), key(b))

	e.change(s1, func() { s1.Labels = map[string]string{"rotated": "yes"} })
	expectWoken(t, rec, "update s1", key(a), key(b))

	e.create(newSecret(e.other, "s1", nil))
	expectWoken(t, rec, "create s1 in the other namespace", key(far))

	e.create(newSecret(e.ns, "s2", nil))
	expectWoken(t, rec, "create s2", key(c))

	e.change(c, func() { c.Data["secret"] = "s1" })
	expectWoken(t, rec, "c names s1 now", key(c))
	e.delete(s1)
	expectWoken(t, rec, "delete s1", key(a), key(b), key(c))
}

// Referenced on a bosun.Builder: the engine reconciles ConfigMaps that name
// several Secrets in data["secrets"], and a Secret's event wakes those that
// name it.
func TestReferencedOnTheEngine(t *testing.T) {
	e := newEnv(t)
	parent := func(ns, name, secrets string) *corev1.ConfigMap {
		if secrets == "" {
			return configMap(ns, name, nil, nil)
		}
		return configMap(ns, name, map[string]string{"secrets": secrets}, nil)
	}
	a, b, c, d := parent(e.ns, "a", "s1"), parent(e.ns, "b", "s1,s2"), parent(e.ns, "c", "s2"), parent(e.ns, "d", "")
	far := parent(e.other, "e", "s1")
	e.create(a, b, c, d, far)

	rec := newRecorder()
	bosuntest.RunManager(t, e.cp, func(mgr ctrl.Manager) error {
		record := bosun.NewStep("record", func(_ context.Context, req *bosun.Pass[*corev1.ConfigMap]) (ctrl.Result, error) {
			rec.record(key(req.Object))
			return ctrl.Result{}, nil
		})
		mine := builder.WithPredicates(inNamespaces(e.ns, e.other))
		secrets := watch.Referenced(&corev1.Secret{}, "data.secrets", func(cm *corev1.ConfigMap) []string {
			return strings.Split(cm.Data["secrets"], ",")
		}, mine)
		r := &bosun.Reconciler[*corev1.ConfigMap]{Name: "referenced-" + e.ns, Steps: []bosun.Step[*corev1.ConfigMap]{bosun.WithSetup(record, secrets)}}
		return bosun.ControllerManagedBy[*corev1.ConfigMap](mgr).For(nil, mine).Complete(r)
	})
	start(t, rec, key(a), key(b), key(c), key(d), key(far))

	s1 := newSecret(e.ns, "s1", nil)
	e.create(s1)
	expectWoken(t, rec, "create s1", key(a), key(b))

	s2 := newSecret(e.ns, "s2", nil)
	e.create(s2)
	expectWoken(t, rec, "create s2", key(b), key(c))

	e.change(c, func() { c.Data["secrets"] = "s3" })
	expectWoken(t, rec, "c names s3 instead of s2", key(c))
	e.change(s2, func() { s2.Labels = map[string]string{"rotated": "yes"} })
	expectWoken(t, rec, "update s2", key(b))

	e.create(newSecret(e.other, "s1", nil))
	expectWoken(t, rec, "create s1 in the other namespace", key(far))

	e.delete(s1)
	expectWoken(t, rec, "delete s1", key(a), key(b))
}

// serviceSelector selects like a Service: nothing when spec.selector is
// empty.
func serviceSelector(s *corev1.Service) (labels.Selector, error) {
	if len(s.Spec.Selector) == 0 {
		return nil, nil
	}
	return labels.SelectorFromSet(s.Spec.Selector), nil
}

// Services select ConfigMaps by their labels: a ConfigMap's event wakes the
// Services of its namespace whose selector matches its labels before or
// after the change.
func TestBySelectorWakesTheParentsThatSelectTheObject(t *testing.T) {
	e := newEnv(t)
	service := func(ns, name string, sel map[string]string) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       corev1.ServiceSpec{Selector: sel, Ports: []corev1.ServicePort{{Port: 80}}},
		}
	}
	web := service(e.ns, "web", map[string]string{"app": "web"})
	canary := service(e.ns, "canary", map[string]string{"app": "web", "track": "canary"})
	db := service(e.ns, "db", map[string]string{"app": "db"})
	none := service(e.ns, "none", nil)
	far := service(e.other, "web", map[string]string{"app": "web"})
	e.create(web, canary, db, none, far)

	rec := newRecorder()
	bosuntest.RunManager(t, e.cp, func(mgr ctrl.Manager) error {
		mine := builder.WithPredicates(inNamespaces(e.ns, e.other))
		return ctrl.NewControllerManagedBy(mgr).Named("byselector-"+e.ns).
			For(&corev1.Service{}, mine).
			Watches(&corev1.ConfigMap{}, watch.BySelector(mgr.GetCache(), &corev1.ServiceList{}, serviceSelector), mine).
			Complete(rec.reconciler(nil))
	})
	start(t, rec, key(web), key(canary), key(db), key(none), key(far))

	x := configMap(e.ns, "x", nil, map[string]string{"app": "web"})
	e.create(x)
	expectWoken(t, rec, "create x app=web", key(web))

	e.change(x, func() { x.Labels["track"] = "canary" })
	expectWoken(t, rec, "x joins the canary track", key(web), key(canary))

	e.change(x, func() { x.Labels = map[string]string{"app": "db"} })
	expectWoken(t, rec, "x moves to app=db", key(web), key(canary), key(db))

	e.create(configMap(e.other, "x", nil, map[string]string{"app": "web"}))
	expectWoken(t, rec, "create x in the other namespace", key(far))

	// y, without labels, wakes nobody; z comes after it through the same
	// watch, so once z's parent is woken y's event has been handled.
	e.create(configMap(e.ns, "y", nil, nil), configMap(e.ns, "z", nil, map[string]string{"app": "db"}))
	expectWoken(t, rec, "create y without labels and z app=db", key(db))

	e.delete(x)
	expectWoken(t, rec, "delete x", key(db))
}

// Secrets name their parent ConfigMap in labels, with its namespace in
// another label or else their own.
func TestByLabelsWakesTheParentNamedInLabels(t *testing.T) {
	e := newEnv(t)
	const nameLabel, nsLabel = "watch.test.bosun.dev/parent", "watch.test.bosun.dev/parent-namespace"
	a, b := configMap(e.ns, "a", nil, nil), configMap(e.ns, "b", nil, nil)
	e.create(a, b)

	rec := newRecorder()
	bosuntest.RunManager(t, e.cp, func(mgr ctrl.Manager) error {
		mine := builder.WithPredicates(inNamespaces(e.ns, e.other))
		return ctrl.NewControllerManagedBy(mgr).Named("bylabels-"+e.ns).
			For(&corev1.ConfigMap{}, mine).
			Watches(&corev1.Secret{}, watch.ByLabels(nameLabel, nsLabel), mine).
			Complete(rec.reconciler(nil))
	})
	start(t, rec, key(a), key(b))

	s1 := newSecret(e.ns, "s1", map[string]string{nameLabel: "a"})
	e.create(s1)
	expectWoken(t, rec, "create s1 naming a", key(a))

	e.create(newSecret(e.other, "s2", map[string]string{nameLabel: "b", nsLabel: e.ns}))
	expectWoken(t, rec, "create s2 in the other namespace naming ns/b", key(b))

	e.change(s1, func() { s1.Labels[nameLabel] = "b" })
	expectWoken(t, rec, "s1 names b instead of a", key(a), key(b))

	// s3 has no labels and wakes nobody; s4 names an object that does not
	// exist, and the controller is asked for it all the same.
	e.create(newSecret(e.ns, "s3", nil), newSecret(e.ns, "s4", map[string]string{nameLabel: "ghost"}))
	expectWoken(t, rec, "create s3 without labels and s4 naming ghost", e.key("ghost"))
}

// A controller reads, in each reconcile, the ConfigMap that its parent (a
// ConfigMap labelled as one) names in data["reads"], through Tracker.Get.
// Changes of a read object wake the parents that read it, even one that was
// missing when read; a parent that stops reading an object is woken by it
// once more after the lease, then no more; a deleted parent is forgotten.
func TestTrackerWakesTheParentsThatReadTheObject(t *testing.T) {
	e := newEnv(t)
	const parentLabel = "watch.test.bosun.dev/parent"
	const lease = time.Minute
	parent := func(name, reads string) *corev1.ConfigMap {
		return configMap(e.ns, name, map[string]string{"reads": reads}, map[string]string{parentLabel: "true"})
	}
	p1, p2, p3 := parent("p1", "a"), parent("p2", "b"), parent("p3", "a")
	e.create(p1, p2, p3)

	clk := clocktesting.NewFakeClock(time.Now())
	tracker := watch.NewTracker(nil, watch.WithLease(lease), watch.WithClock(clk))
	rec := newRecorder()
	bosuntest.RunManager(t, e.cp, func(mgr ctrl.Manager) error {
		c := mgr.GetClient()
		read := func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			p := &corev1.ConfigMap{}
			if err := c.Get(ctx, req.NamespacedName, p); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			err := tracker.Get(ctx, c, p, client.ObjectKey{Namespace: p.Namespace, Name: p.Data["reads"]}, &corev1.ConfigMap{})
			if err != nil && !apierrors.IsNotFound(err) {
				return reconcile.Result{}, err
			}
			return reconcile.Result{}, nil
		}
		isParent := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[parentLabel] == "true" })
		return ctrl.NewControllerManagedBy(mgr).Named("tracker-"+e.ns).
			For(&corev1.ConfigMap{}, builder.WithPredicates(inNamespaces(e.ns), isParent)).
			Watches(&corev1.ConfigMap{}, tracker.Handler(), builder.WithPredicates(inNamespaces(e.ns))).
			Watches(&corev1.ConfigMap{}, tracker.ForgetOnDelete(), builder.WithPredicates(inNamespaces(e.ns), isParent)).
			Complete(rec.reconciler(read))
	})
	start(t, rec, key(p1), key(p2), key(p3))
	references := func(parent client.Object) []string {
		out := []string{}
		for _, r := range tracker.References(key(parent)) {
			out = append(out, r.String())
		}
		return out
	}
	if diff := cmp.Diff([]string{"ConfigMap " + e.ns + "/a"}, references(p1)); diff != "" {
		t.Errorf("p1 tracks (-want +got): the missing ConfigMap it looked for\n%s", diff)
	}

	a := configMap(e.ns, "a", nil, nil)
	e.create(a)
	expectWoken(t, rec, "create a", key(p1), key(p3))

	e.create(configMap(e.ns, "b", nil, nil))
	expectWoken(t, rec, "create b", key(p2))

	e.change(p1, func() { p1.Data["reads"] = "c" })
	expectWoken(t, rec, "p1 reads c instead of a", key(p1))
	e.change(a, func() { a.Data = map[string]string{"v": "1"} })
	expectWoken(t, rec, "update a within p1's lease", key(p1), key(p3))

	e.create(configMap(e.ns, "c", nil, nil))
	expectWoken(t, rec, "create c", key(p1))

	clk.Step(2 * lease)
	e.change(a, func() { a.Data["v"] = "2" })
	expectWoken(t, rec, "update a after the lease: last call for p1", key(p1), key(p3))
	e.change(a, func() { a.Data["v"] = "3" })
	expectWoken(t, rec, "update a again: only p3 still reads it", key(p3))
	if diff := cmp.Diff([]string{"ConfigMap " + e.ns + "/c"}, references(p1)); diff != "" {
		t.Errorf("p1 tracks (-want +got):\n%s", diff)
	}

	e.delete(p2)
	expectWoken(t, rec, "delete p2", key(p2))
	bosuntest.Eventually(t, func(context.Context) error {
		if refs := references(p2); len(refs) > 0 {
			return fmt.Errorf("deleted p2 still tracks %v", refs)
		}
		return nil
	})
	b := configMap(e.ns, "b", nil, nil)
	e.change(b, func() { b.Data = map[string]string{"v": "1"} })
	e.change(a, func() { a.Data["v"] = "4" })
	expectWoken(t, rec, "update b, then a, after p2 is gone", key(p3))
}
