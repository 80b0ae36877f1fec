// Package bosuntest runs tests against a real Kubernetes API: a kube-apiserver
// and etcd started by the controlplane package.
//
// A test that needs its own control plane calls Start; a package whose tests
// share one declares a Shared, which starts it for the first test that asks
// and stops it after the last:
//
//	var shared = bosuntest.Shared{Options: func() (controlplane.Options, error) {
//		return controlplane.Options{CRDPaths: []string{"../config/crd"}}, nil
//	}}
//
//	func TestMain(m *testing.M) { shared.Main(m) }
//
//	func TestGreeting(t *testing.T) {
//		cp := shared.ControlPlane(t)
//		...
//	}
//
// Tests then run controllers with RunManager, isolate their objects in a fresh
// namespace from Namespace, and wait for results with Eventually.
//
// To look at how a controller behaves, not only at what it produces, a test
// can count the writes its client makes with a WriteCounter, answer some of
// them with 409 Conflict with a ConflictInjector, count its reconciles per
// object with a ReconcileCounter, and record its log with a LogRecorder. The
// counting client and logger reach controllers registered in RunManager's
// setup through ManagerWithClient and ManagerWithLogger, or a manager of the
// test's own through NewClientFunc.
//
// The control plane runs no kube-controller-manager: nothing collects
// garbage, deletes namespaces or runs the pods of Jobs and Deployments. Tests
// should check the objects a controller writes, not what Kubernetes would do
// with them. Namespaces cannot be removed, so Namespace leaves them behind;
// they go away with the control plane.
//
// The first test run on a machine builds kube-apiserver and etcd from Go
// modules, which takes several minutes (see controlplane.Binaries); running
// `bosun controlplane` beforehand, or setting KUBEBUILDER_ASSETS, avoids doing
// it inside a test with a short -timeout.
package bosuntest
