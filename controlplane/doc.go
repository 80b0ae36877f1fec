// Package controlplane builds and starts the Kubernetes control plane that
// bosun's tests and `bosun demo` run against: a real kube-apiserver and etcd,
// driven by controller-runtime's envtest.
//
// # Binaries
//
// No binaries are downloaded. Binaries builds kube-apiserver KubernetesVersion
// and etcd EtcdVersion from their Go modules, pinned by the go.mod and go.sum
// of bosun's hack/controlplane module (carried inside this package, so the
// build also works where bosun is only a dependency). The first build takes
// several minutes and needs the Go module proxy or a module cache that holds
// the modules; the result is kept per user, by version, in CacheDir:
//
//	$BOSUN_CONTROLPLANE_CACHE, else os.UserCacheDir()/bosun/controlplane
//	├── kube-apiserver-v1.37.0-etcd-v3.7.0/        finished build
//	│   ├── kube-apiserver
//	│   ├── etcd
//	│   └── .complete                             written last
//	└── kube-apiserver-v1.37.0-etcd-v3.7.0.lock    taken while building
//
// Processes that ask at once take turns on the lock: one builds, the others
// wait for it and reuse its result. A build happens in a staging directory
// that is renamed into place only when it is complete, so an interrupted
// build is never used. Setting KUBEBUILDER_ASSETS to a directory holding both
// binaries skips all of this. EnsureBinaries, run by `bosun controlplane`,
// builds them ahead of a test run.
//
// # Starting
//
// Start runs etcd and kube-apiserver, installs CRDs and returns a
// ControlPlane with an administrator's rest.Config and client, and a
// kubeconfig for kubectl. There is no kube-controller-manager: nothing
// collects garbage, finishes deleting namespaces or runs pods.
//
// Package bosuntest wraps Start for tests.
package controlplane
