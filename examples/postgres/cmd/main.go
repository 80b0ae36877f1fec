// Command postgres runs the postgres example operator: in a cluster from its
// Deployment (see ../config), against the cluster of a kubeconfig, or with
// --dev against an embedded control plane with its samples. Run it with
// --help for the flags; package operator describes them.
package main

import (
	"errors"
	"flag"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun/examples/postgres"
	"github.com/bosunkit/bosun/managed"
	"github.com/bosunkit/bosun/operator"
)

var (
	dsn         = flag.String("postgres-dsn", "", "The PostgreSQL server to manage, as a connection URL or key=value string (required).")
	rate        = flag.Float64("postgres-calls-per-second", 0, "How many calls of the server both controllers may start per second together; 0 means no limit.")
	concurrency = flag.Int("postgres-max-connections", 0, "How many connections to the server both controllers may hold at once; 0 means one per worker.")
	batch       = flag.Bool("postgres-batch-observe", true, "Observe the roles (databases) whose polls are due together with one query of pg_roles (pg_database).")
	listen      = flag.Bool("postgres-listen", false, "LISTEN on bosun_role_changed and bosun_database_changed, and observe at once the role or database a notification names.")
)

func main() { operator.Main(options()) }

// options describe the operator to operator.Main, and to its tests.
func options() operator.Options {
	return operator.Options{
		Name:        "postgres",
		AddToScheme: postgres.AddToScheme,
		CRDs:        postgres.CRDs,
		Samples:     postgres.Samples,
		Setup: func(mgr ctrl.Manager) error {
			if *dsn == "" {
				return errors.New("--postgres-dsn is required")
			}
			// One Limiter for both controllers: they talk to one server.
			limiter := managed.NewLimiter(managed.Limits{Rate: *rate, Concurrency: *concurrency})
			return postgres.SetupWithManager(mgr, postgres.Options{
				DSN: *dsn, BatchObserve: *batch, Listen: *listen,
				Managed: []managed.Option{managed.WithLimiter(limiter)},
			})
		},
	}
}
