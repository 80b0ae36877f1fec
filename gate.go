package bosun

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// How often a controller set up with WhenServed looks for its kind: first
// after defaultGateInterval, then twice as long each time, up to
// defaultGateMaxInterval.
const (
	defaultGateInterval    = time.Second
	defaultGateMaxInterval = 30 * time.Second
)

// errKindNotServed is wrapped by the error of Complete (and Build) for a
// kind the API server does not serve, usually because its
// CustomResourceDefinition is not installed, unless the Builder was told
// to wait for it with WhenServed.
var errKindNotServed = errors.New("kind is not served by the API server")

// gate is how a Builder waits for its kinds: the first wait between two
// looks at the API server's discovery, and the longest; each wait doubles
// the one before.
type gate struct {
	first, longest time.Duration
}

// served reports whether the API server serves gvk, through mapper, which
// looks at discovery again when it does not know the kind. A kind the
// server does not know is not an error; failing to ask is.
func served(mapper meta.RESTMapper, gvk schema.GroupVersionKind) (bool, error) {
	_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case err == nil:
		return true, nil
	case meta.IsNoMatchError(err):
		return false, nil
	default:
		return false, err
	}
}

// gateRunnable waits, once the manager runs, until its kinds are all
// served, and then builds the controller.
type gateRunnable struct {
	gate   gate
	gvks   []schema.GroupVersionKind
	mapper meta.RESTMapper
	log    logr.Logger
	build  func(ctx context.Context) error
}

var (
	_ manager.Runnable               = (*gateRunnable)(nil)
	_ manager.LeaderElectionRunnable = (*gateRunnable)(nil)
)

// NeedLeaderElection is false: every replica builds the controller, which
// itself waits for the leadership, as controllers do.
func (g *gateRunnable) NeedLeaderElection() bool { return false }

// Start looks for the kinds until each is served or ctx ends.
func (g *gateRunnable) Start(ctx context.Context) error {
	waiting := false
	lastErr := ""
	// Past the cap the backoff stops growing and keeps waiting longest.
	backoff := wait.Backoff{Duration: g.gate.first, Factor: 2, Cap: g.gate.longest, Steps: math.MaxInt32}
	err := backoff.DelayFunc().Until(ctx, true, true, func(context.Context) (bool, error) {
		ok, err := g.allServed()
		switch {
		case ok:
			return true, nil
		case err != nil && err.Error() != lastErr:
			// Said once per new error: discovery failing for a while
			// must not flood the log.
			lastErr = err.Error()
			g.log.Error(err, "looking for the kind in the API server's discovery")
		case err == nil && !waiting:
			waiting = true
			g.log.Info("kind not served, waiting for it", "firstInterval", g.gate.first.String(), "maxInterval", g.gate.longest.String())
		}
		return false, nil
	})
	if err != nil {
		// The context ended: the manager stops.
		return nil //nolint:nilerr // a stopped manager is no failure of the gate
	}
	g.log.Info("kind served, starting the controller")
	return g.build(ctx)
}

// allServed reports whether every kind of g is served; those found are
// not asked for again.
func (g *gateRunnable) allServed() (bool, error) {
	for len(g.gvks) > 0 {
		ok, err := served(g.mapper, g.gvks[0])
		if !ok || err != nil {
			return false, err
		}
		g.gvks = g.gvks[1:]
	}
	return true, nil
}

// notServedError is the error of a kind the API server does not serve.
func notServedError(name string, gvk schema.GroupVersionKind, err error) error {
	return fmt.Errorf("bosun: reconciler %q: %w: %s (is its CustomResourceDefinition installed?); "+
		"to start the controller once it is, set the Builder's WhenServed: %w", name, errKindNotServed, gvk, err)
}
