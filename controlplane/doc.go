// Package controlplane builds and starts the Kubernetes control plane that
// bosun's tests, `bosun dev` and `bosun demo` run against: a real
// kube-apiserver and etcd, driven by controller-runtime's envtest, and on
// request kube-controller-manager with the workload controllers and garbage
// collection, and simulated nodes on which pods run without a kubelet.
//
// # Binaries
//
// No binaries are downloaded. Binaries builds kube-apiserver,
// kube-controller-manager and kube-scheduler KubernetesVersion and etcd
// EtcdVersion from their Go modules, pinned by the go.mod and go.sum of
// bosun's hack/controlplane module, and kwok KwokVersion from
// sigs.k8s.io/kwok, pinned by hack/kwok (both carried inside this package,
// so the build also works where bosun is only a dependency). The first
// build of kube-apiserver and etcd takes 5 to 10 minutes on two cores and
// needs the Go module proxy or a module cache that holds the modules; each
// other binary is built the first time a control plane asks for it (a few
// minutes on two cores, most of the Kubernetes part shared with
// kube-apiserver in Go's build cache; kwok about 3 minutes). Every build
// says what it builds and how long it usually takes on Options.Progress,
// and every 15 seconds that it is still at it. The results are kept per
// user, by version, in a cache directory:
//
//	$BOSUN_CONTROLPLANE_CACHE, else os.UserCacheDir()/bosun/controlplane
//	├── kube-apiserver-v1.37.0-etcd-v3.7.0/        finished build
//	│   ├── kube-apiserver
//	│   ├── etcd
//	│   ├── .complete                             written last
//	│   ├── kube-controller-manager               built on first need
//	│   ├── .complete-kube-controller-manager     written after it, with its version
//	│   ├── kube-scheduler, kwok                  likewise, each with its marker
//	└── kube-apiserver-v1.37.0-etcd-v3.7.0.lock    taken while building
//
// Processes that ask at once take turns on the lock: one builds, the others
// wait for it and reuse its result. A build happens in a staging directory
// and is moved into place only when it is complete, so an interrupted build
// is never used; a marker naming another version (kwok moved on) is
// rebuilt. Setting KUBEBUILDER_ASSETS to a directory holding
// kube-apiserver and etcd skips building them; each other binary is taken
// from there too if it is there, and built into the cache otherwise.
// `bosun controlplane` (make controlplane) builds them all ahead of a test
// run; BinariesReady tells whether a Start would build. All are built
// without the race detector and with CGO_ENABLED=0.
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
// By default that is all: nothing collects garbage, finishes deleting
// namespaces or runs pods. Two options make it a cluster in which most
// operators can be seen working:
//
//   - Options.ControllerManager runs kube-controller-manager with
//     DefaultControllers (or Options.Controllers): the garbage collector and
//     namespace controller, the Deployment, ReplicaSet, StatefulSet,
//     DaemonSet, Job, CronJob and TTL-after-finished controllers, the
//     EndpointSlice controller and the service account controllers. Start
//     waits until the garbage collector has deleted a probe object and
//     records the controllers on the kube-system namespace, in the
//     annotation controlplane.bosun.dev/controllers, where
//     RunningControllers finds them.
//   - Options.Nodes runs that many simulated nodes. kube-scheduler, the
//     real one, places pods on them (so node selectors, affinity, taints and
//     topology spread behave as in a cluster), and kwok moves each placed
//     pod through its life: Running and Ready at once, a Job's pod then
//     Succeeded, a pod labelled PodExitCodeLabel Failed with that exit code,
//     a deleted pod gone at once. No container runs; pods get addresses from
//     10.244.0.0/16 that nothing listens on. Start waits until a probe pod
//     has become Ready.
//
// Both run as the administrator, without leader election and serving
// nothing. Once built, they add about half a second to Start; see
// docs/BENCHMARKS.md for the figures.
//
// # Webhooks
//
// Options.Webhooks installs admission webhook configurations
// (manifest.DecodeWebhooks reads controller-gen's manifests), each rewritten to call
// ControlPlane.WebhookServer: a local address with a serving certificate
// made for this control plane and trusted by its API server. The CRD of a
// kind that is convertible in Options.Scheme (a hub and its spokes) gets its
// conversion webhook pointed at /convert on the same server. Serve them
// from a manager whose webhook server takes those options, as bosuntest's
// managers and `bosun dev` do.
//
// Package bosuntest wraps Start for tests.
//
// Maturity: stable. Every envtest suite of bosun runs on it.
package controlplane
