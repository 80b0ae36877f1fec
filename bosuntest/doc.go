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
// Such a test waits on passes, not on time. ReconcileCounter.Touch marks
// an object and returns once the pass that saw the mark has ended, and
// with it every pass the object's earlier changes brought: the moment to
// count what they wrote. Window is the time a test gives something to
// happen that must not (a hot loop, a retry): so many passes of another
// object as well as so much time, so that on a busy machine, where passes
// come slower, it grows with them.
//
// By default the control plane runs no kube-controller-manager: nothing
// collects garbage or finishes deleting namespaces, so Namespace leaves its
// namespaces behind and they go away with the control plane. A package whose
// tests need more sets it in the options of its Shared (or of Start):
//
//   - controlplane.Options.ControllerManager runs kube-controller-manager
//     with the garbage collector, which deletes the objects whose owners are
//     gone and carries out foreground and orphan deletion, the namespace
//     controller, so that Namespace deletes its namespace when the test ends
//     (without waiting for it to go), and the workload controllers:
//     Deployments make ReplicaSets and pods, Jobs make pods and complete,
//     and each fills in its status. Options.Controllers runs fewer, for
//     tests that write such status themselves.
//   - controlplane.Options.Nodes runs simulated nodes (kube-scheduler and
//     kwok): pods are placed, become Running and Ready, a Job's pods
//     succeed, and a pod labelled controlplane.PodExitCodeLabel fails.
//     Together they let a test check an operator's Ready with real pod
//     counts and its children's cascading delete.
//
// They cost about half a second at start and some CPU, so only the packages
// whose tests need them turn them on. Without them, tests should check the
// objects a controller writes, not what the rest of Kubernetes would do
// with them.
//
// The API server enables the OwnerReferencesPermissionEnforcement admission
// plugin, so a controller run with RunManagerAs may set blockOwnerDeletion
// on its children's owner references only if its role grants update on the
// owner's finalizers subresource, as in a production cluster.
//
// The first test run on a machine builds kube-apiserver and etcd from Go
// modules, and kube-controller-manager when a test asks for it, which takes
// several minutes (see controlplane.Binaries); running `bosun controlplane`
// beforehand, which builds all three, or setting KUBEBUILDER_ASSETS, avoids
// doing it inside a test with a short -timeout.
//
// Maturity: stable. Every envtest suite of bosun and of its examples runs
// on it.
package bosuntest
