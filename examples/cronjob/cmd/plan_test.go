package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/examples/cronjob"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	cronjobv2 "github.com/bosunkit/bosun/examples/cronjob/api/v2"
	"github.com/bosunkit/bosun/operator"
)

// TestPlanOfAStorageMigration runs the cronjob operator with --plan, as
// the command wires it (the controller, the webhooks and the storage
// version migration, whose client is its own), on a cluster where the
// migration has work: CronJobs stored at v1, v2 now the storage version
// and the CRD's status.storedVersions [v1 v2], and CronJobs with a run
// due, whose passes would start a Job and write the status. The plan
// reports the migration's rewrites and its trim of storedVersions as dry
// runs forced by the plan, and each CronJob's changes; afterwards nothing
// on the server has changed: the CronJobs' and the CRD's resourceVersions,
// storedVersions still [v1 v2], no Job, and each CronJob still stored at
// v1 (an update that changes nothing still reaches etcd, as it does only
// for an object stored at another version than the storage version).
//
// It runs on a control plane of its own, since it changes the CRD; a
// manager of the test serves the conversion webhook, as the live
// operator's Deployment would beside a plan, whose webhook server is off.
func TestPlanOfAStorageMigration(t *testing.T) {
	cpOpts, err := controlplane.OptionsFor(cronjob.AddToScheme, cronjob.CRDs)()
	if err != nil {
		t.Fatal(err)
	}
	if cpOpts.Webhooks, err = cronjob.Webhooks(); err != nil {
		t.Fatal(err)
	}
	cp := bosuntest.Start(t, cpOpts)
	bosuntest.RunManager(t, cp, cronjob.SetupWebhookWithManager)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	c, ns := cp.Client, bosuntest.Namespace(t, cp.Client)
	ctx := t.Context()

	// CronJobs stored at v1, each with a run due: its last run was
	// scheduled two minutes ago, and it runs every minute.
	names := []string{"due-a", "due-b", "due-c"}
	lastRun := metav1.NewTime(time.Now().Add(-2 * time.Minute).Truncate(time.Second))
	for _, name := range names {
		cj := &cronjobv1.CronJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: cronjobv1.CronJobSpec{
				Schedule: "* * * * *",
				JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
				}}}},
			},
		}
		if err := c.Create(ctx, cj); err != nil {
			t.Fatal(err)
		}
		cj.Status.LastScheduleTime = &lastRun
		if err := c.Status().Update(ctx, cj); err != nil {
			t.Fatal(err)
		}
	}
	waitStoredVersions(t, c, "v1")
	makeV2TheStorageVersion(t, c, ns)
	storedAtV2 := cronJobVersions(t, c, ns)["probe"]

	before := cronJobVersions(t, c, ns)
	crdBefore := getCRD(t, c)

	flags := operator.DefaultFlags()
	flags.ProbeAddr, flags.MetricsAddr, flags.Plan = "0", "0", true
	pctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	out := &strings.Builder{}
	// The command's options, but for a controller name other tests of
	// the process may use too.
	opts := options()
	opts.Manager = func(o *ctrl.Options) { o.Controller.SkipNameValidation = ptr.To(true) }
	if err := operator.Run(pctx, opts, flags, out); err != nil {
		t.Fatalf("--plan: %v\n%s", err, out)
	}
	report := out.String()
	t.Logf("the plan:\n%s", report)

	// What the plan says.
	for _, name := range names {
		lines := section(report, fmt.Sprintf("CronJob %s/%s ", ns, name))
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "create Job "+ns+"/"+name+"-") }) {
			t.Errorf("the plan does not start the due run of CronJob %s: %q", name, lines)
		}
	}
	// The migration's writes: a rewrite of each CronJob at v2, then the
	// trim of storedVersions, each a dry run the plan made of it.
	var want []string
	for _, name := range append(names, "probe") {
		want = append(want, fmt.Sprintf("PUT /apis/cronjob.bosun.dev/v2/namespaces/%s/cronjobs/%s", ns, name))
	}
	want = append(want, "PATCH /apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+cronjob.CRDName+"/status")
	forced := section(report, "writes of other clients of the operator, sent as dry runs:")
	if diff := cmp.Diff(want, forced, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("the migration's writes, as the plan lists them (-want +got):\n%s", diff)
	}
	if strings.Contains(report, "refused") || strings.Contains(report, "migration failed") {
		t.Errorf("the plan refused a write or the migration failed:\n%s", report)
	}

	// What the server holds.
	if after := cronJobVersions(t, c, ns); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("--plan changed CronJobs:\nbefore %v\nafter  %v", before, after)
	}
	crdAfter := getCRD(t, c)
	if crdAfter.ResourceVersion != crdBefore.ResourceVersion {
		t.Errorf("--plan changed the CRD: resourceVersion %s, was %s", crdAfter.ResourceVersion, crdBefore.ResourceVersion)
	}
	if got := crdAfter.Status.StoredVersions; !slices.Equal(got, []string{"v1", "v2"}) {
		t.Errorf("--plan changed the CRD's storedVersions to %v, want [v1 v2]", got)
	}
	var jobs batchv1.JobList
	if err := c.List(ctx, &jobs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) > 0 {
		t.Errorf("--plan started %d Jobs", len(jobs.Items))
	}
	// Each CronJob is still stored at v1: written back unchanged, it
	// reaches etcd (the migration would have spared it that). The probe,
	// stored at v2, does not.
	for _, name := range append(names, "probe") {
		cj := &cronjobv1.CronJob{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cj); err != nil {
			t.Fatal(err)
		}
		was := cj.ResourceVersion
		if err := c.Update(ctx, cj); err != nil {
			t.Fatal(err)
		}
		switch rewritten := cj.ResourceVersion != was; {
		case name == "probe" && rewritten:
			t.Errorf("the probe, stored at v2 (resourceVersion %s), was stored again", storedAtV2)
		case name != "probe" && !rewritten:
			t.Errorf("CronJob %s is no longer stored at v1: written back unchanged, it did not reach etcd", name)
		}
	}
}

// makeV2TheStorageVersion makes v2 the storage version of the CronJob
// CRD, as a later release would, and waits until the API server writes
// CronJobs at v2, which the CronJob "probe" it creates in ns tells: an
// update that changes nothing reaches etcd (and moves the
// resourceVersion) only while an object is stored at another version.
// The probe is stored at v2 on return.
func makeV2TheStorageVersion(t *testing.T, c client.Client, ns string) {
	t.Helper()
	probe := &cronjobv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"},
		Spec: cronjobv1.CronJobSpec{
			Schedule: "*/5 * * * *", Suspend: ptr.To(true),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
			}}}},
		},
	}
	if err := c.Create(t.Context(), probe); err != nil {
		t.Fatal(err)
	}
	crd := getCRD(t, c)
	for i := range crd.Spec.Versions {
		crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == cronjobv2.GroupVersion.Version
	}
	if err := c.Update(t.Context(), crd); err != nil {
		t.Fatal(err)
	}
	waitStoredVersions(t, c, "v1", "v2")
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
}

// getCRD returns the CronJob CRD.
func getCRD(t *testing.T, c client.Client) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: cronjob.CRDName}, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// waitStoredVersions waits until the CronJob CRD's status.storedVersions
// is want.
func waitStoredVersions(t *testing.T, c client.Client, want ...string) {
	t.Helper()
	bosuntest.Eventually(t, func(ctx context.Context) error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: cronjob.CRDName}, crd); err != nil {
			return err
		}
		if got := crd.Status.StoredVersions; !slices.Equal(got, want) {
			return fmt.Errorf("storedVersions %v, want %v", got, want)
		}
		return nil
	})
}

// cronJobVersions returns the resourceVersions of the CronJobs of ns.
func cronJobVersions(t *testing.T, c client.Client, ns string) map[string]string {
	t.Helper()
	var list cronjobv1.CronJobList
	if err := c.List(t.Context(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, cj := range list.Items {
		got[cj.Name] = cj.ResourceVersion
	}
	return got
}

// section returns the lines, trimmed, listed under the line of report
// that starts with heading.
func section(report, heading string) []string {
	var lines []string
	in := false
	for line := range strings.SplitSeq(report, "\n") {
		switch {
		case strings.HasPrefix(line, heading):
			in = true
		case in && strings.HasPrefix(line, "  "):
			lines = append(lines, strings.TrimSpace(line))
		default:
			in = false
		}
	}
	return lines
}
