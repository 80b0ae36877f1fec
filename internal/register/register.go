// Package register registers Prometheus collectors once per registry, for
// the engine's and the managed step's metrics.
package register

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Once registers c in reg and returns it; when reg already holds an equal
// collector, it returns that one instead. what names the metrics in errors.
func Once[C prometheus.Collector](reg prometheus.Registerer, what string, c C) (C, error) {
	var zero C
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
		return zero, fmt.Errorf("registering %s: the registry holds a %T where a %T was expected", what, are.ExistingCollector, c)
	}
	return zero, fmt.Errorf("registering %s: %w", what, err)
}
