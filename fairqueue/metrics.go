package fairqueue

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/bosunkit/bosun/internal/register"
)

// queueMetrics are the metrics a Queue keeps.
type queueMetrics struct {
	depth   workqueue.GaugeMetric
	adds    workqueue.CounterMetric
	latency workqueue.HistogramMetric
	work    workqueue.HistogramMetric
	retries workqueue.CounterMetric
}

func newQueueMetrics(p workqueue.MetricsProvider, name string) queueMetrics {
	if p == nil {
		p = ControllerRuntimeMetrics()
	}
	return queueMetrics{
		depth:   p.NewDepthMetric(name),
		adds:    p.NewAddsMetric(name),
		latency: p.NewLatencyMetric(name),
		work:    p.NewWorkDurationMetric(name),
		retries: p.NewRetriesMetric(name),
	}
}

// ControllerRuntimeMetrics returns the provider of the workqueue metrics
// controller-runtime serves (workqueue_depth, workqueue_adds_total,
// workqueue_queue_duration_seconds, workqueue_work_duration_seconds,
// workqueue_retries_total, labelled name and controller), so that a fair
// queue shows on the same dashboards as controller-runtime's queues. The
// series are found in controller-runtime's metrics.Registry, where
// controller-runtime registers them; a registry without them gets them.
// The gauges of unfinished work and of the longest running processor are
// not kept.
func ControllerRuntimeMetrics() workqueue.MetricsProvider {
	return crMetrics{}
}

type crMetrics struct{}

// The definitions match controller-runtime's, so that registering them
// finds its collectors.
var (
	crDepth = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: metrics.WorkQueueSubsystem, Name: metrics.DepthKey,
		Help: "Current depth of workqueue by workqueue and priority",
	}, []string{"name", "controller", "priority"})
	crAdds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: metrics.WorkQueueSubsystem, Name: metrics.AddsKey,
		Help: "Total number of adds handled by workqueue",
	}, []string{"name", "controller"})
	crLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: metrics.WorkQueueSubsystem, Name: metrics.QueueLatencyKey,
		Help:    "How long in seconds an item stays in workqueue before being requested",
		Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12), NativeHistogramBucketFactor: 1.1,
		NativeHistogramMaxBucketNumber: 100, NativeHistogramMinResetDuration: time.Hour,
	}, []string{"name", "controller"})
	crWork = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: metrics.WorkQueueSubsystem, Name: metrics.WorkDurationKey,
		Help:    "How long in seconds processing an item from workqueue takes.",
		Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12), NativeHistogramBucketFactor: 1.1,
		NativeHistogramMaxBucketNumber: 100, NativeHistogramMinResetDuration: time.Hour,
	}, []string{"name", "controller"})
	crRetries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: metrics.WorkQueueSubsystem, Name: metrics.RetriesKey,
		Help: "Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, explicit RequeueAfter or AddAfter calls)",
	}, []string{"name", "controller"})
)

// vec returns the collector of controller-runtime's registry equal to c,
// or c, registered, when there is none; or, when the registry holds
// something else under that name, c unregistered, so that the queue
// still works.
func vec[C prometheus.Collector](c C) C {
	if got, err := register.Once(metrics.Registry, "workqueue metrics", c); err == nil {
		return got
	}
	return c
}

func (crMetrics) NewDepthMetric(name string) workqueue.GaugeMetric {
	return vec(crDepth).WithLabelValues(name, name, "")
}

func (crMetrics) NewAddsMetric(name string) workqueue.CounterMetric {
	return vec(crAdds).WithLabelValues(name, name)
}

func (crMetrics) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return vec(crLatency).WithLabelValues(name, name)
}

func (crMetrics) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return vec(crWork).WithLabelValues(name, name)
}

func (crMetrics) NewRetriesMetric(name string) workqueue.CounterMetric {
	return vec(crRetries).WithLabelValues(name, name)
}

func (crMetrics) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noopGauge{}
}

func (crMetrics) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noopGauge{}
}

type noopGauge struct{}

func (noopGauge) Set(float64) {}
