package explore

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

func raw(t *testing.T, v any) *apiextensionsv1.JSON {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return &apiextensionsv1.JSON{Raw: b}
}

func TestValues(t *testing.T) {
	long := strings.Repeat("z", longString)
	tests := []struct {
		name   string
		schema apiextensionsv1.JSONSchemaProps
		want   []value
	}{
		{"integer without bounds", apiextensionsv1.JSONSchemaProps{Type: "integer"},
			[]value{{int64(-1), Boundary}, {int64(2147483647), Boundary}, {int64(0), Valid}, {int64(1), Valid}}},
		{"integer 1 to 10", apiextensionsv1.JSONSchemaProps{Type: "integer", Minimum: ptr.To(1.0), Maximum: ptr.To(10.0)},
			[]value{{int64(1), Boundary}, {int64(10), Boundary}, {int64(2), Valid}}},
		{"integer over 0, under 3", apiextensionsv1.JSONSchemaProps{Type: "integer", Minimum: ptr.To(0.0), ExclusiveMinimum: true, Maximum: ptr.To(3.0), ExclusiveMaximum: true},
			[]value{{int64(1), Boundary}, {int64(2), Boundary}}},
		{"integer with no room", apiextensionsv1.JSONSchemaProps{Type: "integer", Minimum: ptr.To(5.0), Maximum: ptr.To(4.0)}, nil},
		{"number 0 to 1", apiextensionsv1.JSONSchemaProps{Type: "number", Minimum: ptr.To(0.0), Maximum: ptr.To(1.0)},
			[]value{{0.0, Boundary}, {1.0, Boundary}, {0.5, Valid}}},
		{"number over 0", apiextensionsv1.JSONSchemaProps{Type: "number", Minimum: ptr.To(0.0), ExclusiveMinimum: true},
			[]value{{0.5, Valid}, {1.0, Valid}}},
		{"string", apiextensionsv1.JSONSchemaProps{Type: "string"},
			[]value{{"", Boundary}, {"bbb", Valid}, {long, Boundary}}},
		{"string of 2 to 5", apiextensionsv1.JSONSchemaProps{Type: "string", MinLength: ptr.To[int64](2), MaxLength: ptr.To[int64](5)},
			[]value{{"aa", Boundary}, {"bbb", Valid}, {"zzzzz", Boundary}}},
		{"string of at most 2", apiextensionsv1.JSONSchemaProps{Type: "string", MaxLength: ptr.To[int64](2)},
			[]value{{"", Boundary}}},
		{"string with a pattern and a default", apiextensionsv1.JSONSchemaProps{Type: "string", Pattern: "^[a-z]+$", Default: raw(t, "abc")},
			[]value{{"abc", Valid}}},
		{"string with a pattern", apiextensionsv1.JSONSchemaProps{Type: "string", Pattern: "^[a-z]+$"}, nil},
		{"date-time", apiextensionsv1.JSONSchemaProps{Type: "string", Format: "date-time"},
			[]value{{"2026-01-02T03:04:05Z", Valid}}},
		{"enum", apiextensionsv1.JSONSchemaProps{Type: "string", Enum: []apiextensionsv1.JSON{*raw(t, "Retain"), *raw(t, "Delete")}},
			[]value{{"Retain", Valid}, {"Delete", Valid}}},
		{"nullable boolean", apiextensionsv1.JSONSchemaProps{Type: "boolean", Nullable: true},
			[]value{{true, Valid}, {false, Valid}, {nil, Boundary}}},
		{"int or string", apiextensionsv1.JSONSchemaProps{XIntOrString: true},
			[]value{{int64(1), Valid}, {"1", Valid}, {"50%", Valid}}},
		{"list of at most 3 integers", apiextensionsv1.JSONSchemaProps{Type: "array", MaxItems: ptr.To[int64](3),
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "integer", Minimum: ptr.To(1.0)}}},
			[]value{{[]any{}, Boundary}, {[]any{int64(1)}, Valid}, {[]any{int64(1), int64(1), int64(1)}, Boundary}}},
		{"set of 2 strings", apiextensionsv1.JSONSchemaProps{Type: "array", MinItems: ptr.To[int64](2), MaxItems: ptr.To[int64](2), XListType: ptr.To("set"),
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string", MinLength: ptr.To[int64](1)}}},
			[]value{{[]any{"a0", "a1"}, Boundary}}},
		{"map list", apiextensionsv1.JSONSchemaProps{Type: "array", XListType: ptr.To("map"),
			Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{Type: "object"}}},
			[]value{{[]any{}, Boundary}, {[]any{map[string]any{}}, Valid}}},
		{"map of strings", apiextensionsv1.JSONSchemaProps{Type: "object",
			AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Schema: &apiextensionsv1.JSONSchemaProps{Type: "string"}}},
			[]value{{map[string]any{}, Boundary}, {map[string]any{"key": ""}, Valid}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := values(&tt.schema)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(value{})); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
}

// spec is the schema of a spec with a required integer, an optional
// boolean and an optional object of one string.
var spec = &apiextensionsv1.JSONSchemaProps{
	Type:     "object",
	Required: []string{"size"},
	Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"size":  {Type: "integer", Minimum: ptr.To(1.0), Maximum: ptr.To(3.0)},
		"debug": {Type: "boolean"},
		"owner": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"name": {Type: "string", MaxLength: ptr.To[int64](4)},
		}},
	},
}

func TestChanges(t *testing.T) {
	var got []string
	for _, c := range Changes(spec) {
		got = append(got, c.String())
	}
	want := []string{
		"spec.debug = true (valid)",
		"spec.debug = false (valid)",
		"spec.debug removed",
		`spec.owner.name = "" (boundary)`,
		`spec.owner.name = "bbb" (valid)`,
		`spec.owner.name = "zzzz" (boundary)`,
		"spec.owner.name removed",
		"spec.owner removed",
		"spec.size = 1 (boundary)",
		"spec.size = 3 (boundary)",
		"spec.size = 2 (valid)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Changes (-want +got):\n%s", diff)
	}
}

func TestApply(t *testing.T) {
	base := map[string]any{"size": int64(1), "owner": map[string]any{"name": "ann"}}
	tests := []struct {
		change Change
		want   map[string]any
	}{
		{Change{Path: []string{"size"}, Value: int64(3)}, map[string]any{"size": int64(3), "owner": map[string]any{"name": "ann"}}},
		{Change{Path: []string{"owner", "name"}, Class: Removed}, map[string]any{"size": int64(1), "owner": map[string]any{}}},
		{Change{Path: []string{"limits", "cpu"}, Value: "1"}, map[string]any{"size": int64(1), "owner": map[string]any{"name": "ann"}, "limits": map[string]any{"cpu": "1"}}},
		{Change{Path: []string{"owner"}, Value: nil, Class: Boundary}, map[string]any{"size": int64(1), "owner": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.change.String(), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.change.Apply(base)); diff != "" {
				t.Errorf("Apply (-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff(map[string]any{"size": int64(1), "owner": map[string]any{"name": "ann"}}, base); diff != "" {
		t.Errorf("Apply changed the spec it was given (-want +got):\n%s", diff)
	}
}

func TestSequenceIsReproducible(t *testing.T) {
	a, b := Sequence(spec, 7, 50), Sequence(spec, 7, 50)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two sequences of seed 7 differ (-first +second):\n%s", diff)
	}
	if len(a) != 50 {
		t.Errorf("len = %d, want 50", len(a))
	}
	if cmp.Equal(a, Sequence(spec, 8, 50)) {
		t.Error("seeds 7 and 8 gave the same sequence")
	}
	all := Changes(spec)
	for _, c := range a {
		if !slices.ContainsFunc(all, func(e Change) bool { return cmp.Equal(e, c) }) {
			t.Errorf("%s is not one of Changes", c)
		}
	}
	if got := Sequence(&apiextensionsv1.JSONSchemaProps{Type: "object"}, 1, 5); got != nil {
		t.Errorf("a schema with no fields gave %v, want none", got)
	}
}

func TestShrink(t *testing.T) {
	steps := make([]Change, 40)
	for i := range steps {
		steps[i] = Change{Path: []string{"size"}, Value: int64(i)}
	}
	has := func(seq []Change, v int64) bool {
		return slices.ContainsFunc(seq, func(c Change) bool { return c.Value == v })
	}
	tests := []struct {
		name  string
		fails func([]Change) bool
		want  []int64
	}{
		{"two changes in order", func(seq []Change) bool {
			i := slices.IndexFunc(seq, func(c Change) bool { return c.Value == int64(31) })
			return has(seq, 3) && i > slices.IndexFunc(seq, func(c Change) bool { return c.Value == int64(3) })
		}, []int64{3, 31}},
		{"one change", func(seq []Change) bool { return has(seq, 17) }, []int64{17}},
		{"any sequence", func([]Change) bool { return true }, nil},
		{"at least five changes", func(seq []Change) bool { return len(seq) >= 5 }, []int64{35, 36, 37, 38, 39}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			got := Shrink(steps, func(seq []Change) bool { calls++; return tt.fails(seq) })
			var vs []int64
			for _, c := range got {
				vs = append(vs, c.Value.(int64))
			}
			if diff := cmp.Diff(tt.want, vs); diff != "" {
				t.Errorf("Shrink (-want +got):\n%s", diff)
			}
			if calls > 400 {
				t.Errorf("Shrink called fails %d times for 40 steps, want at most 400", calls)
			}
		})
	}
}
