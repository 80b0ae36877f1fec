// Package cronjob is an operator that runs Jobs on a cron schedule, built on
// the bosun engine from the actions that the bosun DSL declares.
//
// The document cronjob.bosun declares CronJobControllerManager for the
// CronJob kind (cronjob.bosun.dev/v1): one state, the Jobs that carry the
// label cronjob=<name> and whose controller is the CronJob, and three
// actions. `bosun gen` turns it into zz_generated.cronjob.go: the state
// getter (read once per reconcile, through the cache, with a field index on
// the Job's controller), the Impl interface, the RBAC markers, and one
// engine step per action, which sets up the index and the watch of owned
// Jobs itself. The hand-written part is controller.go: the Impl, the
// arrangement of the steps, and the cron arithmetic (ScheduledRuns).
//
// Each reconcile runs one step,
//
//	Join(ListActiveJobsAndUpdateStatus, CleanUpOldJobsExceedsHistoryLimits,
//		If(not suspended, RunNextScheduledJob))
//
// so each action runs whatever the others return:
//
//	ListActiveJobsAndUpdateStatus       records the unfinished Jobs, the latest
//	                                    scheduled time and the latest success
//	                                    in the status
//	CleanUpOldJobsExceedsHistoryLimits  deletes the oldest finished Jobs beyond
//	                                    the history limits
//	RunNextScheduledJob                 starts the latest missed run (named
//	                                    <cronjob>-<unix seconds>) as the
//	                                    concurrency policy allows, and requeues
//	                                    for the next scheduled time
//
// A due run goes by the Jobs the API server lists (bosun.Pass.ListChildren
// through the APIReader), not the cache's: the cache may not show yet a Job
// started moments ago (after a relist, under load, or started by a process
// that died before recording the run). That is one read per run, never one
// per reconcile, and the status of that pass is made from it, by the same
// code as from the cache: a run whose Job exists already is recorded, not
// started again; Replace never deletes it; and a Job the run creates is
// active in the status from that pass on. The Job is made by
// bosun.Pass.CreateChild, which makes the CronJob its controller and
// records the SuccessfulCreate event.
//
// The engine saves the status once at the end and keeps the Ready
// condition: a schedule that does not parse makes it False with reason
// InvalidSchedule, a terminal error, so nothing is retried until the
// CronJob changes. A Job that holds the name of a due run and is not
// controlled by the CronJob is never taken for the run: the run is not
// started nor counted (lastScheduleTime stays), Ready is False with reason
// JobNameTaken (CreateChild's reason for a Job) naming the Job, a Warning
// event says so once, and the run starts once that Job is gone.
//
// The time comes from a clock.PassiveClock (Options.Clock), so tests drive
// the schedule with a fake clock; each action is a step of the engine, so
// the engine's pass reports (bosun.PassObserver) say which actions a
// reconcile ran, in which order and with which outcome
// (TestReconcileReport). The entry points used by tests and by `bosun
// demo` are AddToScheme, CRDs, SetupWithManager and Samples.
//
// # Webhooks, a second version, and storage migration
//
// The kind has two versions: v1 (package api/v1), the hub, which the API
// server stores and the controller reconciles, and v2 (package api/v2),
// whose schedule is five named fields; v2 converts to and from v1 without
// losing anything, keeping what one version cannot say in an annotation of
// the other (see cronjobv2.CronJob.ConvertFrom). SetupWebhookWithManager
// registers the kind's webhooks on v1 (webhook.go): defaulting of the
// concurrency policy, suspend and the history limits, validation of the
// schedule with the controller's own cron parser, and the conversion. The
// name's limit of 52 characters is a CEL rule of the CRD instead, which the
// API server checks without calling anyone. Webhooks returns the admission
// webhook configurations that controller-gen generates from the markers in
// webhook.go (package config/webhook); config/default deploys them with
// their Service and a cert-manager certificate.
//
// SetupMigrationWithManager adds the storage version migration (package
// migrate): the day v2 becomes the storage version, the leader rewrites
// every stored CronJob at v2 and trims the CRD's status.storedVersions.
// cmd/main.go registers all three with the controller.
package cronjob

//go:generate go run github.com/bosunkit/bosun/cmd/bosun gen cronjob.bosun
