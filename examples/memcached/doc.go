// Package memcached is a bosun example operator that runs memcached servers,
// after the Memcached operator of the Operator SDK tutorial: a Memcached
// (cache.example.bosun.dev/v1alpha1) asks for spec.size servers, and may
// name their image and port; the operator runs them as a Deployment with a
// Service in front, and reports in the status how many are ready and the
// names of their pods.
//
// The reconciler has two steps. The first is the children step (package
// children) over Desired, which returns, for a Memcached named cache of
// size 3,
//
//	Deployment cache  3 replicas of memcached (spec.image, default
//	                  memcached:1.6.26-alpine3.19) listening on spec.port
//	                  (default 11211), pods labelled
//	                  app.kubernetes.io/name=memcached and
//	                  cache.example.bosun.dev/memcached=cache
//	Service    cache  ClusterIP, port spec.port "memcached", selecting
//	                  those pods
//
// It applies them with server-side apply, owned by the Memcached, only when
// they differ from what is live: a converged Memcached costs no write at
// all. What the Memcached says wins: someone who scales the Deployment or
// changes its image sees it put back at once, since the step watches its
// children and compares them with what it applied. It reports
// DeploymentReady, judged by DeploymentReadiness (every pod of the latest
// template, none too many, as many ready as the replicas; otherwise a
// message such as "waiting for 2 of 3 pods to be ready"), and ServiceReady.
//
// The second step, reportPods, sets status.readyReplicas from the
// Deployment's status and status.pods to the names of the pods that the
// Deployment's selector matches, read from the manager's cache, and the
// condition Available: True when the Deployment has rolled out spec.size
// ready pods and the status lists them, all of one template; otherwise
// False with reason Updating while pods come and go (Creating before the
// Deployment shows up), or RolloutStuck once the Deployment's rollout has
// passed its progress deadline. Available comes first in the engine's
// summary, so Ready tells of it: Ready is True exactly when status.readyReplicas
// equals spec.size and status.pods names that many pods. The step watches
// the pods that carry the cache.example.bosun.dev/memcached label, when
// they come, go or start being deleted, so the status follows them.
// LimitPodCache keeps the manager's cache to those pods (cmd/main.go sets
// it).
//
// Deleting a Memcached deletes nothing itself: its Deployment and Service
// carry owner references to it, so the garbage collector removes them, and
// the Deployment's ReplicaSets and pods after them. The reconciler has no
// finalizer.
//
// The API server validates a Memcached before the operator sees it, with
// no webhook: besides the bounds of the OpenAPI schema, CEL rules in the
// CRD (written as XValidation markers on the Go types) keep spec.port from
// changing once set (a transition rule on oldSelf; the Service's clients
// know the port, so a new port means a new Memcached) and require
// spec.image to name a tag or a digest. Rules a cluster wants on top,
// which need no code either, fit a ValidatingAdmissionPolicy: the one in
// config/policy, applied on its own, asks for at least two servers in
// namespaces labelled environment=production.
//
// The entry points used by tests and by `bosun demo` are AddToScheme, CRDs,
// SetupWithManager and Samples. The API types live in package v1alpha1
// under api/, the generated CRD manifest in config/crd, the ClusterRole
// generated from the controller's RBAC markers in config/rbac, and the
// sample in config/samples. The sample becomes Ready only on a cluster that
// runs its pods: the envtest tests run kube-controller-manager, and
// simulated nodes (controlplane.Options.Nodes), for that.
//
// Maturity: experimental. The example is new; its API may still change.
package memcached
