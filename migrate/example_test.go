package migrate_test

import (
	"fmt"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/migrate"
)

// Run a Migrator for one CRD in a manager: the leader rewrites the objects
// stored at an old version and then trims the CRD's storedVersions.
func Example() {
	run := func(cfg *rest.Config, mgr manager.Manager) error {
		// A client that reads from the API server, not the manager's cache.
		c, err := client.New(cfg, client.Options{Scheme: controlplane.NewScheme()})
		if err != nil {
			return err
		}
		m, err := migrate.New(c, migrate.Options{
			CRD:       "widgets.example.bosun.dev",
			BatchSize: 200,
			RateLimit: 20,
		})
		if err != nil {
			return err
		}
		return mgr.Add(m)
	}
	fmt.Println(run != nil)
	// Output: true
}
