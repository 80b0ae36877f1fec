package shard

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metric names, registered with controller-runtime's metrics.Registry,
// which the manager serves.
const (
	// metricMembers is the number of live members of a ring, as its
	// sharder sees them (label ring).
	metricMembers = "bosun_shard_members"
	// metricObjects is the number of objects labelled for each member of
	// a ring, as its sharder sees them (labels ring, member).
	metricObjects = "bosun_shard_objects"
	// metricMoves counts the sharder's changes of an object's member
	// (labels ring, kind): "assign" labels an object that had no member,
	// "drain" asks a live member to let one go, "takeover" relabels one
	// whose member is gone.
	metricMoves = "bosun_shard_moves_total"
	// metricDrains counts the objects a member let go when asked (labels
	// ring, member).
	metricDrains = "bosun_shard_drains_total"
	// metricDrainTimeouts counts the objects a member did not let go
	// within the drain timeout, for which the sharder evicted it (labels
	// ring, member).
	metricDrainTimeouts = "bosun_shard_drain_timeouts_total"
	// metricPasses counts the passes a member ran (labels ring, version,
	// result: "success" or "error"), so that a canary's errors compare
	// with those of the version it replaces.
	metricPasses = "bosun_shard_passes_total"
	// metricPassDuration is the duration of a member's passes (labels
	// ring, version).
	metricPassDuration = "bosun_shard_pass_duration_seconds"
)

// Results of metricPasses.
const (
	resultSuccess = "success"
	resultError   = "error"
)

// Kinds of metricMoves.
const (
	moveAssign   = "assign"
	moveDrain    = "drain"
	moveTakeover = "takeover"
)

var (
	membersGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: metricMembers, Help: "Live members of a shard ring, as its sharder sees them.",
	}, []string{"ring"})
	objectsGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: metricObjects, Help: "Objects labelled for each member of a shard ring.",
	}, []string{"ring", "member"})
	movesCounter = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: metricMoves, Help: "Changes of an object's member made by the sharder of a ring, by kind.",
	}, []string{"ring", "kind"})
	drainsCounter = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: metricDrains, Help: "Objects a member of a shard ring let go when asked.",
	}, []string{"ring", "member"})
	drainTimeoutsCounter = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: metricDrainTimeouts, Help: "Objects a member of a shard ring did not let go within the drain timeout, for which the sharder evicted it.",
	}, []string{"ring", "member"})
	passesCounter = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: metricPasses, Help: "Passes run by the members of a shard ring, by version and result.",
	}, []string{"ring", "version", "result"})
	passDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: metricPassDuration, Help: "Duration of the passes run by the members of a shard ring, by version.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	}, []string{"ring", "version"})
)

func init() {
	metrics.Registry.MustRegister(membersGauge, objectsGauge, movesCounter, drainsCounter, drainTimeoutsCounter, passesCounter, passDuration)
}
