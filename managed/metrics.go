package managed

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metric names, registered with controller-runtime's metrics.Registry and
// labelled with the step's name ("step").
const (
	// MetricFirstReconcile is a histogram of the seconds from an object's
	// creation to the step's first pass over it.
	MetricFirstReconcile = "bosun_managed_first_reconcile_seconds"
	// MetricTimeToReady is a histogram of the seconds from an object's
	// creation to the first time its external resource was available.
	MetricTimeToReady = "bosun_managed_ready_seconds"
	// MetricDeletion is a histogram of the seconds from an object's deletion
	// request to its external resource being gone.
	MetricDeletion = "bosun_managed_deletion_seconds"
	// MetricDriftCorrections counts updates of external resources that had
	// drifted from a spec the step had already applied.
	MetricDriftCorrections = "bosun_managed_drift_corrections_total"
)

var (
	secondsBuckets = prometheus.ExponentialBuckets(0.05, 2, 16)
	firstReconcile = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: MetricFirstReconcile, Help: "Seconds from an object's creation to the first pass of its managed step.", Buckets: secondsBuckets,
	}, []string{"step"})
	timeToReady = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: MetricTimeToReady, Help: "Seconds from an object's creation to its external resource being available.", Buckets: secondsBuckets,
	}, []string{"step"})
	deletionTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: MetricDeletion, Help: "Seconds from an object's deletion request to its external resource being gone.", Buckets: secondsBuckets,
	}, []string{"step"})
	driftCorrections = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricDriftCorrections, Help: "Updates of external resources that had drifted from an applied spec.",
	}, []string{"step"})

	registerOnce sync.Once
)

// metricSet is the metrics of one step.
type metricSet struct {
	first, ready, deletion prometheus.Observer
	drift                  prometheus.Counter
}

func metricsFor(step string) *metricSet {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(firstReconcile, timeToReady, deletionTime, driftCorrections)
	})
	return &metricSet{
		first:    firstReconcile.WithLabelValues(step),
		ready:    timeToReady.WithLabelValues(step),
		deletion: deletionTime.WithLabelValues(step),
		drift:    driftCorrections.WithLabelValues(step),
	}
}
