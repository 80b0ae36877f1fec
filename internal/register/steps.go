package register

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The names of the engine's metrics (docs/METRICS.md lists them).
const (
	// MetricStepDuration is a histogram of how long each phase of each step
	// took, in seconds, labelled controller, step and phase.
	MetricStepDuration = "bosun_step_duration_seconds"
	// MetricStepErrors counts the errors (panics included, bosun.ErrStop
	// not) returned by each phase of each step, labelled controller, step
	// and phase.
	MetricStepErrors = "bosun_step_errors_total"
	// MetricOwnWritesSkipped counts the watch events of the engine's own
	// writes that started no pass, labelled controller.
	MetricOwnWritesSkipped = "bosun_own_write_events_skipped_total"
	// MetricDeletionBlocked counts the objects whose deletion passed the
	// reconciler's deletion deadline with its cleanup not finished,
	// labelled controller.
	MetricDeletionBlocked = "bosun_deletion_blocked_total"
	// MetricDeletionHeld counts the objects whose cleanup the
	// reconciler's mass-deletion breaker held, labelled controller.
	MetricDeletionHeld = "bosun_deletion_held_total"
)

// StepCollectors are the engine's collectors as registered in one registry.
type StepCollectors struct {
	Duration  *prometheus.HistogramVec
	Errors    *prometheus.CounterVec
	OwnWrites *prometheus.CounterVec
	Blocked   *prometheus.CounterVec
	Held      *prometheus.CounterVec
}

// Steps registers the engine's collectors in reg (nil: controller-runtime's
// metrics.Registry, which the manager serves), or finds the ones
// registered there before, so that any number of reconcilers share one
// registry and each registry has its own series.
func Steps(reg prometheus.Registerer) (*StepCollectors, error) {
	if reg == nil {
		reg = metrics.Registry
	}
	duration, err := Once(reg, "bosun metrics", prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    MetricStepDuration,
		Help:    "Duration of each phase of each bosun step, in seconds.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	}, []string{"controller", "step", "phase"}))
	if err != nil {
		return nil, err
	}
	errs, err := Once(reg, "bosun metrics", prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricStepErrors,
		Help: "Errors returned by each phase of each bosun step.",
	}, []string{"controller", "step", "phase"}))
	if err != nil {
		return nil, err
	}
	own, err := Once(reg, "bosun metrics", prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricOwnWritesSkipped,
		Help: "Watch events of the engine's own writes that started no reconcile.",
	}, []string{"controller"}))
	if err != nil {
		return nil, err
	}
	blocked, err := Once(reg, "bosun metrics", prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricDeletionBlocked,
		Help: "Objects whose deletion passed the deletion deadline with their cleanup not finished.",
	}, []string{"controller"}))
	if err != nil {
		return nil, err
	}
	held, err := Once(reg, "bosun metrics", prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricDeletionHeld,
		Help: "Objects whose cleanup the mass-deletion breaker held.",
	}, []string{"controller"}))
	if err != nil {
		return nil, err
	}
	return &StepCollectors{Duration: duration, Errors: errs, OwnWrites: own, Blocked: blocked, Held: held}, nil
}
