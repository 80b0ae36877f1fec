// Package operator is the main function of an operator binary built with
// bosun: the command-line flags kubebuilder's scaffold gives, a manager
// configured from them, health and readiness probes, leader election,
// secure metrics and a bounded graceful shutdown, and a development mode
// that runs the operator against an embedded control plane.
//
// A cmd/main.go is then a few lines:
//
//	func main() {
//		operator.Main(operator.Options{
//			Name:        "shop",
//			AddToScheme: v1.AddToScheme,
//			Setup:       controller.SetupWithManager,
//			CRDs:        crd.CRDs, // for --dev
//		})
//	}
//
// # Flags
//
// Main binds these to the process's flag set, with the names and defaults
// of kubebuilder's cmd/main.go:
//
//	--metrics-bind-address       address of the metrics endpoint; "0" (default) turns it off, ":8443" serves HTTPS
//	--metrics-secure             serve metrics over HTTPS behind Kubernetes authentication and authorization (default true)
//	--health-probe-bind-address  address of /healthz and /readyz (default ":8081")
//	--leader-elect               elect a leader, so that only one replica reconciles
//	--leader-election-id         name of the Lease (default "<Name>.bosun.dev")
//	--leader-election-namespace  namespace of the Lease (default: the one the operator runs in)
//	--leader-election-lease-duration, --leader-election-renew-deadline, --leader-election-retry-period
//	--graceful-shutdown-timeout  how long runnables may take to stop after SIGTERM (default 30s)
//	--enable-http2               serve metrics and webhooks over HTTP/2 (default false, see CVE-2023-44487)
//	--webhook-port               port of the webhook server, when the operator has webhooks (default 9443)
//	--webhook-cert-path          directory of the webhook server's certificate (a mounted Secret); rotated files are reloaded
//	--webhook-cert-name, --webhook-cert-key  the files in it (default tls.crt, tls.key)
//	--kubeconfig                 the cluster (controller-runtime's flag; else in-cluster, else ~/.kube/config; Options.Config replaces this search)
//	--zap-devel, --zap-log-level, --zap-encoder, --zap-stacktrace-level, --zap-time-encoding
//	--version                    print what the binary was built from and exit
//	--dev                        run against an embedded control plane (see below)
//	--dev-workloads              with --dev, run workload controllers and nodes too (default true)
//	--plan                       print what one pass over every object would change, change nothing, exit (see below)
//	--role                       print the ClusterRole the controllers' steps declare and exit (see below)
//
// On a clean stop (SIGTERM) the leader releases its Lease, so a standby
// takes over at once instead of after the lease duration; a second signal
// exits at once.
//
// # Readiness
//
// /healthz answers once the process runs; /readyz once the manager's
// caches have synced and, when Options.Webhooks is set, its webhook server
// answers, so a rolling update waits for a replica that can reconcile and
// admit.
//
// # Development mode
//
// With --dev the operator starts kube-apiserver and etcd on this machine
// (package controlplane, which builds them from Go modules on first use),
// and with them kube-controller-manager (garbage collection and the
// workload controllers), kube-scheduler and 2 simulated nodes on which pods
// become Running and Ready (--dev-workloads=false leaves those three out),
// installs Options.CRDs and Options.Webhooks (pointed at the operator's
// webhook server, with a certificate the control plane trusts: see
// docs/WEBHOOKS.md), creates Options.Samples in the namespace "default"
// once the webhooks answer,
// writes a kubeconfig for kubectl (--dev-kubeconfig, default
// bin/dev.kubeconfig), and runs until Ctrl-C, when it stops the control
// plane. No cluster is needed.
//
// --dev needs the control plane in the binary, and only a development
// build links it: one that compiles a file importing package operator/dev,
// which bosun init writes as cmd/dev.go behind the build tag bosundev
// (`bosun dev` and `make dev` build with -tags bosundev). A release build
// links neither the control plane nor envtest, and refuses --dev with a
// message that says so (TestReleaseBuildLinksNoControlPlane in
// operator/dev, TestDevNeedsTheDevPackage).
//
// # Plan mode
//
// With --plan the operator changes nothing and reports what it would
// change: the upgrade-impact report to read before rolling out a new
// version. Run the new version's binary against the cluster
// (`go run ./cmd --plan --kubeconfig ~/.kube/config`). Its client sends
// every write with dryRun=All, so the API server validates, defaults and
// admits it without storing it; the managed steps call their external
// systems' Connect and Observe but record Create, Update, Delete and
// RepairCredentials instead of calling them; events are dropped; leader
// election, metrics, probes and the webhook server are off. Every other
// client built from the manager's rest.Config or HTTP client sends its
// writes as dry runs too (those the API server cannot dry-run, such as
// exec, are refused), and the report lists them. A runnable Setup adds
// that has a method Migrate(context.Context) error (a migrate.Migrator, a
// storage version migration) is not started: the plan calls its Migrate
// once, beside the passes, and waits for it, so that the report holds the
// migration's writes; a migration that fails fails the plan. Once every
// object of the operator's kinds present when the caches synced has had a
// pass and every migration has ended, it prints, per object, the creates (their fields), the updates,
// patches and applies (the fields that would change, read from the live
// object and the server's dry-run answer, without resourceVersion,
// managedFields and the like), the deletes and the external calls of that
// first pass, and exits: 0 when every pass succeeded, 1 when one failed
// (the report says which) or the plan was stopped first. Writes a pass
// would make only after an earlier write took effect (a second pass) are
// not in the plan. The plan never prints the values of Secrets' data and
// stringData, nor of the fields Options.Sensitive names: it names the keys
// that would be added, changed or removed, with "(sensitive value)" for
// each value.
//
// # The build on each object
//
// The manager's bosun.Observation carries the binary's version (the main
// module's, as --version prints it) as its Build, and the bosun reconcilers
// set up on it record it in bosun.AnnotationReconciledBy on the objects
// they reconcile: after an upgrade each object says which build last
// reconciled it (`bosun explain` prints it), at the cost of one write per
// object. A binary that no version names ("(devel)": go run, go test, a
// build outside version control) records nothing. An operator whose
// version comes from elsewhere (-ldflags "-X main.version=v1.4.2") sets
// bosun.ObservationOf(mgr).Build in Setup before its controllers, or a
// reconciler's Options.Build.
//
// # The role from the steps
//
// With --role the operator prints the least-privilege ClusterRole of its
// controllers and exits, without a cluster: it sets the controllers up on a
// manager that never starts (Setup runs; flags Setup requires must be
// given), asks each bosun reconciler for its rules
// (bosun.Reconciler.PolicyRules: the engine's and those its steps declare,
// the steps `bosun gen` writes included) and each runnable Setup adds that
// declares its own with a PolicyRules method (a migrate.Migrator, say), and
// prints them merged, named manager-role and laid out as controller-gen
// writes config/rbac/role.yaml, so that
//
//	go run ./cmd --role > config/rbac/role.yaml
//
// writes the role from the code instead of from markers, or a test
// compares the two. A controller-runtime reconciler set up without the
// engine is not seen: its role comes from its markers, and --role fails
// when Setup sets up no bosun reconciler.
//
// # Tracing
//
// When the standard OpenTelemetry environment asks for it (for example
// OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318), Run installs a
// TracerProvider as otel's global one, and every bosun Reconciler makes a
// span per pass and per step, with the trace id in the pass's log lines;
// without it, tracing is off and costs nothing. See TracerProviderFromEnv
// and docs/TRACING.md.
//
// Maturity: stable. Its flags and defaults are kubebuilder's, and every example runs on it.
package operator
