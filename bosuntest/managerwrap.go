package bosuntest

import (
	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
)

// ManagerWithClient returns mgr as seen by code that takes its client from
// GetClient: such code gets c instead. Everything else is mgr's. It lets a
// test put a client from WriteCounter.Wrap or ConflictInjector.Wrap under the
// controllers it registers in RunManager's setup:
//
//	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
//		mgr = bosuntest.ManagerWithClient(mgr, counter.Wrap(mgr.GetClient()))
//		return (&MyReconciler{}).SetupWithManager(mgr)
//	})
//
// The manager's own machinery, such as its caches, is unaffected, and so
// is the Observation it carries (bosun.ObservationOf).
func ManagerWithClient(mgr ctrl.Manager, c client.Client) ctrl.Manager {
	return clientManager{Manager: mgr, client: c}
}

// clientManager is a manager with another client.
type clientManager struct {
	ctrl.Manager
	client client.Client
}

// GetClient returns the replacement client.
func (m clientManager) GetClient() client.Client { return m.client }

// Observation returns the Observation of the wrapped manager.
func (m clientManager) Observation() *bosun.Observation { return bosun.ObservationOf(m.Manager) }

// ManagerWithLogger returns mgr as seen by code that takes its logger from
// GetLogger: such code gets l instead. Controllers built with
// ctrl.NewControllerManagedBy on the returned manager log through l, and
// their reconcilers find l, with the controller's and request's values, in
// their context. It lets a test record a controller's log with a
// LogRecorder:
//
//	mgr = bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger()))
func ManagerWithLogger(mgr ctrl.Manager, l logr.Logger) ctrl.Manager {
	return loggerManager{Manager: mgr, logger: l}
}

// loggerManager is a manager with another logger.
type loggerManager struct {
	ctrl.Manager
	logger logr.Logger
}

// GetLogger returns the replacement logger.
func (m loggerManager) GetLogger() logr.Logger { return m.logger }

// Observation returns the Observation of the wrapped manager.
func (m loggerManager) Observation() *bosun.Observation { return bosun.ObservationOf(m.Manager) }
