package bosun

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/bosunkit/bosun/flow"
	"github.com/bosunkit/bosun/internal/register"
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

// Metric names. The engine registers them in Reconciler.Metrics (by
// default controller-runtime's metrics.Registry, which the manager serves),
// once per registry, and labels every series with the reconciler's Name
// ("controller").
const (
	// MetricStepDuration is a histogram of how long each phase of each step
	// took, in seconds, labelled controller, step and phase.
	MetricStepDuration = "bosun_step_duration_seconds"
	// MetricStepErrors counts the errors (panics included, ErrExit not)
	// returned by each phase of each step, labelled controller, step and phase.
	MetricStepErrors = "bosun_step_errors_total"
	// MetricOwnWritesSkipped counts the watch events of the engine's own
	// writes that started no pass (see Reconciler.ReconcileOwnWrites),
	// labelled controller.
	MetricOwnWritesSkipped = "bosun_own_write_events_skipped_total"
)

// stepCollectors are the engine's collectors as registered in one registry.
type stepCollectors struct {
	duration  *prometheus.HistogramVec
	errors    *prometheus.CounterVec
	ownWrites *prometheus.CounterVec
}

// stepCollectorsIn registers the engine's collectors in reg, or finds the
// ones registered there before, so that any number of reconcilers share one
// registry and each registry has its own series.
func stepCollectorsIn(reg prometheus.Registerer) (*stepCollectors, error) {
	duration, err := register.Once(reg, "bosun metrics", prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    MetricStepDuration,
		Help:    "Duration of each phase of each bosun step, in seconds.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	}, []string{"controller", "step", "phase"}))
	if err != nil {
		return nil, err
	}
	errs, err := register.Once(reg, "bosun metrics", prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricStepErrors,
		Help: "Errors returned by each phase of each bosun step.",
	}, []string{"controller", "step", "phase"}))
	if err != nil {
		return nil, err
	}
	own, err := register.Once(reg, "bosun metrics", prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricOwnWritesSkipped,
		Help: "Watch events of the engine's own writes that started no reconcile.",
	}, []string{"controller"}))
	if err != nil {
		return nil, err
	}
	return &stepCollectors{duration: duration, errors: errs, ownWrites: own}, nil
}

// registererOrDefault returns reg, or controller-runtime's metrics.Registry
// when reg is nil.
func registererOrDefault(reg prometheus.Registerer) prometheus.Registerer {
	if reg == nil {
		return metrics.Registry
	}
	return reg
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
	reg   prometheus.Registerer
	steps map[string]*[numPhases]phaseMetrics
	// ownWriteSkipped counts the events of the engine's writes it dropped.
	ownWriteSkipped prometheus.Counter
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

// newMetricSet registers the engine's collectors in reg (nil: the
// default registry) and looks up the series of every step of controller.
func newMetricSet(reg prometheus.Registerer, controller string, stepNames []string) (*metricSet, error) {
	reg = registererOrDefault(reg)
	c, err := stepCollectorsIn(reg)
	if err != nil {
		return nil, err
	}
	m := &metricSet{reg: reg, steps: make(map[string]*[numPhases]phaseMetrics, len(stepNames)), ownWriteSkipped: c.ownWrites.WithLabelValues(controller)}
	for _, name := range stepNames {
		var pm [numPhases]phaseMetrics
		for _, ph := range phases {
			pm[ph.index()] = phaseMetrics{
				duration: c.duration.WithLabelValues(controller, name, string(ph)),
				errors:   c.errors.WithLabelValues(controller, name, string(ph)),
			}
		}
		m.steps[name] = &pm
	}
	return m, nil
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
