// Command postgres runs the postgres example operator: in a cluster from its
// Deployment (see ../config), against the cluster of a kubeconfig, or with
// --dev against an embedded control plane with its samples. Run it with
// --help for the flags; package operator describes them.
//
// The server to manage, with the administrator's credentials, comes from
// the first of: --postgres-dsn, for development (a flag shows in the
// Deployment's spec and the process list); the file --postgres-dsn-file
// names, such as a key of a mounted Secret; the environment variable
// POSTGRES_DSN, which the Deployment sets from a Secret (secretKeyRef).
// A DSN without a password takes it from PGPASSWORD, or from the file
// PGPASSFILE names, as libpq does.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun/examples/postgres"
	"github.com/bosunkit/bosun/managed"
	"github.com/bosunkit/bosun/operator"
)

var (
	dsn         = flag.String("postgres-dsn", "", "The PostgreSQL server to manage, as a connection URL or key=value string. For development: in a cluster, use --postgres-dsn-file or $"+envDSN+".")
	dsnFile     = flag.String("postgres-dsn-file", "", "A file holding the DSN, such as a key of a mounted Secret; read when --postgres-dsn is not given.")
	rate        = flag.Float64("postgres-calls-per-second", 0, "How many calls of the server both controllers may start per second together; 0 means no limit.")
	concurrency = flag.Int("postgres-max-connections", 0, "How many connections to the server both controllers may hold at once; 0 means one per worker.")
	batch       = flag.Bool("postgres-batch-observe", true, "Observe the roles (databases) whose polls are due together with one query of pg_roles (pg_database).")
	listen      = flag.Bool("postgres-listen", false, "LISTEN on bosun_role_changed and bosun_database_changed, and observe at once the role or database a notification names.")
)

// envDSN names the environment variable that holds the DSN when neither
// flag gives it; the Deployment sets it from a Secret.
const envDSN = "POSTGRES_DSN"

func main() { operator.Main(options()) }

// serverDSN returns the DSN: flagDSN (--postgres-dsn) when set, else the
// content of file (--postgres-dsn-file) without surrounding blanks, else
// the environment variable envDSN as getenv reads it. Its errors never
// hold the DSN.
func serverDSN(flagDSN, file string, getenv func(string) string) (string, error) {
	switch {
	case flagDSN != "":
		return flagDSN, nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--postgres-dsn-file: %w", err)
		}
		d := strings.TrimSpace(string(b))
		if d == "" {
			return "", fmt.Errorf("--postgres-dsn-file: %s is empty", file)
		}
		return d, nil
	case getenv(envDSN) != "":
		return strings.TrimSpace(getenv(envDSN)), nil
	}
	return "", fmt.Errorf("no PostgreSQL server: set $%s (from a Secret), --postgres-dsn-file or --postgres-dsn", envDSN)
}

// options describe the operator to operator.Main, and to its tests.
func options() operator.Options {
	return operator.Options{
		Name:        "postgres",
		AddToScheme: postgres.AddToScheme,
		CRDs:        postgres.CRDs,
		Samples:     postgres.Samples,
		// The controllers read no Secret but the Roles' connection
		// Secrets: the cache keeps those and no other Secret of the
		// cluster.
		Manager: func(o *ctrl.Options) { managed.CacheConnectionSecretsOnly(&o.Cache) },
		Setup: func(mgr ctrl.Manager) error {
			server, err := serverDSN(*dsn, *dsnFile, os.Getenv)
			if err != nil {
				return err
			}
			// One Limiter for both controllers: they talk to one server.
			limiter := managed.NewLimiter(managed.Limits{Rate: *rate, Concurrency: *concurrency})
			return postgres.SetupWithManager(mgr, postgres.Options{
				DSN: server, BatchObserve: *batch, Listen: *listen,
				Managed: []managed.Option{managed.WithLimiter(limiter)},
			})
		},
	}
}
