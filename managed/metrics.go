package managed

import (
	"reflect"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/register"
)

// Metric names. The step registers them, once per registry, in the
// registry of the reconciler that runs it (bosun.Options.Metrics, by
// default controller-runtime's metrics.Registry; see bosun.Pass.Metrics),
// and labels every series with the reconciler's name ("controller") and
// the step's name ("step").
const (
	// metricFirstReconcile is a histogram of the seconds from an object's
	// creation to the step's first pass over it, labelled controller and
	// step.
	metricFirstReconcile = "bosun_managed_first_reconcile_seconds"
	// metricTimeToReady is a histogram of the seconds from an object's
	// creation to the first time its external resource was available,
	// labelled controller and step.
	metricTimeToReady = "bosun_managed_ready_seconds"
	// metricDeletion is a histogram of the seconds from an object's deletion
	// request to its external resource being gone, labelled controller and
	// step.
	metricDeletion = "bosun_managed_deletion_seconds"
	// metricDriftCorrections counts updates of external resources that had
	// drifted from a spec the step had already applied, labelled controller
	// and step.
	metricDriftCorrections = "bosun_managed_drift_corrections_total"
	// metricExternalCalls counts the calls the step made of the Connector
	// and the ExternalClient, labelled controller, step, operation (one of
	// the operations the package documentation lists) and result ("success" or "error").
	metricExternalCalls = "bosun_managed_external_calls_total"
	// metricExternalCallDuration is a histogram of the seconds those calls
	// took, labelled controller, step and operation.
	metricExternalCallDuration = "bosun_managed_external_call_duration_seconds"
	// metricExternalCallsInFlight is how many of those calls run now,
	// labelled controller and step.
	metricExternalCallsInFlight = "bosun_managed_external_calls_in_flight"
	// metricCallLimitWait is a histogram of the seconds calls waited for
	// the step's Limiter before they started, labelled controller and
	// step; only steps with a Limiter record it.
	metricCallLimitWait = "bosun_managed_call_limit_wait_seconds"
)

// Results of metricExternalCalls.
const (
	resultSuccess = "success"
	resultError   = "error"
)

// metricLabels are the labels of every metric of the step.
var metricLabels = []string{"controller", "step"}

// collectors are the step's collectors as registered in one registry.
type collectors struct {
	first, ready, deletion *prometheus.HistogramVec
	drift                  *prometheus.CounterVec
	calls                  *prometheus.CounterVec
	callDuration, wait     *prometheus.HistogramVec
	inFlight               *prometheus.GaugeVec
}

// newCollectors returns the step's collectors, not registered anywhere.
func newCollectors() *collectors {
	buckets := prometheus.ExponentialBuckets(0.05, 2, 16)
	histogram := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, metricLabels)
	}
	return &collectors{
		first:    histogram(metricFirstReconcile, "Seconds from an object's creation to the first pass of its managed step."),
		ready:    histogram(metricTimeToReady, "Seconds from an object's creation to its external resource being available."),
		deletion: histogram(metricDeletion, "Seconds from an object's deletion request to its external resource being gone."),
		drift: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricDriftCorrections, Help: "Updates of external resources that had drifted from an applied spec.",
		}, metricLabels),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: metricExternalCalls, Help: "Calls of the managed step's external system, by operation and result.",
		}, append(append([]string(nil), metricLabels...), "operation", "result")),
		callDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: metricExternalCallDuration, Help: "Seconds the managed step's external calls took, by operation.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, append(append([]string(nil), metricLabels...), "operation")),
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: metricCallLimitWait, Help: "Seconds the managed step's external calls waited for their call limit.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}, metricLabels),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: metricExternalCallsInFlight, Help: "External calls of the managed step running now.",
		}, metricLabels),
	}
}

// collectorsIn registers the step's collectors in reg, or finds those
// registered there before, so that the managed steps of any number of
// reconcilers share one registry and each registry has its own series.
func collectorsIn(reg prometheus.Registerer) (*collectors, error) {
	c := newCollectors()
	var err error
	for _, h := range []**prometheus.HistogramVec{&c.first, &c.ready, &c.deletion, &c.callDuration, &c.wait} {
		if *h, err = register.Once(reg, "the managed step's metrics", *h); err != nil {
			return nil, err
		}
	}
	for _, cv := range []**prometheus.CounterVec{&c.drift, &c.calls} {
		if *cv, err = register.Once(reg, "the managed step's metrics", *cv); err != nil {
			return nil, err
		}
	}
	if c.inFlight, err = register.Once(reg, "the managed step's metrics", c.inFlight); err != nil {
		return nil, err
	}
	return c, nil
}

// metricSet is the series of one step under one reconciler.
type metricSet struct {
	first, ready, deletion prometheus.Observer
	drift                  prometheus.Counter
	// calls and callDuration are curried with the controller and step.
	calls        *prometheus.CounterVec
	callDuration prometheus.ObserverVec
	wait         prometheus.Observer
	inFlight     prometheus.Gauge
}

// metricsKey identifies the series of a step: the registry and the
// reconciler's name.
type metricsKey struct {
	reg        prometheus.Registerer
	controller string
}

// meters finds the series of the step named step (see metricSet), by
// metricsKey, registering its collectors in a registry on first use.
type meters[T client.Object] struct {
	step string
	sets sync.Map // metricsKey -> *metricSet
}

// newMeters returns the meters of the step named step.
func newMeters[T client.Object](step string) *meters[T] { return &meters[T]{step: step} }

// of returns the step's series for the reconciler running req, in
// its registry, registering the collectors there on first use. When they
// cannot be registered (the registry holds other metrics under the same
// names), the error is logged once and the observations are dropped.
func (s *meters[T]) of(req *bosun.Pass[T]) *metricSet {
	reg := req.Metrics()
	key := metricsKey{controller: req.Controller}
	// A registerer of a type that cannot be a map key is looked up in its
	// registry every time, and found there through AlreadyRegisteredError.
	cacheable := reflect.TypeOf(reg).Comparable()
	if cacheable {
		key.reg = reg
		if m, ok := s.sets.Load(key); ok {
			return m.(*metricSet)
		}
	}
	c, err := collectorsIn(reg)
	if err != nil {
		req.Log.Error(err, "managed step metrics not recorded", "step", s.step)
		c = newCollectors()
	}
	m := &metricSet{
		first:    c.first.WithLabelValues(req.Controller, s.step),
		ready:    c.ready.WithLabelValues(req.Controller, s.step),
		deletion: c.deletion.WithLabelValues(req.Controller, s.step),
		drift:    c.drift.WithLabelValues(req.Controller, s.step),
		wait:     c.wait.WithLabelValues(req.Controller, s.step),
		inFlight: c.inFlight.WithLabelValues(req.Controller, s.step),
	}
	step := prometheus.Labels{"controller": req.Controller, "step": s.step}
	m.calls = c.calls.MustCurryWith(step)
	m.callDuration = c.callDuration.MustCurryWith(step)
	if cacheable {
		got, _ := s.sets.LoadOrStore(key, m)
		return got.(*metricSet)
	}
	return m
}
