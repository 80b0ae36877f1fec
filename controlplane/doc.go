// Package controlplane builds and starts the Kubernetes control plane that
// bosun's tests and `bosun demo` run against: a real kube-apiserver and etcd,
// driven by controller-runtime's envtest, and on request a
// kube-controller-manager running the garbage collector and the namespace
// controller.
//
// # Binaries
//
// No binaries are downloaded. Binaries builds kube-apiserver KubernetesVersion
// and etcd EtcdVersion from their Go modules, pinned by the go.mod and go.sum
// of bosun's hack/controlplane module (carried inside this package, so the
// build also works where bosun is only a dependency). The first build takes
// several minutes and needs the Go module proxy or a module cache that holds
// the modules; the result is kept per user, by version, in a cache
// directory. With Options.ControllerManager, Binaries also builds
// kube-controller-manager, from the same modules, the first time it is asked
// for, into the same directory with a marker of its own, so a cache made
// before it existed is kept and only the new binary is added (a few minutes
// on two cores, most of it shared with kube-apiserver in Go's build cache):
//
//	$BOSUN_CONTROLPLANE_CACHE, else os.UserCacheDir()/bosun/controlplane
//	├── kube-apiserver-v1.37.0-etcd-v3.7.0/        finished build
//	│   ├── kube-apiserver
//	│   ├── etcd
//	│   ├── .complete                             written last
//	│   ├── kube-controller-manager               built on first need
//	│   └── .complete-kube-controller-manager     written after it
//	└── kube-apiserver-v1.37.0-etcd-v3.7.0.lock    taken while building
//
// Processes that ask at once take turns on the lock: one builds, the others
// wait for it and reuse its result. A build happens in a staging directory
// and is moved into place only when it is complete, so an interrupted build
// is never used. Setting KUBEBUILDER_ASSETS to a directory holding
// kube-apiserver and etcd skips building them; kube-controller-manager is
// taken from there too if it is there, and built into the cache otherwise.
// `bosun controlplane` builds all three ahead of a test run (Binaries with
// Options.ControllerManager); BinariesReady tells whether a Start would
// build. All are built without the race detector and with CGO_ENABLED=0.
//
// # Starting
//
// Start runs etcd and kube-apiserver, installs CRDs and returns a
// ControlPlane with an administrator's rest.Config and client, and a
// kubeconfig for kubectl. The API server authorizes with RBAC and enables
// the OwnerReferencesPermissionEnforcement admission plugin, so that setting
// blockOwnerDeletion on an owner reference needs update on the owner's
// finalizers subresource, as in a production cluster.
//
// By default there is no kube-controller-manager: nothing collects garbage,
// finishes deleting namespaces or runs pods. Options.ControllerManager adds
// one that runs only the garbage collector (GarbageCollectorController) and
// the namespace controller (NamespaceController), as the administrator,
// without leader election and serving nothing. Then the dependents of a
// deleted owner are deleted, foreground and orphan deletion finish, and a
// deleted namespace is emptied and removed. Start waits until the garbage
// collector has deleted a probe object, a matter of a second or two, and
// records the controllers on the kube-system namespace, in the annotation
// controlplane.bosun.dev/controllers, where RunningControllers finds them. Still nothing runs pods or fills in the
// status of Deployments and Jobs.
//
// Package bosuntest wraps Start for tests.
//
// Maturity: stable. Every envtest suite of bosun runs on it.
package controlplane
