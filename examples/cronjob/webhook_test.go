package cronjob

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	cronjobv2 "github.com/bosunkit/bosun/examples/cronjob/api/v2"
)

// defaulted is what the defaulting webhook may set of a CronJob's spec.
type defaulted struct {
	ConcurrencyPolicy cronjobv1.ConcurrencyPolicy
	Suspend           *bool
	Successful        *int32
	Failed            *int32
}

func defaultedOf(cj *cronjobv1.CronJob) defaulted {
	s := cj.Spec
	return defaulted{s.ConcurrencyPolicy, s.Suspend, s.SuccessfulJobsHistoryLimit, s.FailedJobsHistoryLimit}
}

// TestDefaulting creates CronJobs through the API server, whose mutating
// webhook fills in the four defaults where they are unset, and only there:
// on create and on update, for a CronJob written at v1 and one written at
// v2 (which the API server converts to v1 for the webhook and back).
func TestDefaulting(t *testing.T) {
	cp := shared.ControlPlane(t)
	c, ns := cp.Client, bosuntest.Namespace(t, cp.Client)
	defaults := defaulted{cronjobv1.AllowConcurrent, ptr.To(false), ptr.To[int32](3), ptr.To[int32](1)}
	get := func(t *testing.T, name string) *cronjobv1.CronJob {
		t.Helper()
		cj := &cronjobv1.CronJob{}
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: name}, cj); err != nil {
			t.Fatal(err)
		}
		return cj
	}

	t.Run("unset fields get their defaults", func(t *testing.T) {
		if err := c.Create(t.Context(), newCronJob(ns, "unset", every5)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(defaults, defaultedOf(get(t, "unset"))); diff != "" {
			t.Errorf("defaults (-want +got):\n%s", diff)
		}
	})

	t.Run("set fields are kept", func(t *testing.T) {
		set := defaulted{cronjobv1.ForbidConcurrent, ptr.To(true), ptr.To[int32](0), ptr.To[int32](7)}
		cj := newCronJob(ns, "set", every5, func(cj *cronjobv1.CronJob) {
			cj.Spec.ConcurrencyPolicy, cj.Spec.Suspend = set.ConcurrencyPolicy, set.Suspend
			cj.Spec.SuccessfulJobsHistoryLimit, cj.Spec.FailedJobsHistoryLimit = set.Successful, set.Failed
		})
		if err := c.Create(t.Context(), cj); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(set, defaultedOf(get(t, "set"))); diff != "" {
			t.Errorf("fields set by the user (-want +got):\n%s", diff)
		}
	})

	t.Run("an update that removes a field gets its default back", func(t *testing.T) {
		cj := get(t, "set")
		cj.Spec.SuccessfulJobsHistoryLimit, cj.Spec.ConcurrencyPolicy = nil, ""
		if err := c.Update(t.Context(), cj); err != nil {
			t.Fatal(err)
		}
		want := defaulted{cronjobv1.AllowConcurrent, ptr.To(true), ptr.To[int32](3), ptr.To[int32](7)}
		if diff := cmp.Diff(want, defaultedOf(get(t, "set"))); diff != "" {
			t.Errorf("after the update (-want +got):\n%s", diff)
		}
	})

	t.Run("a CronJob written at v2", func(t *testing.T) {
		v2 := &cronjobv2.CronJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "written-at-v2"},
			Spec: cronjobv2.CronJobSpec{
				Schedule:    cronjobv2.CronSchedule{Minute: ptr.To[cronjobv2.CronField]("*/5")},
				JobTemplate: newCronJob(ns, "x", every5).Spec.JobTemplate,
			},
		}
		if err := c.Create(t.Context(), v2); err != nil {
			t.Fatal(err)
		}
		got := &cronjobv2.CronJob{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(v2), got); err != nil {
			t.Fatal(err)
		}
		s := got.Spec
		if diff := cmp.Diff(defaults, defaulted{cronjobv1.ConcurrencyPolicy(s.ConcurrencyPolicy), s.Suspend, s.SuccessfulJobsHistoryLimit, s.FailedJobsHistoryLimit}); diff != "" {
			t.Errorf("defaults read at v2 (-want +got):\n%s", diff)
		}
	})
}

// warnings keeps the warnings the API server returns.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, text)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

// wantInvalid checks that err is a 422 Invalid whose message holds each of
// want and, when field is not empty, whose one cause names field.
func wantInvalid(t *testing.T, err error, field string, want ...string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("error %v, want 422 Invalid", err)
	}
	for _, w := range append(want, field) {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	var status apierrors.APIStatus
	if field != "" && errors.As(err, &status) {
		causes := status.Status().Details.Causes
		if len(causes) != 1 || causes[0].Field != field {
			t.Errorf("causes %+v, want one naming %s", causes, field)
		}
	}
}

// TestValidation writes CronJobs that the API server must refuse with 422
// Invalid naming the field: schedules the cron parser does not read
// (refused by the validating webhook, at v1 and at v2, whose fields the API
// server converts to a v1 schedule for it) and a name too long for the
// names of the Jobs (refused by the CRD's CEL rule, before any webhook).
// What is valid is admitted, a schedule that never fires with a warning.
func TestValidation(t *testing.T) {
	cp := shared.ControlPlane(t)
	c, ns := cp.Client, bosuntest.Namespace(t, cp.Client)

	for _, tt := range []struct{ name, schedule, want string }{
		{"not-a-schedule", "every tuesday", "expected exactly 5 fields"},
		{"minute-out-of-range", "61 * * * *", "above maximum"},
		{"unknown-zone", "CRON_TZ=Nowhere/Atlantis 0 * * * *", "Nowhere/Atlantis"},
	} {
		t.Run("schedule "+tt.name, func(t *testing.T) {
			err := c.Create(t.Context(), newCronJob(ns, tt.name, tt.schedule))
			wantInvalid(t, err, "spec.schedule", `vcronjob-v1.cronjob.bosun.dev" denied the request`, tt.want)
		})
	}

	t.Run("schedule at v2", func(t *testing.T) {
		v2 := &cronjobv2.CronJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "v2-hour-out-of-range"},
			Spec: cronjobv2.CronJobSpec{
				Schedule:    cronjobv2.CronSchedule{Minute: ptr.To[cronjobv2.CronField]("0"), Hour: ptr.To[cronjobv2.CronField]("25")},
				JobTemplate: newCronJob(ns, "x", every5).Spec.JobTemplate,
			},
		}
		wantInvalid(t, c.Create(t.Context(), v2), "spec.schedule", `"0 25 * * *"`, "above maximum")
	})

	t.Run("schedule changed by an update", func(t *testing.T) {
		cj := newCronJob(ns, "changed", every5)
		if err := c.Create(t.Context(), cj); err != nil {
			t.Fatal(err)
		}
		cj.Spec.Schedule = "every tuesday"
		wantInvalid(t, c.Update(t.Context(), cj), "spec.schedule", "expected exactly 5 fields")
	})

	t.Run("name", func(t *testing.T) {
		long := strings.Repeat("n", 53)
		// The rule is the CRD's, at its root, with fieldPath .metadata: the
		// cause names metadata (the CRD's schema declares no metadata.name
		// for a fieldPath to name), the message metadata.name.
		wantInvalid(t, c.Create(t.Context(), newCronJob(ns, long, every5)), "metadata", "metadata.name must be at most 52 characters")
		if err := c.Create(t.Context(), newCronJob(ns, long[:52], every5)); err != nil {
			t.Errorf("create with a name of 52 characters: %v", err)
		}
	})

	t.Run("valid schedules", func(t *testing.T) {
		for i, schedule := range []string{"@hourly", "@every 90m", "CRON_TZ=Europe/Berlin 0 3 * * 1-5", "*/15 9-17 * JAN-MAR MON-FRI"} {
			if err := c.Create(t.Context(), newCronJob(ns, fmt.Sprintf("valid-%d", i), schedule)); err != nil {
				t.Errorf("create with schedule %q: %v", schedule, err)
			}
		}
	})

	t.Run("a schedule that never fires is admitted with a warning", func(t *testing.T) {
		rec := &warnings{}
		cfg := rest.CopyConfig(cp.Config)
		cfg.WarningHandler = rec
		wc, err := client.New(cfg, client.Options{Scheme: cp.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		if err := wc.Create(t.Context(), newCronJob(ns, "never", "0 0 30 2 *")); err != nil {
			t.Fatal(err)
		}
		if got := rec.all(); len(got) != 1 || !strings.Contains(got[0], `spec.schedule: "0 0 30 2 *" never fires`) {
			t.Errorf("warnings %q, want one that the schedule never fires", got)
		}
	})
}

// TestValidateKeepsAnUnchangedSchedule: an update that leaves an invalid
// schedule as it is (one stored before the webhook was installed) is
// admitted, so the CronJob can still be labelled or have its other fields
// fixed; changing it to another invalid schedule is not.
func TestValidateKeepsAnUnchangedSchedule(t *testing.T) {
	old := newCronJob("ns", "c", "every tuesday")
	labelled := old.DeepCopy()
	labelled.Labels = map[string]string{"team": "a"}
	if _, errs := validateCronJob(t.Context(), old, labelled); len(errs) != 0 {
		t.Errorf("update with the schedule unchanged: %v, want admitted", errs)
	}
	changed := old.DeepCopy()
	changed.Spec.Schedule = "every wednesday"
	if _, errs := validateCronJob(t.Context(), old, changed); len(errs) != 1 || errs[0].Field != "spec.schedule" {
		t.Errorf("update to another invalid schedule: %v, want one error on spec.schedule", errs)
	}
}
