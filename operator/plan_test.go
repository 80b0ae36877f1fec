package operator_test

import (
	"context"

	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/managed"
	"github.com/bosunkit/bosun/operator"
)

// planFinalizer is the finalizer of the operators of the plan tests.
const planFinalizer = "test.bosun.dev/plan"

// stepsOperator is an operator of the Widgets in ns whose reconciler,
// called name, runs steps.
func stepsOperator(name, ns string, steps ...bosun.Step[*testapi.Widget]) operator.Options {
	return operator.Options{
		Name:        name,
		AddToScheme: testapi.AddToScheme,
		CRDs: func() ([]*apiextensionsv1.CustomResourceDefinition, error) {
			crd, err := testapi.CRD()
			return []*apiextensionsv1.CustomResourceDefinition{crd}, err
		},
		Setup: func(mgr ctrl.Manager) error {
			r := &bosun.Reconciler[*testapi.Widget]{Name: name, Finalizer: planFinalizer, Steps: steps}
			return bosun.ControllerManagedBy[*testapi.Widget](mgr).Named(name).Complete(r)
		},
		Manager: func(o *ctrl.Options) {
			o.Cache.DefaultNamespaces = map[string]cache.Config{ns: {}}
			o.Controller.SkipNameValidation = ptrTo(true)
		},
	}
}

// withBuild returns opts whose Setup names the operator's build, as an
// operator that knows its version from elsewhere than the build
// information does: the reconcilers record it on their objects.
func withBuild(opts operator.Options, build string) operator.Options {
	setup := opts.Setup
	opts.Setup = func(mgr ctrl.Manager) error {
		bosun.ObservationOf(mgr).Build = build
		return setup(mgr)
	}
	return opts
}

// greetings is the children step of a version of an operator: each
// Widget has a ConfigMap "<name>-config" with data key greeting, and, when
// extra is set, a ConfigMap "<name>-extra".
func greetings(greeting string, extra bool) bosun.Step[*testapi.Widget] {
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		name := req.Object.Name
		objs := []client.Object{&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-config"},
			Data:       map[string]string{"greeting": greeting},
		}}
		if extra {
			objs = append(objs, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: name + "-extra"},
				Data:       map[string]string{"added": "in v2"},
			})
		}
		return objs, nil
	}
	return children.NewStep("greetings", desired, []children.Kind{children.Of(&corev1.ConfigMap{})})
}

// planFlags are the flags of the plan tests' operators: no probes.
func planFlags() operator.Flags {
	flags := operator.DefaultFlags()
	flags.ProbeAddr = "0"
	return flags
}

// runPlan runs opts with --plan and returns what it printed.
func runPlan(t *testing.T, opts operator.Options) string {
	t.Helper()
	return runPlanWith(t, opts, planFlags())
}

// runPlanWith runs opts with flags and --plan and returns what it
// printed.
func runPlanWith(t *testing.T, opts operator.Options, flags operator.Flags) string {
	t.Helper()
	flags.Plan = true
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	out := &syncBuffer{}
	if err := operator.Run(ctx, opts, flags, out); err != nil {
		t.Fatalf("--plan: %v\n%s", err, out.String())
	}
	t.Logf("--plan printed:\n%s", out.String())
	return out.String()
}

// snapshot is what the plan tests compare before and after a plan: the
// Widgets' versions and status, the ConfigMaps' versions and data.
func snapshot(ctx context.Context, t *testing.T, c client.Client, ns string) map[string]string {
	t.Helper()
	got := map[string]string{}
	var ws testapi.WidgetList
	if err := c.List(ctx, &ws, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws.Items {
		got["Widget "+w.Name] = fmt.Sprintf("rv %s annotations %v status %+v", w.ResourceVersion, w.Annotations, w.Status)
	}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		if cm.Name == "kube-root-ca.crt" {
			continue
		}
		got["ConfigMap "+cm.Name] = fmt.Sprintf("rv %s data %v", cm.ResourceVersion, cm.Data)
	}
	return got
}

// TestPlanShowsAnUpgrade runs version 1 of an operator until its Widgets
// converge, then version 2, which changes a ConfigMap's data and adds a
// child, with --plan: the report lists, for each Widget, the data change,
// the new child's create, the patch of the build that reconciled it
// (bosun.dev/reconciled-by, "greeter=v1" to "greeter=v2") and the status change they
// bring (the count of ready children) and nothing else, with --tuning and
// without, and the cluster is as version 1 left it.
func TestPlanShowsAnUpgrade(t *testing.T) {
	cp := shared.ControlPlane(t)
	useKubeconfig(t, cp)
	ns := bosuntest.Namespace(t, cp.Client)
	ctx := t.Context()
	names := []string{"a", "b"}
	for _, n := range names {
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}, Spec: testapi.WidgetSpec{Value: 1}}
		if err := cp.Client.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
	}

	v1 := start(t, withBuild(stepsOperator("greeter", ns, greetings("hello", false)), "v1"), planFlags())
	for _, n := range names {
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}}
		bosuntest.Eventually(t, func(ctx context.Context) error {
			if err := ready(ctx, cp.Client, w, 0); err != nil {
				return err
			}
			if got := w.Annotations[bosun.AnnotationReconciledBy]; got != "greeter=v1" {
				return fmt.Errorf("widget %s reconciled by %q, want greeter=v1", n, got)
			}
			return nil
		})
	}
	if err := v1.stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	before := snapshot(ctx, t, cp.Client, ns)

	// With --tuning, the engine's status write asks for an answer cut to
	// its version: the plan's dry run takes the whole answer all the same.
	for _, tuned := range []bool{false, true} {
		flags := planFlags()
		flags.Tuning = tuned
		checkUpgradePlan(t, runPlanWith(t, withBuild(stepsOperator("greeter", ns, greetings("hello, world", true)), "v2"), flags), ns, names)
	}
	if diff := cmp.Diff(before, snapshot(ctx, t, cp.Client, ns)); diff != "" {
		t.Errorf("--plan changed the cluster (-before +after):\n%s", diff)
	}
}

// checkUpgradePlan checks the plan of TestPlanShowsAnUpgrade for each of
// the Widgets names of namespace ns.
func checkUpgradePlan(t *testing.T, report, ns string, names []string) {
	t.Helper()
	for _, n := range names {
		section := planSection(report, "Widget "+ns+"/"+n+" ")
		var verbs []string
		for _, line := range strings.Split(section, "\n") {
			if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "    ") {
				verbs = append(verbs, strings.TrimSpace(line))
			}
		}
		want := []string{
			"apply ConfigMap " + ns + "/" + n + "-config",
			"create ConfigMap " + ns + "/" + n + "-extra",
			// Version 2 would record its build on the Widget.
			"patch Widget " + ns + "/" + n,
			// The children step counts the ready children in its
			// condition: version 2 would write that too.
			"patch status Widget " + ns + "/" + n,
		}
		if diff := cmp.Diff(want, verbs); diff != "" {
			t.Errorf("writes planned for Widget %s (-want +got):\n%s", n, diff)
		}
		for _, line := range []string{
			`data.greeting: "hello" -> "hello, world"`,
			`data.added: "in v2"`,
			`metadata.annotations["bosun.dev/reconciled-by"]: "greeter=v1" -> "greeter=v2"`,
			`status.conditions[0].message: "1 ConfigMap ready" -> "2 ConfigMap ready"`,
		} {
			if !strings.Contains(section, line) {
				t.Errorf("the plan of Widget %s lacks %q:\n%s", n, line, section)
			}
		}
	}
}

// planSection returns the lines of report from the one that starts with
// header to the next object's.
func planSection(report, header string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(report, "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && !strings.HasPrefix(line, " "):
			return b.String()
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// fakeCloud is an external system that keeps a number per name, and counts
// the writes it is asked for.
type fakeCloud struct {
	mu      sync.Mutex
	values  map[string]int64
	owners  map[string]string
	updates int
}

func (f *fakeCloud) client() managed.ExternalClient[*testapi.Widget] {
	return managed.ExternalClientFuncs[*testapi.Widget]{
		ObserveFn: func(_ context.Context, w *testapi.Widget) (managed.Observation, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			v, ok := f.values[managed.ExternalName(w)]
			if !ok {
				return managed.Observation{}, nil
			}
			return managed.Observation{
				Exists: true, UpToDate: v == w.Spec.Value, Available: true,
				Owner: f.owners[managed.ExternalName(w)],
				Diff:  fmt.Sprintf("value %d, want %d", v, w.Spec.Value),
			}, nil
		},
		CreateFn: func(_ context.Context, w *testapi.Widget) (managed.Creation, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.values[managed.ExternalName(w)] = w.Spec.Value
			f.owners[managed.ExternalName(w)] = managed.Identity(w)
			return managed.Creation{}, nil
		},
		UpdateFn: func(_ context.Context, w *testapi.Widget) (managed.UpdateResult, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.updates++
			f.values[managed.ExternalName(w)] = w.Spec.Value
			return managed.UpdateResult{}, nil
		},
		DeleteFn: func(_ context.Context, w *testapi.Widget) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			delete(f.values, managed.ExternalName(w))
			return nil
		},
	}
}

func (f *fakeCloud) state() (map[string]int64, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	values := map[string]int64{}
	for k, v := range f.values {
		values[k] = v
	}
	return values, f.updates
}

// TestPlanRecordsExternalWrites: a Widget whose spec changed while no
// operator ran needs an Update of its external resource; --plan reports
// it and does not make it.
func TestPlanRecordsExternalWrites(t *testing.T) {
	cp := shared.ControlPlane(t)
	useKubeconfig(t, cp)
	ns := bosuntest.Namespace(t, cp.Client)
	ctx := t.Context()
	cloud := &fakeCloud{values: map[string]int64{}, owners: map[string]string{}}
	connector := managed.ConnectorFunc[*testapi.Widget](func(context.Context, *testapi.Widget) (managed.ExternalClient[*testapi.Widget], error) {
		return cloud.client(), nil
	})
	opts := stepsOperator("clouded", ns, managed.NewStep[*testapi.Widget](connector))

	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 1}}
	if err := cp.Client.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	r := start(t, opts, planFlags())
	bosuntest.Eventually(t, func(ctx context.Context) error { return ready(ctx, cp.Client, w, 0) })
	if err := r.stop(time.Minute); err != nil {
		t.Fatal(err)
	}
	name := ns + ".w"
	if got, _ := cloud.state(); got[name] != 1 {
		t.Fatalf("the cloud holds %v, want %s: 1", got, name)
	}

	// The spec changes while no operator runs.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		w.Spec.Value = 2
		return cp.Client.Update(ctx, w)
	})
	before := snapshot(ctx, t, cp.Client, ns)

	report := runPlan(t, opts)
	section := planSection(report, "Widget "+ns+"/w ")
	if want := fmt.Sprintf("external update %q (step ", name); !strings.Contains(section, want) {
		t.Errorf("the plan lacks %q:\n%s", want, report)
	}
	values, updates := cloud.state()
	if updates != 0 || values[name] != 1 {
		t.Errorf("after --plan the cloud holds %v after %d updates; want %s: 1 and none", values, updates, name)
	}
	if diff := cmp.Diff(before, snapshot(ctx, t, cp.Client, ns)); diff != "" {
		t.Errorf("--plan changed the cluster (-before +after):\n%s", diff)
	}
}

// TestPlanRefusesDev: a plan reports on a cluster that exists, not on the
// one --dev would start.
func TestPlanRefusesDev(t *testing.T) {
	flags := planFlags()
	flags.Plan, flags.Dev = true, true
	if err := operator.Run(t.Context(), widgets("plandev", ""), flags, io.Discard); !errors.Is(err, operator.ErrFlags) {
		t.Errorf("--plan --dev: %v, want ErrFlags", err)
	}
}
