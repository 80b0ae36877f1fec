package explore

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShapeOf(t *testing.T) {
	changes := Changes(spec)
	tests := []struct {
		name string
		spec map[string]any
		want string
	}{
		{"base values", map[string]any{"size": int64(7), "debug": "yes"},
			"Probe: spec.debug=base, spec.owner.name=removed, spec.owner=removed, spec.size=base"},
		{"generated values", map[string]any{"size": int64(3), "debug": false, "owner": map[string]any{"name": "bbb"}},
			"Probe: spec.debug=valid, spec.owner.name=valid, spec.owner=base, spec.size=boundary"},
		{"an empty object", map[string]any{"size": int64(2), "owner": map[string]any{}},
			"Probe: spec.debug=removed, spec.owner.name=removed, spec.owner=base, spec.size=valid"},
		{"the numbers of JSON", map[string]any{"size": float64(1), "owner": map[string]any{"name": ""}},
			"Probe: spec.debug=removed, spec.owner.name=boundary, spec.owner=base, spec.size=boundary"},
		{"a field under a value that is no object", map[string]any{"size": int64(1), "owner": "x"},
			"Probe: spec.debug=removed, spec.owner.name=removed, spec.owner=base, spec.size=boundary"},
		{"an empty spec", nil,
			"Probe: spec.debug=removed, spec.owner.name=removed, spec.owner=removed, spec.size=removed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, shapeOf("Probe", changes, tt.spec)); diff != "" {
				t.Errorf("shapeOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStats(t *testing.T) {
	type counts struct{ Sequences, Steps, Shapes int }
	tests := []struct {
		name string
		// runs are the specs each sequence reaches, the created one first.
		runs [][]map[string]any
		want counts
	}{
		{"nothing", nil, counts{}},
		{"a create", [][]map[string]any{{{"size": int64(1)}}}, counts{1, 0, 1}},
		{"steps back to the base shape", [][]map[string]any{{
			{"size": int64(1)}, {"size": int64(2)}, {"size": int64(1)},
		}}, counts{1, 2, 2}},
		{"two sequences through the same shapes", [][]map[string]any{
			{{"size": int64(1)}, {"size": int64(2), "debug": true}},
			{{"size": int64(1)}, {"size": int64(2)}, {"size": int64(2), "debug": true}},
		}, counts{2, 3, 3}},
		{"a value of the same class", [][]map[string]any{{
			{"size": int64(1)}, {"size": int64(3)},
		}}, counts{1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Stats
			// The sequences run at once, as the Run calls sharing a Stats
			// may.
			var wg sync.WaitGroup
			for _, run := range tt.runs {
				wg.Go(func() {
					s.sequence()
					for i, sp := range run {
						s.reached(i > 0, shapeOf("Probe", Changes(spec), sp))
					}
				})
			}
			wg.Wait()
			got := counts{s.Sequences(), s.Steps(), s.Shapes()}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Stats (-want +got):\n%s", diff)
			}
		})
	}
	var none *Stats
	none.sequence()
	none.reached(true, "Probe:")
}
