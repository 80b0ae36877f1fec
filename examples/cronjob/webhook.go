package cronjob

import (
	"context"
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	webhookconfig "github.com/bosunkit/bosun/examples/cronjob/config/webhook"
	"github.com/bosunkit/bosun/webhook"
)

// The markers below make config/webhook/manifests.yaml (go generate
// ./config/webhook). Their paths are those webhook.Kind registers; the
// match condition keeps the API server from calling the webhooks for a
// CronJob being deleted, so a webhook that is down never holds up the
// release of a finalizer.
//
// +kubebuilder:webhook:path=/mutate-cronjob-bosun-dev-v1-cronjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=cronjob.bosun.dev,resources=cronjobs,verbs=create;update,versions=v1,name=mcronjob-v1.cronjob.bosun.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"!has(object.metadata.deletionTimestamp)"}]}`
// +kubebuilder:webhook:path=/validate-cronjob-bosun-dev-v1-cronjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=cronjob.bosun.dev,resources=cronjobs,verbs=create;update,versions=v1,name=vcronjob-v1.cronjob.bosun.dev,admissionReviewVersions=v1,patch=`{"matchConditions":[{"name":"not-being-deleted","expression":"!has(object.metadata.deletionTimestamp)"}]}`

// SetupWebhookWithManager registers the CronJob webhooks with mgr's webhook
// server, on v1, the hub: defaulting (defaultCronJob), validation
// (validateCronJob) and, since the scheme holds v2 too (AddToScheme), the
// conversion between v1 and v2 at /convert. The API server converts a v2
// CronJob to v1 before it defaults or validates it, so the rules are
// written once, for v1.
//
// Which rules are where: the API server checks the name (at most 52
// characters) itself, with a CEL rule of the CRD, which needs no server and
// holds where the webhooks are not installed. The schedule needs this
// webhook: a schedule is valid when the cron parser the controller runs
// reads it (five fields with ranges, steps and names, descriptors such as
// "@hourly", "@every <duration>", a "CRON_TZ=<zone>" prefix whose zone is
// in the time zone database), which no CEL expression can reproduce. The
// defaults are the webhook's too, so that both versions get them from this
// one function rather than from a default repeated in each version's
// schema.
func SetupWebhookWithManager(mgr ctrl.Manager) error {
	return (&webhook.Kind[*cronjobv1.CronJob]{
		Default:  defaultCronJob,
		Validate: validateCronJob,
	}).SetupWithManager(mgr)
}

// Webhooks returns the admission webhook configurations of the cronjob
// operator, decoded from the manifests controller-gen generates into
// package config/webhook from the markers of SetupWebhookWithManager. Each
// call returns new objects.
func Webhooks() ([]client.Object, error) {
	hooks, err := webhookconfig.Configurations()
	if err != nil {
		return nil, fmt.Errorf("cronjob: %w", err)
	}
	return hooks, nil
}

// defaultCronJob fills in what cj leaves unset: the concurrency policy
// Allow, suspend false, and the history limits
// DefaultSuccessfulJobsHistoryLimit and DefaultFailedJobsHistoryLimit. It
// changes no field that is set.
func defaultCronJob(_ context.Context, cj *cronjobv1.CronJob) error {
	spec := &cj.Spec
	if spec.ConcurrencyPolicy == "" {
		spec.ConcurrencyPolicy = cronjobv1.AllowConcurrent
	}
	if spec.Suspend == nil {
		spec.Suspend = ptr.To(false)
	}
	if spec.SuccessfulJobsHistoryLimit == nil {
		spec.SuccessfulJobsHistoryLimit = ptr.To(cronjobv1.DefaultSuccessfulJobsHistoryLimit)
	}
	if spec.FailedJobsHistoryLimit == nil {
		spec.FailedJobsHistoryLimit = ptr.To(cronjobv1.DefaultFailedJobsHistoryLimit)
	}
	return nil
}

// validateCronJob refuses a schedule that the controller's cron parser
// (the one ScheduledRuns uses) cannot read, with a field error on
// spec.schedule, and warns of one that never fires. An update that leaves
// the schedule as it was is not checked again: a CronJob stored before the
// webhook existed can still be labelled, or have its other fields fixed,
// and the controller reports its schedule with Ready False
// (ReasonInvalidSchedule).
func validateCronJob(_ context.Context, old, cj *cronjobv1.CronJob) (webhook.Warnings, field.ErrorList) {
	if old != nil && old.Spec.Schedule == cj.Spec.Schedule {
		return nil, nil
	}
	path := field.NewPath("spec", "schedule")
	sched, err := cron.ParseStandard(cj.Spec.Schedule)
	if err != nil {
		return nil, field.ErrorList{field.Invalid(path, cj.Spec.Schedule, err.Error())}
	}
	if sched.Next(time.Now()).IsZero() {
		return webhook.Warnings{fmt.Sprintf("%s: %q never fires: no day matches it", path, cj.Spec.Schedule)}, nil
	}
	return nil, nil
}
