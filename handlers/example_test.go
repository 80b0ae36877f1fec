package handlers_test

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/handlers"
)

// Two parts of an operator, each in a package of its own, react to
// ConfigMaps without a controller each: main makes one Set and hands it
// to both, and one controller runs their handlers, in the order they were
// registered. OnRemove sees the keys of ConfigMaps that are gone.
func ExampleNew() {
	// In package audit.
	auditSetup := func(h *handlers.Set[*corev1.ConfigMap]) error {
		return errors.Join(
			h.OnChange("audit", func(_ context.Context, p *bosun.Pass[*corev1.ConfigMap]) (ctrl.Result, error) {
				p.Log.Info("configmap seen", "keys", len(p.Object.Data))
				return ctrl.Result{}, nil
			}),
			h.OnRemove("audit", func(ctx context.Context, key client.ObjectKey) error {
				ctrl.LoggerFrom(ctx).Info("configmap gone", "configMap", key)
				return nil
			}),
		)
	}
	// In package labels.
	labelSetup := func(h *handlers.Set[*corev1.ConfigMap]) error {
		return h.OnChange("label", func(_ context.Context, p *bosun.Pass[*corev1.ConfigMap]) (ctrl.Result, error) {
			if p.Object.Labels == nil {
				p.Object.Labels = map[string]string{}
			}
			p.Object.Labels["example.com/seen"] = "true" // the engine writes it once every handler ran
			return ctrl.Result{}, nil
		})
	}
	// In main.
	setup := func(mgr ctrl.Manager) error {
		set := handlers.New[*corev1.ConfigMap](mgr)
		return errors.Join(auditSetup(set), labelSetup(set))
	}
	_ = setup
}
