package bosuntest_test

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/webhook"
)

// shared is the control plane of this package's tests, started by the first
// test that needs it.
var shared bosuntest.Shared

func TestMain(m *testing.M) { shared.Main(m) }

// setupCopier registers a controller that copies the data of every ConfigMap
// in namespace ns into a ConfigMap named after it with a "-copy" suffix.
func setupCopier(ns string) func(ctrl.Manager) error {
	return func(mgr ctrl.Manager) error {
		c := mgr.GetClient()
		return ctrl.NewControllerManagedBy(mgr).
			Named("copier").
			For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
				return o.GetNamespace() == ns && o.GetLabels()["bosuntest/copy"] == "yes"
			}))).
			Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				var src corev1.ConfigMap
				if err := c.Get(ctx, req.NamespacedName, &src); err != nil {
					return reconcile.Result{}, client.IgnoreNotFound(err)
				}
				dst := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: src.Namespace, Name: src.Name + "-copy"}}
				_, err := controllerutil.CreateOrUpdate(ctx, c, dst, func() error {
					dst.Data = maps.Clone(src.Data)
					return nil
				})
				return reconcile.Result{}, err
			}))
	}
}

func TestRunManager(t *testing.T) {
	// Two managers in turn register a controller of the same name, which
	// RunManager allows.
	for _, value := range []string{"first", "second"} {
		t.Run(value, func(t *testing.T) {
			cp := shared.ControlPlane(t)
			ns := bosuntest.Namespace(t, cp.Client)
			bosuntest.RunManager(t, cp, setupCopier(ns))

			src := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "src", Labels: map[string]string{"bosuntest/copy": "yes"}},
				Data:       map[string]string{"value": value},
			}
			if err := cp.Client.Create(t.Context(), src); err != nil {
				t.Fatalf("creating source ConfigMap: %v", err)
			}
			bosuntest.Eventually(t, func(ctx context.Context) error {
				var copied corev1.ConfigMap
				if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "src-copy"}, &copied); err != nil {
					return err
				}
				if diff := cmp.Diff(src.Data, copied.Data); diff != "" {
					return fmt.Errorf("copy differs (-want +got):\n%s", diff)
				}
				return nil
			})
		})
	}
}

func TestNamespace(t *testing.T) {
	cp := shared.ControlPlane(t)
	a := bosuntest.Namespace(t, cp.Client)
	b := bosuntest.Namespace(t, cp.Client)
	if a == b {
		t.Fatalf("two calls returned the same namespace %q", a)
	}
	for _, name := range []string{a, b} {
		var ns corev1.Namespace
		if err := cp.Client.Get(t.Context(), client.ObjectKey{Name: name}, &ns); err != nil {
			t.Errorf("getting namespace %s: %v", name, err)
		}
	}
}

func TestStart(t *testing.T) {
	var cp *controlplane.ControlPlane
	t.Run("running", func(t *testing.T) {
		cp = bosuntest.Start(t, controlplane.Options{})
		if err := cp.Client.Create(t.Context(), &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "probe"},
		}); err != nil {
			t.Fatalf("creating a ConfigMap: %v", err)
		}
	})
	if cp == nil {
		t.Fatal("Start returned no control plane")
	}
	// The subtest's cleanup stopped the control plane.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	err := cp.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "probe"}, &corev1.ConfigMap{})
	if err == nil || apierrors.IsNotFound(err) {
		t.Errorf("the control plane still answers after its test ended: %v", err)
	}
}

// TestSharedWebhooks shows a shared control plane's webhooks served from
// its start to its Stop, with no manager of the test's own: a Widget
// written with the control plane's client is defaulted, and a refused one
// names its field.
func TestSharedWebhooks(t *testing.T) {
	s := &bosuntest.Shared{
		Options: func() (controlplane.Options, error) {
			opts, err := testapi.ControlPlaneOptions()
			opts.Webhooks = testapi.WidgetWebhooks()
			return opts, err
		},
		Webhooks: (&webhook.Kind[*testapi.Widget]{
			Default: func(_ context.Context, w *testapi.Widget) error {
				if w.Spec.Mode == "" {
					w.Spec.Mode = "slow"
				}
				return nil
			},
			Validate: func(_ context.Context, _, w *testapi.Widget) (webhook.Warnings, field.ErrorList) {
				if w.Spec.Value < 0 {
					return nil, field.ErrorList{field.Invalid(field.NewPath("spec", "value"), w.Spec.Value, "must not be negative")}
				}
				return nil, nil
			},
		}).SetupWithManager,
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	cp := s.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}}
	if err := cp.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	if w.Spec.Mode != "slow" {
		t.Errorf("spec.mode = %q, want slow from the shared webhook", w.Spec.Mode)
	}
	bad := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"}, Spec: testapi.WidgetSpec{Value: -1}}
	if err := cp.Client.Create(t.Context(), bad); !apierrors.IsInvalid(err) {
		t.Errorf("create of a negative value: %v, want 422", err)
	}
}
