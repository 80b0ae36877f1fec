package bosun

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/bosunkit/bosun/internal/register"
)

// phase names the part of a step that ran, as the label "phase" of the
// engine's metrics.
type phase = string

// The phases of a step.
const (
	// phaseDo is Step.Do.
	phaseDo phase = "do"
	// phaseCleanup is Cleaner.Cleanup.
	phaseCleanup phase = "cleanup"
	// phasePost is Poster.Post.
	phasePost phase = "post"
	// phaseObserve is Observer.Observe.
	phaseObserve phase = "observe"
	// phaseClaim is Claimer.Claim.
	phaseClaim phase = "claim"
)

var phases = []phase{phaseDo, phaseCleanup, phasePost, phaseObserve, phaseClaim}

// The engine's metric names (see the table in the package doc). The engine
// registers them in Options.Metrics (by default controller-runtime's
// metrics.Registry, which the manager serves), once per registry, and
// labels every series with the reconciler's Name ("controller").
const (
	metricStepDuration     = register.MetricStepDuration
	metricStepErrors       = register.MetricStepErrors
	metricOwnWritesSkipped = register.MetricOwnWritesSkipped
	metricDeletionBlocked  = register.MetricDeletionBlocked
	metricDeletionHeld     = register.MetricDeletionHeld
)

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
	// deletionBlocked counts the deletions that passed the deadline.
	deletionBlocked prometheus.Counter
	// deletionHeld counts the deletions the mass-deletion breaker held.
	deletionHeld prometheus.Counter
}

const numPhases = 5

// index returns the position of p in phases.
func phaseIndex(p phase) int {
	switch p {
	case phaseCleanup:
		return 1
	case phasePost:
		return 2
	case phaseObserve:
		return 3
	case phaseClaim:
		return 4
	default:
		return 0
	}
}

// newMetricSet registers the engine's collectors in reg (nil: the
// default registry) and looks up the series of every step of controller.
func newMetricSet(reg prometheus.Registerer, controller string, stepNames []string) (*metricSet, error) {
	reg = registererOrDefault(reg)
	c, err := register.Steps(reg)
	if err != nil {
		return nil, err
	}
	m := &metricSet{reg: reg, steps: make(map[string]*[numPhases]phaseMetrics, len(stepNames)), ownWriteSkipped: c.OwnWrites.WithLabelValues(controller), deletionBlocked: c.Blocked.WithLabelValues(controller), deletionHeld: c.Held.WithLabelValues(controller)}
	for _, name := range stepNames {
		var pm [numPhases]phaseMetrics
		for _, ph := range phases {
			pm[phaseIndex(ph)] = phaseMetrics{
				duration: c.Duration.WithLabelValues(controller, name, ph),
				errors:   c.Errors.WithLabelValues(controller, name, ph),
			}
		}
		m.steps[name] = &pm
	}
	return m, nil
}

// observe records one run of a phase. Steps the set does not know (run
// through Pass.Run without being in the reconciler's tree of steps)
// are not recorded.
func (m *metricSet) observe(step string, phase phase, d time.Duration, err error) {
	if m == nil {
		return
	}
	pm, ok := m.steps[step]
	if !ok {
		return
	}
	p := &pm[phaseIndex(phase)]
	p.duration.Observe(d.Seconds())
	if err != nil && !errors.Is(err, ErrStop) {
		p.errors.Inc()
	}
}
