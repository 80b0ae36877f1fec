package conversion_test

import (
	"fmt"
	"testing"

	"sigs.k8s.io/randfill"

	"github.com/bosunkit/bosun/bosuntest/conversion"
	v1 "github.com/bosunkit/bosun/internal/testapi/versioned/v1"
	v2 "github.com/bosunkit/bosun/internal/testapi/versioned/v2"
)

// The v2 Gadget is the hub and v1 a spoke; each has a field the other
// keeps in an annotation, and a hundred random objects of each survive the
// round trip.
func ExampleRoundTrip() {
	t := &testing.T{} // in a test, the test's own t
	conversion.RoundTrip(t, &v2.Gadget{}, &v1.Gadget{})
	fmt.Println("failed:", t.Failed())
	// Output:
	// failed: false
}

// A fixed seed, more iterations, and a fill function for a field whose
// values obey a rule.
func ExampleOptions_RoundTrip() {
	t := &testing.T{} // in a test, the test's own t
	opts := conversion.Options{
		Seed:       42,
		Iterations: 1000,
		Funcs: []any{func(s *v1.GadgetSpec, c randfill.Continue) {
			c.FillNoCustom(s)
			s.Color = []string{"", "red", "green"}[c.Intn(3)]
		}},
	}
	opts.RoundTrip(t, &v2.Gadget{}, &v1.Gadget{})
	fmt.Println("failed:", t.Failed())
	// Output:
	// failed: false
}
