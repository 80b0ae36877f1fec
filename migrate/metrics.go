package migrate

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metric names (see the package doc).
const (
	MetricObjects = "bosun_migrate_objects_total"
	MetricErrors  = "bosun_migrate_errors_total"
	MetricRunning = "bosun_migrate_running"
)

// crdMetrics holds the metric children of one CRD.
type crdMetrics struct {
	objects prometheus.Counter
	errors  prometheus.Counter
	running prometheus.Gauge
}

// metricsFor registers the migration metrics in reg (nil: controller-runtime's
// metrics.Registry), or reuses those already there, and returns the children
// labelled crd.
func metricsFor(reg prometheus.Registerer, crd string) (crdMetrics, error) {
	if reg == nil {
		reg = metrics.Registry
	}
	objects, err := registerOnce(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricObjects,
		Help: "Objects rewritten at their CRD's storage version.",
	}, []string{"crd"}))
	if err != nil {
		return crdMetrics{}, err
	}
	errs, err := registerOnce(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricErrors,
		Help: "Storage version migrations that failed.",
	}, []string{"crd"}))
	if err != nil {
		return crdMetrics{}, err
	}
	running, err := registerOnce(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: MetricRunning,
		Help: "1 while a storage version migration of the CRD runs, else 0.",
	}, []string{"crd"}))
	if err != nil {
		return crdMetrics{}, err
	}
	return crdMetrics{
		objects: objects.WithLabelValues(crd),
		errors:  errs.WithLabelValues(crd),
		running: running.WithLabelValues(crd),
	}, nil
}

// registerOnce registers c in reg, or returns the collector of the same
// description already registered there.
func registerOnce[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var already prometheus.AlreadyRegisteredError
	switch {
	case err == nil:
		return c, nil
	case errors.As(err, &already):
		if existing, ok := already.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	var zero C
	return zero, err
}
