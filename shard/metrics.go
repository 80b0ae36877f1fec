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
)

func init() {
	metrics.Registry.MustRegister(membersGauge, objectsGauge, movesCounter, drainsCounter, drainTimeoutsCounter)
}
