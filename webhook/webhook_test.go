package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/internal/testapi/versioned"
	gadgetv1 "github.com/bosunkit/bosun/internal/testapi/versioned/v1"
	gadgetv2 "github.com/bosunkit/bosun/internal/testapi/versioned/v2"
	"github.com/bosunkit/bosun/webhook"
)

var shared = bosuntest.Shared{Options: func() (controlplane.Options, error) {
	opts, err := testapi.ControlPlaneOptions()
	if err != nil {
		return opts, err
	}
	opts.Webhooks = testapi.WidgetWebhooks()
	for _, add := range []func(*runtime.Scheme) error{gadgetv1.AddToScheme, gadgetv2.AddToScheme} {
		if err := add(opts.Scheme); err != nil {
			return opts, err
		}
	}
	opts.CRDs = append(opts.CRDs, versioned.CRD())
	return opts, nil
}}

func TestMain(m *testing.M) { shared.Main(m) }

// calls records what the webhooks of widgetKind saw.
type calls struct {
	mu      sync.Mutex
	dryRuns map[string]bool
}

func (c *calls) record(name string, dryRun bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dryRuns == nil {
		c.dryRuns = map[string]bool{}
	}
	c.dryRuns[name] = dryRun
}

func (c *calls) dryRun(name string) (bool, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.dryRuns[name]
	return d, ok
}

// widgetKind returns Widget's webhooks for the tests: mode defaults to
// fast; divisor must not be negative and, once set, not change to zero; a
// value over 1000 warns; a value of 666 panics in Validate and 667 in
// Default.
func widgetKind(seen *calls) *webhook.Kind[*testapi.Widget] {
	return &webhook.Kind[*testapi.Widget]{
		Default: func(_ context.Context, w *testapi.Widget) error {
			if w.Spec.Value == 667 {
				panic("defaulting 667")
			}
			if w.Spec.Mode == "" {
				w.Spec.Mode = "fast"
			}
			return nil
		},
		Validate: func(ctx context.Context, old, w *testapi.Widget) (webhook.Warnings, field.ErrorList) {
			seen.record(w.Name, webhook.DryRun(ctx))
			if w.Spec.Value == 666 {
				panic("validating 666")
			}
			var errs field.ErrorList
			spec := field.NewPath("spec")
			if w.Spec.Divisor < 0 {
				errs = append(errs, field.Invalid(spec.Child("divisor"), w.Spec.Divisor, "must not be negative"))
			}
			if old != nil && old.Spec.Divisor != 0 && w.Spec.Divisor == 0 {
				errs = append(errs, field.Forbidden(spec.Child("divisor"), "may not go back to zero once set"))
			}
			var warnings webhook.Warnings
			if w.Spec.Value > 1000 {
				warnings = append(warnings, fmt.Sprintf("spec.value %d is large; results may overflow", w.Spec.Value))
			}
			return warnings, errs
		},
	}
}

// warningRecorder keeps the warnings the API server returns.
type warningRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

func (w *warningRecorder) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

func widget(ns, name string, spec testapi.WidgetSpec) *testapi.Widget {
	return &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: spec}
}

func TestAdmission(t *testing.T) {
	cp := shared.ControlPlane(t)
	seen := &calls{}
	bosuntest.RunManager(t, cp, widgetKind(seen).SetupWithManager)
	ns := bosuntest.Namespace(t, cp.Client)
	ctx := t.Context()
	c := cp.Client

	t.Run("defaults", func(t *testing.T) {
		w := widget(ns, "defaulted", testapi.WidgetSpec{Value: 1})
		if err := c.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		if w.Spec.Mode != "fast" {
			t.Errorf("spec.mode = %q after create, want the default fast", w.Spec.Mode)
		}
	})

	t.Run("refuses with the field and the rule", func(t *testing.T) {
		err := c.Create(ctx, widget(ns, "negative", testapi.WidgetSpec{Divisor: -2}))
		if !apierrors.IsInvalid(err) {
			t.Fatalf("create with a negative divisor: %v, want 422 Invalid", err)
		}
		for _, want := range []string{`Widget.test.bosun.dev "negative" is invalid`, "spec.divisor", "must not be negative"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		}
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			causes := status.Status().Details.Causes
			if len(causes) != 1 || causes[0].Field != "spec.divisor" {
				t.Errorf("status causes = %+v, want one naming spec.divisor", causes)
			}
		}
	})

	t.Run("validates updates against the old object", func(t *testing.T) {
		w := widget(ns, "divided", testapi.WidgetSpec{Divisor: 3})
		if err := c.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		w.Spec.Divisor = 0
		err := c.Update(ctx, w)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.divisor: Forbidden: may not go back to zero once set") {
			t.Fatalf("update of the divisor to zero: %v, want 422 naming spec.divisor", err)
		}
	})

	t.Run("warns", func(t *testing.T) {
		rec := &warningRecorder{}
		cfg := rest.CopyConfig(cp.Config)
		cfg.WarningHandler = rec
		wc, err := client.New(cfg, client.Options{Scheme: cp.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		if err := wc.Create(ctx, widget(ns, "large", testapi.WidgetSpec{Value: 5000})); err != nil {
			t.Fatal(err)
		}
		if got := rec.all(); len(got) != 1 || !strings.Contains(got[0], "spec.value 5000 is large") {
			t.Errorf("warnings = %q, want the one about spec.value", got)
		}
	})

	t.Run("dry run", func(t *testing.T) {
		w := widget(ns, "dry", testapi.WidgetSpec{Value: 2})
		if err := c.Create(ctx, w, client.DryRunAll); err != nil {
			t.Fatal(err)
		}
		if w.Spec.Mode != "fast" {
			t.Errorf("dry-run create returned spec.mode %q, want the default fast", w.Spec.Mode)
		}
		if dry, ok := seen.dryRun("dry"); !ok || !dry {
			t.Errorf("Validate saw DryRun = %v (called: %v), want true", dry, ok)
		}
		err := c.Get(ctx, client.ObjectKeyFromObject(w), &testapi.Widget{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("get after a dry-run create: %v, want NotFound", err)
		}
		if err := c.Create(ctx, widget(ns, "wet", testapi.WidgetSpec{})); err != nil {
			t.Fatal(err)
		}
		if dry, _ := seen.dryRun("wet"); dry {
			t.Error("Validate saw DryRun true for a real create")
		}
	})

	t.Run("a panic is answered and the server keeps serving", func(t *testing.T) {
		for value, hook := range map[int64]string{666: "validating", 667: "defaulting"} {
			err := c.Create(ctx, widget(ns, fmt.Sprintf("panic-%d", value), testapi.WidgetSpec{Value: value}))
			if !apierrors.IsInternalError(err) {
				t.Fatalf("create of a value that panics: %v, want 500", err)
			}
			want := fmt.Sprintf("panic in the %s webhook of Widget.test.bosun.dev %s/panic-%d", hook, ns, value)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		}
		if err := c.Create(ctx, widget(ns, "after-panic", testapi.WidgetSpec{Value: 3})); err != nil {
			t.Fatalf("create after the panics: %v", err)
		}
	})
}

// TestWebhookDownDoesNotWedgeDeletion stops the webhook server and shows
// that new objects are refused (failure policy Fail) while an object being
// deleted can still have its finalizer released.
func TestWebhookDownDoesNotWedgeDeletion(t *testing.T) {
	cp := shared.ControlPlane(t)
	ctx := t.Context()
	c := cp.Client
	ns := bosuntest.Namespace(t, c)

	stop := serve(t, cp, widgetKind(&calls{}))
	w := widget(ns, "finalized", testapi.WidgetSpec{Value: 1})
	w.Finalizers = []string{"test.bosun.dev/hold"}
	if err := c.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	stop()

	err := c.Create(ctx, widget(ns, "while-down", testapi.WidgetSpec{}))
	if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Fatalf("create while the webhook is down: %v, want it refused for the failed call", err)
	}
	if err := c.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
		t.Fatal(err)
	}
	w.Finalizers = nil
	if err := c.Update(ctx, w); err != nil {
		t.Fatalf("releasing the finalizer while the webhook is down: %v", err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKeyFromObject(w), &testapi.Widget{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("widget still there: %w", err)
	})
}

// serve runs a manager serving kind's webhooks until the returned function
// stops it, and waits until it serves.
func serve(t *testing.T, cp *controlplane.ControlPlane, kind *webhook.Kind[*testapi.Widget]) func() {
	t.Helper()
	srv := crwebhook.NewServer(cp.WebhookServer)
	mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{
		Scheme:                 cp.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          srv,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := kind.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("manager: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	bosuntest.Eventually(t, func(context.Context) error { return srv.StartedChecker()(nil) })
	return stop
}

func TestSetupErrors(t *testing.T) {
	cp := shared.ControlPlane(t)
	mgr, err := ctrl.NewManager(cp.Config, ctrl.Options{Scheme: cp.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	err = (&webhook.Kind[*testapi.Widget]{}).SetupWithManager(mgr)
	if err == nil || !strings.Contains(err.Error(), "sets none of Default, Validate and ValidateDelete") {
		t.Errorf("SetupWithManager of an empty Kind: %v, want an error naming what to set", err)
	}
	err = (&webhook.Kind[*gadgetv1.Gadget]{}).SetupWithManager(mgr)
	if err == nil || !strings.Contains(err.Error(), "spoke version; register the webhooks of a kind on its hub") {
		t.Errorf("SetupWithManager of a spoke: %v, want an error pointing at the hub", err)
	}
	err = (&webhook.Kind[*testapi.Gadget]{Default: func(context.Context, *testapi.Gadget) error { return nil }}).SetupWithManager(mgr)
	if err == nil || !strings.Contains(err.Error(), "Gadget") {
		t.Errorf("SetupWithManager of a kind missing from the scheme: %v, want an error naming it", err)
	}
}

// TestConversion serves the conversion of Gadget between its hub (v2) and
// spoke (v1, the stored version) and reads objects at both versions, then
// shows that a conversion that fails answers an error naming the object and
// both versions.
func TestConversion(t *testing.T) {
	cp := shared.ControlPlane(t)
	bosuntest.RunManager(t, cp, (&webhook.Kind[*gadgetv2.Gadget]{}).SetupWithManager)
	ctx := t.Context()
	c := cp.Client
	ns := bosuntest.Namespace(t, c)

	hub := &gadgetv2.Gadget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hub"},
		Spec: gadgetv2.GadgetSpec{
			Replicas: ptr.To[int32](3),
			Ports:    []gadgetv2.Port{{Name: "http", Port: 80}},
			Schedule: &gadgetv2.Schedule{Cron: "*/5 * * * *", TimeZone: ptr.To("UTC")},
		},
	}
	if err := c.Create(ctx, hub); err != nil {
		t.Fatalf("create at v2, stored at v1: %v", err)
	}
	spoke := &gadgetv1.Gadget{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(hub), spoke); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]gadgetv1.Port{{Name: "http", Number: 80}}, spoke.Spec.Ports); diff != "" {
		t.Errorf("v1 ports (-want +got):\n%s", diff)
	}
	back := &gadgetv2.Gadget{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(hub), back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(hub.Spec, back.Spec); diff != "" {
		t.Errorf("v2 spec after a trip through the stored v1 (-want +got):\n%s", diff)
	}

	broken := &gadgetv1.Gadget{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: "broken",
		Annotations: map[string]string{versioned.ScheduleAnnotation: "not json"},
	}}
	if err := c.Create(ctx, broken); err != nil {
		t.Fatal(err)
	}
	err := c.Get(ctx, client.ObjectKeyFromObject(broken), &gadgetv2.Gadget{})
	want := fmt.Sprintf("converting Gadget %s/broken from convert.test.bosun.dev/v1 to convert.test.bosun.dev/v2", ns)
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), versioned.ScheduleAnnotation) {
		t.Fatalf("reading at v2 an object that cannot convert: %v, want 500 containing %q and the annotation", err, want)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(broken), &gadgetv1.Gadget{}); err != nil {
		t.Errorf("reading it at its stored version: %v", err)
	}
}
