package bosun

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/bosunkit/bosun/flow"
)

// Phase names the part of a step that ran, as the label "phase" of the
// engine's metrics.
type Phase string

// The phases of a step.
const (
	// PhaseDo is Step.Do.
	PhaseDo Phase = "do"
	// PhaseCleanup is Cleaner.Cleanup.
	PhaseCleanup Phase = "cleanup"
	// PhasePost is Poster.Post.
	PhasePost Phase = "post"
	// PhaseObserve is Observer.Observe.
	PhaseObserve Phase = "observe"
	// PhaseClaim is Claimer.Claim.
	PhaseClaim Phase = "claim"
)

var phases = []Phase{PhaseDo, PhaseCleanup, PhasePost, PhaseObserve, PhaseClaim}

// Metric names, registered with controller-runtime's metrics.Registry.
const (
	// MetricStepDuration is a histogram of how long each phase of each step
	// took, in seconds, labelled controller, step and phase.
	MetricStepDuration = "bosun_step_duration_seconds"
	// MetricStepErrors counts the errors (panics included, ErrExit not)
	// returned by each phase of each step, labelled controller, step and phase.
	MetricStepErrors = "bosun_step_errors_total"
)

var (
	stepDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    MetricStepDuration,
		Help:    "Duration of each phase of each bosun step, in seconds.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	}, []string{"controller", "step", "phase"})
	stepErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricStepErrors,
		Help: "Errors returned by each phase of each bosun step.",
	}, []string{"controller", "step", "phase"})

	registerOnce sync.Once
)

func registerMetrics() {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(stepDuration, stepErrors)
	})
}

// phaseMetrics holds the metric children of one step and phase, looked up
// once so that observing costs no label hashing.
type phaseMetrics struct {
	duration prometheus.Observer
	errors   prometheus.Counter
}

// metricSet holds the metric children of every step of one reconciler, by
// step name and phase.
type metricSet struct {
	steps map[string]*[numPhases]phaseMetrics
}

const numPhases = 5

// index returns the position of p in phases.
func (p Phase) index() int {
	switch p {
	case PhaseCleanup:
		return 1
	case PhasePost:
		return 2
	case PhaseObserve:
		return 3
	case PhaseClaim:
		return 4
	default:
		return 0
	}
}

func newMetricSet(controller string, stepNames []string) *metricSet {
	registerMetrics()
	m := &metricSet{steps: make(map[string]*[numPhases]phaseMetrics, len(stepNames))}
	for _, name := range stepNames {
		var pm [numPhases]phaseMetrics
		for _, ph := range phases {
			pm[ph.index()] = phaseMetrics{
				duration: stepDuration.WithLabelValues(controller, name, string(ph)),
				errors:   stepErrors.WithLabelValues(controller, name, string(ph)),
			}
		}
		m.steps[name] = &pm
	}
	return m
}

// observe records one run of a phase. Steps the set does not know (run
// through Pass.Action without being in the reconciler's tree of steps)
// are not recorded.
func (m *metricSet) observe(step string, phase Phase, d time.Duration, err error) {
	if m == nil {
		return
	}
	pm, ok := m.steps[step]
	if !ok {
		return
	}
	p := &pm[phase.index()]
	p.duration.Observe(d.Seconds())
	if err != nil && !errors.Is(err, flow.ErrExit) {
		p.errors.Inc()
	}
}
