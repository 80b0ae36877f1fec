package bosun

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/conditions"
)

// AnnotationResyncInterval sets, on one object, how often it is reconciled
// again when nothing else brings it back: a Go duration ("10m", "1h30m"),
// or "0" for never. It overrides Reconciler.Resync for that object, and
// works on reconcilers whose Resync is zero too.
const AnnotationResyncInterval = "bosun.dev/resync-interval"

// defaultResyncJitter is the ResyncJitter of a Reconciler that sets none: a
// resync comes back between Resync and 1.1 times Resync after the pass.
const defaultResyncJitter = 0.1

// resyncInterval returns the resync period of obj: its annotation, else
// def. An unreadable annotation is a terminal error naming it.
func resyncInterval(obj client.Object, def time.Duration) (time.Duration, error) {
	v, ok := obj.GetAnnotations()[AnnotationResyncInterval]
	if !ok {
		return def, nil
	}
	v = strings.TrimSpace(v)
	d, err := time.ParseDuration(v)
	if v == "0" {
		d, err = 0, nil
	}
	switch {
	case err != nil:
		return 0, conditions.Terminal(conditions.ReasonInvalidResyncInterval,
			fmt.Errorf("annotation %s: %q is not a duration such as 10m or 1h30m, nor 0 for never", AnnotationResyncInterval, v))
	case d < 0:
		return 0, conditions.Terminal(conditions.ReasonInvalidResyncInterval,
			fmt.Errorf("annotation %s: %q is negative", AnnotationResyncInterval, v))
	}
	return d, nil
}

// withResync returns res asking to come back after the resync period
// (every plus up to jitter times every, at random), unless res asks to
// come back sooner.
func withResync(res ctrl.Result, every time.Duration, jitter float64) ctrl.Result {
	if every <= 0 {
		return res
	}
	if jitter == 0 {
		jitter = defaultResyncJitter
	}
	d := every + time.Duration(rand.Float64()*jitter*float64(every))
	if res.RequeueAfter == 0 || res.RequeueAfter > d {
		res.RequeueAfter = d
	}
	return res
}
