package bosun_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/tuning"
)

// TestNamespaceDoesNotWaitForAnother runs a controller over two
// namespaces as a user who may list Widgets in one of them only, so that
// the other namespace's informer never lists. The objects of the first are
// reconciled all the same: the workers do not wait for every informer to
// list, each request waits for what it reads; so they are when the
// builder is given the manager wrapped (as package operator and the test
// kit wrap it). After CacheSyncTimeout, the controller's or else the
// manager's, the controller stops with an error, as controller-runtime's
// does.
func TestNamespaceDoesNotWaitForAnother(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	closed := bosuntest.Namespace(t, f.c)
	user := "early-" + f.ns
	f.bindRole(user,
		rbacv1.PolicyRule{APIGroups: []string{testapi.GroupVersion.Group}, Resources: []string{"widgets"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
		rbacv1.PolicyRule{APIGroups: []string{testapi.GroupVersion.Group}, Resources: []string{"widgets/status"}, Verbs: []string{"update", "patch"}},
		rbacv1.PolicyRule{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	)
	cfg, err := f.cp.AddUser(user)
	if err != nil {
		t.Fatal(err)
	}

	// start runs the controller; stopped reports whether the manager
	// stopped, and with what.
	// wrap, when set, wraps the manager the controller is built with;
	// managerTimeout is the manager's CacheSyncTimeout.
	type startOptions struct {
		syncTimeout, managerTimeout time.Duration
		wrap                        func(ctrl.Manager) ctrl.Manager
	}
	start := func(t *testing.T, name string, so startOptions) (stopped func() (bool, error)) {
		logger, quiet := bosuntest.TestLogger(t)
		opts := ctrl.Options{
			Scheme:                 f.cp.Scheme,
			Logger:                 logger,
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			Controller:             config.Controller{SkipNameValidation: ptr.To(true), CacheSyncTimeout: so.managerTimeout},
			Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{f.ns: {}, closed: {}}},
		}
		tuning.Enable(&opts)
		mgr, err := ctrl.NewManager(cfg, opts)
		if err != nil {
			t.Fatal(err)
		}
		r := newReconciler(name, newJournal(), false)
		r.Options.IgnoreNamespacePolicy = true
		built := mgr
		if so.wrap != nil {
			built = so.wrap(mgr)
		}
		if err := bosun.ControllerManagedBy[*testapi.Widget](built).
			WithOptions(controller.Options{CacheSyncTimeout: so.syncTimeout}).
			Complete(r); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		var startErr error
		go func() {
			defer close(done)
			startErr = mgr.Start(ctx)
		}()
		t.Cleanup(func() {
			cancel()
			<-done
			quiet()
		})
		return func() (bool, error) {
			select {
			case <-done:
				return true, startErr
			default:
				return false, nil
			}
		}
	}

	t.Run("reconciles the namespace it can list", func(t *testing.T) {
		start(t, "early-start", startOptions{syncTimeout: time.Hour})
		sf := *f
		sf.t = t
		sf.create("open", 6, 3, nil)
		sf.waitReady("open", metav1.ConditionTrue, conditions.ReasonSucceeded)
	})

	// Package operator hands its setup a manager that carries an
	// Observation; a test hands one with another client: the builder
	// still sees that the manager was made with tuning.
	t.Run("reconciles it through a wrapped manager", func(t *testing.T) {
		start(t, "early-start-wrapped", startOptions{syncTimeout: time.Hour, wrap: func(mgr ctrl.Manager) ctrl.Manager {
			mgr = new(bosun.Observation).Attach(mgr)
			return bosuntest.ManagerWithLogger(bosuntest.ManagerWithClient(mgr, mgr.GetClient()), mgr.GetLogger())
		}})
		sf := *f
		sf.t = t
		sf.create("open-wrapped", 6, 3, nil)
		sf.waitReady("open-wrapped", metav1.ConditionTrue, conditions.ReasonSucceeded)
	})

	for _, tc := range []struct {
		name string
		so   startOptions
	}{
		{"the controller's", startOptions{syncTimeout: 2 * time.Second, managerTimeout: time.Hour}},
		{"the manager's", startOptions{managerTimeout: 2 * time.Second}},
	} {
		t.Run("fails when a namespace never lists within "+tc.name+" CacheSyncTimeout", func(t *testing.T) {
			stopped := start(t, "early-timeout", tc.so)
			bosuntest.Eventually(t, func(context.Context) error {
				var ok bool
				if ok, err = stopped(); !ok {
					return errors.New("the manager still runs")
				}
				return nil
			}, bosuntest.Timeout(time.Minute))
			if err == nil || !strings.Contains(err.Error(), "timed out waiting for the cache") {
				t.Errorf("the manager stopped with %v, want a cache that did not sync", err)
			}
		})
	}
}
