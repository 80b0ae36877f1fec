package v2

import (
	"strings"

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
	// ForbidConcurrent postpones the new run until no Job is active.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// ReplaceConcurrent deletes the active Jobs and then starts the new one.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// CronField is one field of a cron schedule, as the operator's cron parser
// reads it: a value ("5", "MON"), a range ("1-5"), a list ("1,15"), a step
// ("*/10") or "*" for every value. It holds no spaces.
//
// +kubebuilder:validation:Pattern=`^\S+$`
type CronField string

// CronSchedule is a cron schedule in its five fields. A field left out
// stands for "*", every value: a CronSchedule with only Minute "0" runs at
// the start of every hour.
type CronSchedule struct {
	// Minute is the minute of the hour, 0 to 59.
	//
	// +optional
	Minute *CronField `json:"minute,omitempty"`
	// Hour is the hour of the day, 0 to 23.
	//
	// +optional
	Hour *CronField `json:"hour,omitempty"`
	// DayOfMonth is the day of the month, 1 to 31.
	//
	// +optional
	DayOfMonth *CronField `json:"dayOfMonth,omitempty"`
	// Month is the month of the year, 1 to 12 or JAN to DEC.
	//
	// +optional
	Month *CronField `json:"month,omitempty"`
	// DayOfWeek is the day of the week, 0 (Sunday) to 6 or SUN to SAT.
	//
	// +optional
	DayOfWeek *CronField `json:"dayOfWeek,omitempty"`
}

// fields returns the five fields of s, in the order of a cron line.
func (s *CronSchedule) fields() [5]**CronField {
	return [5]**CronField{&s.Minute, &s.Hour, &s.DayOfMonth, &s.Month, &s.DayOfWeek}
}

// String returns s as the one-line schedule v1 holds: its five fields
// apart by one space, "*" for each field left out.
func (s CronSchedule) String() string {
	parts := make([]string, 0, 5)
	for _, f := range s.fields() {
		if *f == nil {
			parts = append(parts, "*")
		} else {
			parts = append(parts, string(**f))
		}
	}
	return strings.Join(parts, " ")
}

// CronJobSpec is the desired state of a CronJob: what to run and when. Its
// fields but Schedule are those of v1.
type CronJobSpec struct {
	// Schedule is the cron schedule of the runs. Times are in the operator's
	// time zone. A schedule the five fields cannot hold (a descriptor such
	// as "@hourly", "@every 90m", a "CRON_TZ=" prefix) is written at v1; read
	// at v2, it leaves every field out and is kept in the annotation
	// cronjob.bosun.dev/v1-schedule.
	Schedule CronSchedule `json:"schedule"`

	// Suspend, when true, stops new runs; active Jobs go on.
	//
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// ConcurrencyPolicy tells what happens when a run is due while earlier
	// Jobs are still active: Allow, Forbid or Replace.
	//
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// StartingDeadlineSeconds is how late, in seconds, a run may still start.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// JobTemplate is the Job each run creates.
	JobTemplate batchv1.JobTemplateSpec `json:"jobTemplate"`

	// SuccessfulJobsHistoryLimit is how many successful Jobs are kept.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`

	// FailedJobsHistoryLimit is how many failed Jobs are kept.
	//
	// +optional
	// +kubebuilder:validation:Minimum=0
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`
}

// CronJobStatus is the observed state of a CronJob, as in v1.
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

	// Conditions are the latest observations of the CronJob.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// CronJob runs a Job on a cron schedule. v2 is served beside v1 and
// converted to it: see ConvertTo and ConvertFrom.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=bcj,categories=bosun
// +kubebuilder:validation:XValidation:rule="self.metadata.name.size() <= 52",message="metadata.name must be at most 52 characters, so that the names of its Jobs fit in 63",fieldPath=".metadata"
// +kubebuilder:printcolumn:name="Minute",type=string,JSONPath=`.spec.schedule.minute`
// +kubebuilder:printcolumn:name="Hour",type=string,JSONPath=`.spec.schedule.hour`
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
