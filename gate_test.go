package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
)

// gadgetValueField is the field index of Gadgets by spec.value.
const gadgetValueField = "spec.value"

// twins is a step that wires itself as a step of an optional API would: it
// indexes Gadgets (the kind the controller waits for) by their value and
// owns a ConfigMap per Gadget. Do counts, through the index, the Gadgets
// of the same value in the namespace, and keeps the ConfigMap.
type twins struct{}

func (twins) Name() string { return "twins" }

func (twins) SetupWithBuilder(b *bosun.Builder[*testapi.Gadget]) error {
	b.Owns(&corev1.ConfigMap{}).IndexField(&testapi.Gadget{}, gadgetValueField, func(o client.Object) []string {
		return []string{fmt.Sprint(o.(*testapi.Gadget).Spec.Value)}
	})
	return nil
}

func (twins) Do(ctx context.Context, p *bosun.Pass[*testapi.Gadget]) (ctrl.Result, error) {
	g := p.Object
	var list testapi.GadgetList
	if err := p.Client.List(ctx, &list, client.InNamespace(g.Namespace), client.MatchingFields{gadgetValueField: fmt.Sprint(g.Spec.Value)}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing gadgets by value: %w", err)
	}
	g.Status.Result = int64(len(list.Items))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: g.Namespace, Name: g.Name + "-gadget"}}
	if err := p.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm); !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if err := controllerutil.SetControllerReference(g, cm, p.Client.Scheme()); err != nil {
		return ctrl.Result{}, err
	}
	if err := p.Client.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, fmt.Errorf("creating the configmap: %w", err)
	}
	return ctrl.Result{}, nil
}

// gadgetScheme returns the built-in kinds, Widget, and Gadget under gv.
func gadgetScheme(t *testing.T, gv schema.GroupVersion) *runtime.Scheme {
	t.Helper()
	s := controlplane.NewScheme()
	if err := testapi.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	s.AddKnownTypes(gv, &testapi.Gadget{}, &testapi.GadgetList{})
	metav1.AddToGroupVersion(s, gv)
	return s
}

// TestWhenServedStartsTheControllerOnceTheKindIsServed starts a manager
// with a controller of Gadgets, whose CRD is not installed, set up with
// WhenServed; then installs the CRD through the API and checks that the
// controller starts: Gadgets are reconciled, the field index its step
// registered on the Gadgets answers, and the ConfigMaps it owns are
// watched. The wait is logged once, and so is the start.
func TestWhenServedStartsTheControllerOnceTheKindIsServed(t *testing.T) {
	t.Parallel()
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	scheme := gadgetScheme(t, testapi.GroupVersion)
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	crd, err := testapi.GadgetCRD()
	if err != nil {
		t.Fatal(err)
	}
	// Registered before the manager's, so it runs after the manager stopped.
	t.Cleanup(func() {
		if err := cp.Client.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crd.Name}}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the gadget crd: %v", err)
		}
	})

	logs := &bosuntest.LogRecorder{}
	r := &bosun.Reconciler[*testapi.Gadget]{Name: "gated", Steps: []bosun.Step[*testapi.Gadget]{twins{}}}
	opts := bosuntest.ManagerOptions{Namespaces: []string{ns}, Configure: func(o *ctrl.Options) { o.Scheme = scheme }}
	bosuntest.RunManagerWith(t, cp, opts, func(mgr ctrl.Manager) error {
		mgr = bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger()))
		ctl, err := bosun.GateBackoff(bosun.ControllerManagedBy[*testapi.Gadget](mgr).WhenServed(), 50*time.Millisecond, 200*time.Millisecond).
			Build(r)
		if err == nil && ctl != nil {
			return errors.New("Build returned a controller for a kind that is not served")
		}
		return err
	})
	count := func(msg string) int {
		n := 0
		for _, e := range logs.Entries() {
			if e.Message == msg {
				n++
			}
		}
		return n
	}
	bosuntest.Eventually(t, func(context.Context) error {
		if count("kind not served, waiting for it") == 0 {
			return errors.New("the wait is not logged yet")
		}
		return nil
	})
	// Let it look a few times more while the kind is still absent.
	var list testapi.GadgetList
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := c.List(ctx, &list, client.InNamespace(ns)); err == nil {
			return errors.New("gadgets are served before their CRD is installed")
		}
		if got := count("kind not served, waiting for it"); got != 1 {
			return fmt.Errorf("the wait was logged %d times", got)
		}
		return nil
	})

	if err := cp.Client.Create(t.Context(), crd); err != nil {
		t.Fatalf("installing the gadget crd: %v", err)
	}
	for _, name := range []string{"a", "b", "c"} {
		value := int64(7)
		if name == "c" {
			value = 8
		}
		g := &testapi.Gadget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: testapi.GadgetSpec{Value: value}}
		bosuntest.Eventually(t, func(ctx context.Context) error {
			// Fails with no match for the kind until the CRD is served.
			return c.Create(ctx, g)
		})
	}
	want := map[string]int64{"a": 2, "b": 2, "c": 1}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		got := map[string]int64{}
		for name := range want {
			g := &testapi.Gadget{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, g); err != nil {
				return err
			}
			ready := conditions.Find(g.Status.Conditions, conditions.TypeReady)
			if ready == nil || ready.Status != metav1.ConditionTrue {
				return fmt.Errorf("gadget %s is not Ready: %+v", name, g.Status)
			}
			got[name] = g.Status.Result
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("gadgets of the same value, by the index (-want +got):\n%s", diff)
		}
		return nil
	})

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a-gadget"}}
	if err := c.Delete(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var got corev1.ConfigMap
		if err := c.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
			return err
		}
		if got.DeletionTimestamp != nil {
			return errors.New("not made again yet")
		}
		return nil
	})
	if diff := cmp.Diff([]int{1, 1}, []int{count("kind not served, waiting for it"), count("kind served, starting the controller")}); diff != "" {
		t.Errorf("times the wait and the start were logged (-want +got):\n%s", diff)
	}
}

// TestKindNotServedAtSetup checks what Build does with a kind the API
// server does not serve: without WhenServed, it fails at once with
// ErrKindNotServed and says how to wait instead; with it, it returns no
// controller and no error. A served kind gets its controller at once,
// with or without WhenServed.
func TestKindNotServedAtSetup(t *testing.T) {
	t.Parallel()
	cp := shared.ControlPlane(t)
	// Gadget under a group no test installs, so that no other test makes
	// it served meanwhile.
	absent := schema.GroupVersion{Group: "absent.test.bosun.dev", Version: "v1"}
	scheme := gadgetScheme(t, absent)
	newManager := func() ctrl.Manager {
		mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
		if err != nil {
			t.Fatal(err)
		}
		return mgr
	}
	type outcome = buildOutcome
	gadgets := func(gated bool) outcome {
		b := bosun.ControllerManagedBy[*testapi.Gadget](newManager())
		if gated {
			b = b.WhenServed()
		}
		ctl, err := b.Build(&bosun.Reconciler[*testapi.Gadget]{Name: "absent", Steps: []bosun.Step[*testapi.Gadget]{twins{}}})
		return describe(ctl != nil, err)
	}
	widgets := func(gated bool) outcome {
		b := bosun.ControllerManagedBy[*testapi.Widget](newManager())
		if gated {
			b = b.WhenServed()
		}
		ctl, err := b.Build(newReconciler(fmt.Sprintf("served-%t", gated), newJournal(), false))
		return describe(ctl != nil, err)
	}
	owning := func(gated bool) outcome {
		b := bosun.ControllerManagedBy[*testapi.Widget](newManager())
		if gated {
			b = b.WhenServed()
		}
		r := newReconciler("absent", newJournal(), false)
		r.Steps = append(r.Steps, gadgetOwner{})
		ctl, err := b.Build(r)
		return describe(ctl != nil, err)
	}
	tests := []struct {
		name string
		run  func() outcome
		want outcome
	}{
		{
			name: "absent kind, not gated",
			run:  func() outcome { return gadgets(false) },
			want: outcome{NotServed: true, Says: []string{`reconciler "absent"`, "absent.test.bosun.dev/v1, Kind=Gadget", "CustomResourceDefinition", "WhenServed"}},
		},
		{name: "absent kind, gated", run: func() outcome { return gadgets(true) }, want: outcome{}},
		{
			name: "served kind owning an absent kind, not gated",
			run:  func() outcome { return owning(false) },
			want: outcome{NotServed: true, Says: []string{`reconciler "absent"`, "absent.test.bosun.dev/v1, Kind=Gadget", "CustomResourceDefinition", "WhenServed"}},
		},
		{name: "served kind owning an absent kind, gated", run: func() outcome { return owning(true) }, want: outcome{}},
		{name: "served kind, not gated", run: func() outcome { return widgets(false) }, want: outcome{Controller: true}},
		{name: "served kind, gated", run: func() outcome { return widgets(true) }, want: outcome{Controller: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.run()); diff != "" {
				t.Errorf("Build (-want +got):\n%s", diff)
			}
		})
	}
}

// buildOutcome is what Build returned, as TestKindNotServedAtSetup
// compares it.
type buildOutcome struct {
	// Controller is whether Build returned a controller.
	Controller bool
	// NotServed is whether the error wraps bosun.ErrKindNotServed.
	NotServed bool
	// Says holds the phrases of the error that the test looks for, or
	// the whole error when it has none of them.
	Says []string
}

// describe turns what Build returned into a buildOutcome.
func describe(controller bool, err error) buildOutcome {
	o := buildOutcome{Controller: controller}
	if err == nil {
		return o
	}
	o.NotServed = errors.Is(err, bosun.ErrKindNotServed)
	for _, s := range []string{`reconciler "absent"`, "absent.test.bosun.dev/v1, Kind=Gadget", "CustomResourceDefinition", "WhenServed"} {
		if strings.Contains(err.Error(), s) {
			o.Says = append(o.Says, s)
		}
	}
	if len(o.Says) == 0 {
		o.Says = []string{err.Error()}
	}
	return o
}

// gadgetOwner is a Widget step that owns Gadgets.
type gadgetOwner struct{}

func (gadgetOwner) Name() string { return "gadget-owner" }

func (gadgetOwner) SetupWithBuilder(b *bosun.Builder[*testapi.Widget]) error {
	b.Owns(&testapi.Gadget{})
	return nil
}

func (gadgetOwner) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

// TestWhenServedWaitsForEveryWatchedKind checks that a controller set up
// with WhenServed waits for every kind it watches, not only its own: a
// Widget controller whose step owns Gadgets, whose CRD is not installed,
// is not built until the CRD is, and then reconciles its Widgets.
func TestWhenServedWaitsForEveryWatchedKind(t *testing.T) {
	t.Parallel()
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	owned := schema.GroupVersion{Group: "owned.test.bosun.dev", Version: testapi.GroupVersion.Version}
	scheme := gadgetScheme(t, owned)
	crd, err := testapi.GadgetCRD()
	if err != nil {
		t.Fatal(err)
	}
	crd.Name = "gadgets." + owned.Group
	crd.Spec.Group = owned.Group
	t.Cleanup(func() {
		if err := cp.Client.Delete(context.Background(), &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crd.Name}}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the gadget crd: %v", err)
		}
	})
	logs := &bosuntest.LogRecorder{}
	r := newReconciler("owns-gated", newJournal(), false)
	r.Steps = append(r.Steps, gadgetOwner{})
	opts := bosuntest.ManagerOptions{Namespaces: []string{ns}, Configure: func(o *ctrl.Options) { o.Scheme = scheme }}
	bosuntest.RunManagerWith(t, cp, opts, func(mgr ctrl.Manager) error {
		mgr = bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger()))
		ctl, err := bosun.GateBackoff(bosun.ControllerManagedBy[*testapi.Widget](mgr).WhenServed(), 50*time.Millisecond, 200*time.Millisecond).
			Build(r)
		if err == nil && ctl != nil {
			return errors.New("Build returned a controller that owns a kind that is not served")
		}
		return err
	})
	bosuntest.Eventually(t, func(context.Context) error {
		for _, e := range logs.Entries() {
			if e.Message == "kind not served, waiting for it" {
				return nil
			}
		}
		return errors.New("the wait is not logged yet")
	})
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 8, Divisor: 2}}
	if err := cp.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	if err := cp.Client.Create(t.Context(), crd); err != nil {
		t.Fatalf("installing the gadget crd: %v", err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		got := &testapi.Widget{}
		if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(w), got); err != nil {
			return err
		}
		if c := conditions.Find(got.Status.Conditions, conditions.TypeReady); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("widget not Ready: %+v", got.Status)
		}
		return nil
	})
}
