package explore_test

import (
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"

	"github.com/bosunkit/bosun/bosuntest/explore"
)

// The changes a spec of one bounded integer admits, a sequence drawn from
// them, and a failing sequence shrunk to the step that matters.
func Example() {
	spec := &apiextensionsv1.JSONSchemaProps{
		Type:     "object",
		Required: []string{"replicas"},
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"replicas": {Type: "integer", Minimum: ptr.To(0.0), Maximum: ptr.To(5.0)},
		},
	}
	for _, c := range explore.Changes(spec) {
		fmt.Println(c)
	}

	seq := explore.Sequence(spec, 42, 8)
	// Say the operator fails once replicas reaches 5.
	fails := func(steps []explore.Change) bool {
		s := map[string]any{"replicas": int64(1)}
		for _, c := range steps {
			s = c.Apply(s)
			if s["replicas"] == int64(5) {
				return true
			}
		}
		return false
	}
	if fails(seq) {
		fmt.Println("shrunk:", explore.Shrink(seq, fails))
	}
	// Output:
	// spec.replicas = 0 (boundary)
	// spec.replicas = 5 (boundary)
	// spec.replicas = 1 (valid)
	// shrunk: [spec.replicas = 5 (boundary)]
}
