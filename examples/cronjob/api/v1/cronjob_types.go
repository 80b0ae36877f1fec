package v1

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConcurrencyPolicy tells what happens when a run is due while Jobs of
// earlier runs are still active.
//
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

const (
	// AllowConcurrent starts the new Job next to the active ones.
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// ForbidConcurrent postpones the new run until no Job is active. A
	// postponed run that becomes older than StartingDeadlineSeconds is
	// skipped.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// ReplaceConcurrent deletes the active Jobs and then starts the new one.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// Defaults of the history limits. The operator's defaulting webhook writes
// them into a CronJob that leaves a limit out, and the controller uses them
// for one that has none (a CronJob stored before the webhook existed).
const (
	// DefaultSuccessfulJobsHistoryLimit is how many successful Jobs are kept
	// when SuccessfulJobsHistoryLimit is not set.
	DefaultSuccessfulJobsHistoryLimit int32 = 3
	// DefaultFailedJobsHistoryLimit is how many failed Jobs are kept when
	// FailedJobsHistoryLimit is not set.
	DefaultFailedJobsHistoryLimit int32 = 1
)

// CronJobSpec is the desired state of a CronJob: what to run and when.
type CronJobSpec struct {
	// Schedule is the cron schedule of the runs: five fields (minute, hour,
	// day of month, month, day of week), a descriptor such as "@hourly", or
	// "@every 90m". Times are in the operator's time zone unless the
	// schedule starts with "CRON_TZ=<zone> ". The validating webhook refuses
	// a schedule the operator's cron parser does not read.
	//
	// +kubebuilder:validation:MinLength=1
	Schedule string `json:"schedule"`

	// Suspend, when true, stops new runs; active Jobs go on. Runs missed
	// while suspended count as missed when the CronJob is resumed. The
	// defaulting webhook sets it to false when it is left out.
	//
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// ConcurrencyPolicy tells what happens when a run is due while earlier
	// Jobs are still active: Allow, Forbid or Replace. The defaulting
	// webhook sets Allow when it is left out.
	//
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// StartingDeadlineSeconds is how late, in seconds, a run may still start.
	// A missed run older than this is skipped. Unset means a missed run is
	// never too late.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// JobTemplate is the Job each run creates.
	JobTemplate batchv1.JobTemplateSpec `json:"jobTemplate"`

	// SuccessfulJobsHistoryLimit is how many successful Jobs are kept; older
	// ones are deleted. The defaulting webhook sets
	// DefaultSuccessfulJobsHistoryLimit when it is left out.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`

	// FailedJobsHistoryLimit is how many failed Jobs are kept; older ones are
	// deleted. The defaulting webhook sets DefaultFailedJobsHistoryLimit when
	// it is left out.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`
}

// CronJobStatus is the observed state of a CronJob.
type CronJobStatus struct {
	// ObservedGeneration is the metadata.generation the status describes.
	//
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Active references the Jobs of this CronJob that have not finished,
	// sorted by name.
	//
	// +optional
	// +listType=atomic
	Active []corev1.ObjectReference `json:"active,omitempty"`

	// LastScheduleTime is the scheduled time of the latest run that was
	// started.
	//
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// LastSuccessfulTime is when the latest successful Job completed.
	//
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// Conditions are the latest observations of the CronJob; Ready is False
	// with reason InvalidSchedule when the schedule cannot be parsed.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// CronJob runs a Job on a cron schedule.
//
// v1 is the hub of the kind's versions (see Hub) and the version the API
// server stores: the operator reconciles v1 CronJobs, and the webhooks
// default and validate CronJobs of every version as v1 objects.
//
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=bcj,categories=bosun
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 52",message="metadata.name must be at most 52 characters, so that the names of its Jobs fit in 63",fieldPath=".metadata"
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Last Schedule",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type CronJob struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	//
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired state.
	Spec CronJobSpec `json:"spec"`
	// Status is the observed state, written by the operator.
	//
	// +optional
	Status CronJobStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions, for the bosun engine.
func (c *CronJob) GetConditions() []metav1.Condition { return c.Status.Conditions }

// SetConditions replaces the status conditions, for the bosun engine.
func (c *CronJob) SetConditions(conds []metav1.Condition) { c.Status.Conditions = conds }

// CronJobList is a list of CronJobs.
//
// +kubebuilder:object:root=true
type CronJobList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	//
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the CronJobs.
	Items []CronJob `json:"items"`
}
