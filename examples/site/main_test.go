package site

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
)

// shared is the control plane, with the Site CRD installed, that the
// envtest tests of this package share. Each test runs its own manager and
// works in a namespace of its own. It runs the garbage collector, as a
// cluster does: the children of a Site go with it, since the operator
// sets owner references and no finalizer.
var shared = bosuntest.Shared{Options: func() (controlplane.Options, error) {
	opts, err := controlplane.OptionsFor(AddToScheme, CRDs)()
	opts.ControllerManager = true
	return opts, err
}}

func TestMain(m *testing.M) { shared.Main(m) }

// timeout bounds each wait of the envtest tests.
const timeout = 30 * time.Second

// env is what an envtest test works with: a client of its own, the test's
// namespace, and what the controller under test wrote, read and ran.
type env struct {
	t      *testing.T
	c      client.Client
	ns     string
	writes *bosuntest.WriteCounter
	reads  *readCounter
	passes *passLog
	// mgr is the manager the controller runs in; nil when the test runs
	// none.
	mgr ctrl.Manager
}

// start runs the Site controller, set up as SetupWithManager sets it up,
// over a new namespace until the test ends. Every watch of the controller
// keeps only the events of that namespace, so that the objects earlier
// tests left on the shared control plane wake nothing here. The
// controller's client counts its writes and its reads.
func start(t *testing.T) *env {
	t.Helper()
	cp := shared.ControlPlane(t)
	e := newEnv(t, cp)
	e.mgr = bosuntest.RunManager(t, cp, e.setup)
	return e
}

// newEnv makes the test's namespace on cp.
func newEnv(t *testing.T, cp *controlplane.ControlPlane) *env {
	t.Helper()
	return &env{
		t:      t,
		c:      cp.Client,
		ns:     bosuntest.Namespace(t, cp.Client),
		writes: &bosuntest.WriteCounter{},
		reads:  &readCounter{},
		passes: &passLog{},
	}
}

// setup registers the controller with mgr, through the counting clients,
// restricted to the test's namespace, and records its passes.
func (e *env) setup(mgr ctrl.Manager) error {
	bosun.ObservationOf(mgr).AddObserver(e.passes)
	c := e.passes.WrapClient(e.reads.wrap(e.writes.Wrap(mgr.GetClient())))
	here := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == e.ns })
	return setup(bosuntest.ManagerWithClient(mgr, c), here)
}

// readCounter counts the Gets of Sites and Secrets made through the
// clients it wraps, by "Kind name". The engine loads a Site with one Get
// per reconcile, so the count of a Site is the number of its reconciles;
// that of a Secret is the number of times a Site read it as its theme.
type readCounter struct {
	mu    sync.Mutex
	count map[string]int
}

func (r *readCounter) wrap(c client.Client) client.WithWatch {
	return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			kind := ""
			switch obj.(type) {
			case *sitev1.Site:
				kind = "Site"
			case *corev1.Secret:
				kind = "Secret"
			}
			if kind != "" {
				r.mu.Lock()
				if r.count == nil {
					r.count = map[string]int{}
				}
				r.count[kind+" "+key.Name]++
				r.mu.Unlock()
			}
			return cl.Get(ctx, key, obj, opts...)
		},
	})
}

// of returns the number of Gets of the object of kind named name.
func (r *readCounter) of(kind, name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count[kind+" "+name]
}

func (e *env) key(name string) client.ObjectKey { return client.ObjectKey{Namespace: e.ns, Name: name} }

// createSite creates a Site in the test's namespace.
func (e *env) createSite(name, title, theme string, pages ...string) *sitev1.Site {
	e.t.Helper()
	s := &sitev1.Site{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec:       sitev1.SiteSpec{Title: title, Pages: pages, ThemeSecret: theme},
	}
	if err := e.c.Create(e.t.Context(), s); err != nil {
		e.t.Fatalf("creating site %s: %v", name, err)
	}
	return s
}

// patchSite changes the Site name with change.
func (e *env) patchSite(name string, change func(*sitev1.Site)) {
	e.t.Helper()
	s := &sitev1.Site{}
	if err := e.c.Get(e.t.Context(), e.key(name), s); err != nil {
		e.t.Fatalf("reading site %s: %v", name, err)
	}
	base := s.DeepCopy()
	change(s)
	if err := e.c.Patch(e.t.Context(), s, client.MergeFrom(base)); err != nil {
		e.t.Fatalf("patching site %s: %v", name, err)
	}
}

// touch is the passes' Touch of the Site name.
func (e *env) touch(name, value string) {
	e.t.Helper()
	e.passes.Touch(e.t, e.c, &sitev1.Site{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}}, value)
}

// passesEnded waits until every pass of the Site name that has begun (by
// its Get of the Site) has ended (and been reported), and returns their
// reports.
func (e *env) passesEnded(name string) []bosun.PassReport {
	e.t.Helper()
	var rs []bosun.PassReport
	bosuntest.Eventually(e.t, func(context.Context) error {
		begun := e.reads.of("Site", name)
		rs = e.passes.of(name)
		if len(rs) < begun {
			return fmt.Errorf("%d passes of Site %s begun, %d ended", begun, name, len(rs))
		}
		return nil
	}, bosuntest.Timeout(timeout))
	return rs
}

// window is bosuntest.Window with the Site clock.
func (e *env) window(clock string, d time.Duration, n int) {
	e.t.Helper()
	s := &sitev1.Site{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: clock}}
	bosuntest.Window(e.t, e.c, s, func() int { return len(e.passes.of(clock)) }, d, n)
}

// waitCached waits until the cache of the controller's manager holds every
// child of the Site site: the ConfigMap of each of its pages and its
// Service.
func (e *env) waitCached(site string, pages ...string) {
	e.t.Helper()
	c := e.mgr.GetClient()
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		for _, page := range pages {
			if err := c.Get(ctx, e.key(site+"-"+page), &corev1.ConfigMap{}); err != nil {
				return fmt.Errorf("page %s in the cache: %w", page, err)
			}
		}
		if err := c.Get(ctx, e.key(site), &corev1.Service{}); err != nil {
			return fmt.Errorf("service in the cache: %w", err)
		}
		return nil
	}, bosuntest.Timeout(timeout))
}

// setTheme creates or replaces the Secret name with data.
func (e *env) setTheme(name string, data map[string]string) {
	e.t.Helper()
	s := &corev1.Secret{}
	err := e.c.Get(e.t.Context(), e.key(name), s)
	switch {
	case apierrors.IsNotFound(err):
		s = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}, StringData: data}
		err = e.c.Create(e.t.Context(), s)
	case err == nil:
		s.Data, s.StringData = nil, data
		err = e.c.Update(e.t.Context(), s)
	}
	if err != nil {
		e.t.Fatalf("setting secret %s: %v", name, err)
	}
}

// cond is a condition by the fields the tests check.
type cond struct {
	Status metav1.ConditionStatus
	Reason string
}

var (
	ready = map[string]cond{
		conditions.TypeReady:           {metav1.ConditionTrue, string(conditions.ReasonSucceeded)},
		sitev1.ConditionConfigMapReady: {metav1.ConditionTrue, "Ready"},
		sitev1.ConditionServiceReady:   {metav1.ConditionTrue, "Ready"},
	}
	themeNotFound = map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, string(sitev1.ReasonThemeNotFound)}}
	invalidTheme  = map[string]cond{conditions.TypeReady: {metav1.ConditionFalse, string(sitev1.ReasonInvalidTheme)}}
)

// waitConditions waits until the Site name has the conditions want, for
// its current generation as status.observedGeneration is, and returns it.
func (e *env) waitConditions(name string, want map[string]cond) *sitev1.Site {
	e.t.Helper()
	return e.waitSite(name, want, func(*sitev1.Site) error { return nil })
}

// waitSite waits until the Site name has the conditions want and passes
// check, and returns it.
func (e *env) waitSite(name string, want map[string]cond, check func(*sitev1.Site) error) *sitev1.Site {
	e.t.Helper()
	s := &sitev1.Site{}
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, e.key(name), s); err != nil {
			return err
		}
		if s.Status.ObservedGeneration != s.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", s.Status.ObservedGeneration, s.Generation)
		}
		for typ, c := range want {
			got := conditions.Find(s.Status.Conditions, typ)
			switch {
			case got == nil:
				return errors.New("no " + typ + " condition")
			case got.Status != c.Status || got.Reason != c.Reason:
				return fmt.Errorf("%s is %s/%s (%q), want %s/%s", typ, got.Status, got.Reason, got.Message, c.Status, c.Reason)
			case got.ObservedGeneration != s.Generation:
				return fmt.Errorf("%s is for generation %d, want %d", typ, got.ObservedGeneration, s.Generation)
			}
		}
		return check(s)
	}, bosuntest.Timeout(timeout))
	return s
}

// pageMaps returns the ConfigMaps of the pages of the Site site, by page
// name: the members of the set that carry the Site's name, but those being
// deleted.
func (e *env) pageMaps(site string) map[string]corev1.ConfigMap {
	e.t.Helper()
	var list corev1.ConfigMapList
	err := e.c.List(e.t.Context(), &list, client.InNamespace(e.ns),
		client.MatchingLabels{children.LabelSet: ControllerName, LabelName: site})
	if err != nil {
		e.t.Fatalf("listing configmaps: %v", err)
	}
	out := map[string]corev1.ConfigMap{}
	for _, cm := range list.Items {
		if cm.DeletionTimestamp.IsZero() {
			out[cm.Labels[LabelPage]] = cm
		}
	}
	return out
}

// waitPages waits until the pages of the Site site, by page name, are
// exactly those of want, each holding the HTML Render makes of it.
func (e *env) waitPages(site string, want map[string]Page) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(context.Context) error {
		got := e.pageMaps(site)
		if len(got) != len(want) {
			return fmt.Errorf("%d pages %v, want %d", len(got), keys(got), len(want))
		}
		for name, p := range want {
			cm, ok := got[name]
			if !ok {
				return fmt.Errorf("no page %q: have %v", name, keys(got))
			}
			html, err := Render(p)
			if err != nil {
				return err
			}
			if cm.Data[PageKey] != html {
				return fmt.Errorf("page %q is\n%s\nwant\n%s", name, cm.Data[PageKey], html)
			}
		}
		return nil
	}, bosuntest.Timeout(timeout))
}

// pagesOf returns what Render makes each page of a site from.
func pagesOf(title, css string, pages ...string) map[string]Page {
	out := map[string]Page{}
	for _, p := range pages {
		out[p] = Page{Title: title, Name: p, Pages: pages, CSS: css}
	}
	return out
}

// keys returns the keys of m, sorted.
func keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// passLog keeps the reports of the passes of the controller, by Site name,
// and records them in its ReconcileCounter too, which notes the Sites the
// controller loads for its Touch.
type passLog struct {
	bosuntest.ReconcileCounter
	mu      sync.Mutex
	reports map[string][]bosun.PassReport
}

// ObservePass implements bosun.PassObserver.
func (l *passLog) ObservePass(_ context.Context, r bosun.PassReport) {
	l.Record(bosuntest.ReconcileCall{Request: reconcile.Request{NamespacedName: r.Object}, Start: r.Start, Duration: r.Duration})
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reports == nil {
		l.reports = map[string][]bosun.PassReport{}
	}
	l.reports[r.Object.Name] = append(l.reports[r.Object.Name], r)
}

// of returns the reports of the passes of the Site name, in the order they
// ended.
func (l *passLog) of(name string) []bosun.PassReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reports[name])
}

// ownChild reports whether t is the event of a child of the Site site,
// through the Owns watch on the children's kinds.
func ownChild(t bosun.Trigger, site string) bool {
	if t.Kind != "Watch" || t.Source != "Owns" {
		return false
	}
	return t.Object.Name == site || strings.HasPrefix(t.Object.Name, site+"-")
}
