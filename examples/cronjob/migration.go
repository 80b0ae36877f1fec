package cronjob

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/migrate"
)

// CRDName is the name of the CronJob CustomResourceDefinition.
const CRDName = "cronjobs.cronjob.bosun.dev"

// The migration reads and patches the CronJob CRD, and no other.
//
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;patch,resourceNames=cronjobs.cronjob.bosun.dev
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions/status,verbs=patch,resourceNames=cronjobs.cronjob.bosun.dev

// SetupMigrationWithManager adds to mgr the storage version migration of
// CronJobs (package migrate), which runs on the leader only. Today v1 is
// the storage version and there is nothing to migrate: the migration looks
// at the CRD once a minute and does nothing. A release that stores v2
// instead (+kubebuilder:storageversion on v2) makes the API server write
// new and changed CronJobs at v2 while the others stay at v1 in etcd; the
// migration then rewrites every CronJob, so that all are stored at v2, and
// sets the CRD's status.storedVersions to [v2], after which a later release
// may stop serving v1. The webhook server must serve the conversion
// meanwhile (SetupWebhookWithManager): the migration reads and writes
// CronJobs at the storage version.
//
// It reads from the API server, not the manager's cache, through a client
// of its own.
func SetupMigrationWithManager(mgr ctrl.Manager) error {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return fmt.Errorf("cronjob: migration: %w", err)
	}
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: scheme, HTTPClient: mgr.GetHTTPClient()})
	if err != nil {
		return fmt.Errorf("cronjob: migration: %w", err)
	}
	m, err := migrate.New(c, migrate.Options{CRD: CRDName, Logger: mgr.GetLogger().WithName("migrate")})
	if err != nil {
		return fmt.Errorf("cronjob: %w", err)
	}
	if err := mgr.Add(m); err != nil {
		return fmt.Errorf("cronjob: adding the migration: %w", err)
	}
	return nil
}
