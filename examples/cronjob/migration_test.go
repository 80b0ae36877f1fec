package cronjob

import (
	"context"
	"fmt"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	cronjobv2 "github.com/bosunkit/bosun/examples/cronjob/api/v2"
	"github.com/bosunkit/bosun/examples/cronjob/config/rbac"
)

// storedVersions returns the CronJob CRD's status.storedVersions.
func storedVersions(ctx context.Context, c client.Client) ([]string, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: CRDName}, crd); err != nil {
		return nil, err
	}
	return crd.Status.StoredVersions, nil
}

// waitStoredVersions waits until the CronJob CRD's status.storedVersions
// is want.
func waitStoredVersions(t *testing.T, c client.Client, want ...string) {
	t.Helper()
	bosuntest.Eventually(t, func(ctx context.Context) error {
		got, err := storedVersions(ctx, c)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("storedVersions %v, want %v", got, want)
		}
		return nil
	})
}

// TestStorageMigration stores CronJobs at v1, as the operator does today,
// then makes v2 the storage version, as a later release would, and runs
// the operator's storage version migration (SetupMigrationWithManager) in
// a manager, as a user that holds only the operator's ClusterRole: it
// rewrites every CronJob, now stored at v2, and trims the CRD's
// status.storedVersions to [v2]. Each CronJob still reads as it did
// at both versions, schedules v2 cannot hold ("@hourly") and v2 fields v1
// cannot tell apart ("*") included. It runs on a control plane of its own,
// since it changes the CRD.
func TestStorageMigration(t *testing.T) {
	opts, err := webhookOptions()
	if err != nil {
		t.Fatal(err)
	}
	cp := bosuntest.Start(t, opts)
	bosuntest.RunManager(t, cp, SetupWebhookWithManager)
	c, ns := cp.Client, bosuntest.Namespace(t, cp.Client)
	status := testStatus(ns)

	cases := []versionCase{
		{name: "five-fields", v1: "*/5 9-17 * * MON-FRI", v2: cronjobv2.CronSchedule{Minute: cronField("*/5"), Hour: cronField("9-17"), DayOfWeek: cronField("MON-FRI")}},
		{name: "hourly", v1: "@hourly", v2Kept: "@hourly"},
		{name: "time-zone", v1: "CRON_TZ=Europe/Berlin 0 3 * * *", v2Kept: "CRON_TZ=Europe/Berlin 0 3 * * *"},
		{name: "a-star", v2: cronjobv2.CronSchedule{Minute: cronField("30"), Month: cronField("*")}, v1: "30 * * * *", v1Kept: `{"minute":"30","month":"*"}`},
	}
	before := map[string]string{}
	for _, tc := range cases {
		meta := metav1.ObjectMeta{Namespace: ns, Name: tc.name}
		var obj client.Object = &cronjobv1.CronJob{ObjectMeta: meta, Spec: v1Spec(tc.v1)}
		if tc.v1Kept != "" {
			obj = &cronjobv2.CronJob{ObjectMeta: meta, Spec: v2Spec(tc.v2)}
		}
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
		key := client.ObjectKeyFromObject(obj)
		writeStatus(t, c, key, status)
		cj := &cronjobv1.CronJob{}
		if err := c.Get(t.Context(), key, cj); err != nil {
			t.Fatal(err)
		}
		before[tc.name] = cj.ResourceVersion
	}
	// The probe tells when the API server writes at v2.
	probe := newCronJob(ns, "probe", every5)
	if err := c.Create(t.Context(), probe); err != nil {
		t.Fatal(err)
	}
	waitStoredVersions(t, c, "v1")

	// The release that stores v2.
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: CRDName}, crd); err != nil {
		t.Fatal(err)
	}
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == cronjobv2.GroupVersion.Version
	}
	if err := c.Update(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	waitStoredVersions(t, c, "v1", "v2")
	// The API server takes the new storage version up a moment later: an
	// update that changes nothing reaches etcd (and moves the
	// resourceVersion) only once the object is encoded at another version
	// than it was stored at (see package migrate).
	bosuntest.Eventually(t, func(ctx context.Context) error {
		cur := &cronjobv1.CronJob{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(probe), cur); err != nil {
			return err
		}
		if err := c.Update(ctx, cur); err != nil {
			return err
		}
		if cur.ResourceVersion == probe.ResourceVersion {
			return fmt.Errorf("the probe is still written at v1")
		}
		probe = cur
		return nil
	})

	// The migration runs as a user that holds only the operator's
	// generated ClusterRole: its RBAC markers grant all it needs.
	role, err := rbac.ClusterRole()
	if err != nil {
		t.Fatal(err)
	}
	const user = "cronjob-migration"
	bindRole(t, cp, user, role.Rules)
	bosuntest.RunManagerAs(t, cp, user, SetupMigrationWithManager)
	waitStoredVersions(t, c, "v2")

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := client.ObjectKey{Namespace: ns, Name: tc.name}
			cj := &cronjobv1.CronJob{}
			if err := c.Get(t.Context(), key, cj); err != nil {
				t.Fatal(err)
			}
			if cj.ResourceVersion == before[tc.name] {
				t.Errorf("resourceVersion %s as before the migration: not rewritten at v2", cj.ResourceVersion)
			}
			checkAtBothVersions(t, c, key, tc, status)
		})
	}
	cur := &cronjobv1.CronJob{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(probe), cur); err != nil {
		t.Fatal(err)
	}
	if cur.ResourceVersion != probe.ResourceVersion {
		t.Errorf("the probe, stored at v2 before the migration, was written again: resourceVersion %s, was %s", cur.ResourceVersion, probe.ResourceVersion)
	}
}
