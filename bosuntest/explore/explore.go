package explore

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Class says what a generated change is to the schema.
type Class int

const (
	// Valid values are within every bound the schema states.
	Valid Class = iota
	// Boundary values sit at a bound: a minimum or a maximum, an empty or
	// a longest string or list, a null.
	Boundary
	// Removed is the removal of an optional field.
	Removed
)

// String returns the class's name in lower case.
func (c Class) String() string {
	switch c {
	case Valid:
		return "valid"
	case Boundary:
		return "boundary"
	case Removed:
		return "removed"
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// Change is one step of a sequence: a value set at a path of the spec, or
// the removal of the field there.
type Change struct {
	// Path is the field names from the spec down to the field changed.
	Path []string
	// Value is the JSON value set (string, int64, float64, bool, []any,
	// map[string]any, or nil for a null); nil when Class is Removed.
	Value any
	// Class says what the change is to the schema.
	Class Class
}

// String returns the change as "spec.a.b = value (class)" or
// "spec.a.b removed".
func (c Change) String() string {
	path := strings.Join(append([]string{"spec"}, c.Path...), ".")
	if c.Class == Removed {
		return path + " removed"
	}
	v, err := json.Marshal(c.Value)
	if err != nil {
		v = fmt.Appendf(nil, "%v", c.Value)
	}
	if len(v) > 40 {
		v = fmt.Appendf(v[:32:32], "...(%d bytes)", len(v))
	}
	return fmt.Sprintf("%s = %s (%s)", path, v, c.Class)
}

// Apply returns a copy of spec with the change made; spec is not changed.
// The objects on the path are made when missing.
func (c Change) Apply(spec map[string]any) map[string]any {
	out, _ := deepCopy(spec).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	if len(c.Path) == 0 {
		return out
	}
	m := out
	for _, name := range c.Path[:len(c.Path)-1] {
		next, ok := m[name].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[name] = next
		}
		m = next
	}
	last := c.Path[len(c.Path)-1]
	if c.Class == Removed {
		delete(m, last)
	} else {
		m[last] = deepCopy(c.Value)
	}
	return out
}

// deepCopy copies a JSON value.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// Changes returns every change the schema of a spec admits at its leaves:
// for each field, the values it admits (see Class) and, when the field is
// optional, its removal. The order is fixed: fields sorted by name, depth
// first.
func Changes(spec *apiextensionsv1.JSONSchemaProps) []Change {
	if spec == nil {
		return nil
	}
	var out []Change
	walk(spec, nil, &out)
	return out
}

// walk appends to out the changes of the properties of the object schema
// s, found at path.
func walk(s *apiextensionsv1.JSONSchemaProps, path []string, out *[]Change) {
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := s.Properties[name]
		at := append(slices.Clip(path), name)
		if p.Type == "object" && len(p.Properties) > 0 && !preserves(&p) {
			walk(&p, at, out)
		} else {
			for _, v := range values(&p) {
				*out = append(*out, Change{Path: at, Value: v.value, Class: v.class})
			}
		}
		if !slices.Contains(s.Required, name) {
			*out = append(*out, Change{Path: at, Class: Removed})
		}
	}
}

// preserves reports whether s keeps fields it does not declare, which the
// package does not generate.
func preserves(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// value is a value with its class.
type value struct {
	value any
	class Class
}

// longString is the length of the long string given to a string field
// with no maximum length.
const longString = 1024

// values returns the values the leaf schema s admits.
func values(s *apiextensionsv1.JSONSchemaProps) []value {
	var out []value
	if len(s.Enum) > 0 {
		for _, e := range s.Enum {
			var v any
			if json.Unmarshal(e.Raw, &v) == nil {
				out = append(out, value{normalise(v), Valid})
			}
		}
		return withNull(s, out)
	}
	switch {
	case s.XIntOrString:
		out = append(out, value{int64(1), Valid}, value{"1", Valid}, value{"50%", Valid})
	case s.Type == "integer":
		out = integers(s)
	case s.Type == "number":
		out = numbers(s)
	case s.Type == "string":
		out = strs(s)
	case s.Type == "boolean":
		out = []value{{true, Valid}, {false, Valid}}
	case s.Type == "array":
		out = arrays(s)
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		out = []value{{map[string]any{}, Boundary}}
		if vs := values(s.AdditionalProperties.Schema); len(vs) > 0 {
			out = append(out, value{map[string]any{"key": vs[0].value}, Valid})
		}
	}
	return withNull(s, out)
}

// normalise turns the float64 of a whole JSON number into an int64, as the
// generator gives integers.
func normalise(v any) any {
	if f, ok := v.(float64); ok && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f)
	}
	return v
}

// withNull adds a null to out when s is nullable.
func withNull(s *apiextensionsv1.JSONSchemaProps, out []value) []value {
	if s.Nullable {
		out = append(out, value{nil, Boundary})
	}
	return out
}

// integers returns the integers s admits: its bounds, and 0, 1 and the
// value after the minimum when they are within them. Without a bound, -1
// and the largest int32 stand in for it.
func integers(s *apiextensionsv1.JSONSchemaProps) []value {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if s.Minimum != nil {
		lo = int64(math.Ceil(*s.Minimum))
		if s.ExclusiveMinimum && float64(lo) == *s.Minimum {
			lo++
		}
	}
	if s.Maximum != nil {
		hi = int64(math.Floor(*s.Maximum))
		if s.ExclusiveMaximum && float64(hi) == *s.Maximum {
			hi--
		}
	}
	if lo > hi {
		return nil
	}
	var out []value
	add := func(v int64, c Class) {
		if v >= lo && v <= hi && !slices.ContainsFunc(out, func(e value) bool { return e.value == v }) {
			out = append(out, value{v, c})
		}
	}
	if s.Minimum != nil {
		add(lo, Boundary)
	} else {
		add(-1, Boundary)
	}
	if s.Maximum != nil {
		add(hi, Boundary)
	} else {
		add(math.MaxInt32, Boundary)
	}
	if s.Minimum != nil {
		add(lo+1, Valid)
	}
	add(0, Valid)
	add(1, Valid)
	return out
}

// numbers returns the numbers s admits: its bounds (inclusive ones), and
// 0, 0.5 and 1 when within them.
func numbers(s *apiextensionsv1.JSONSchemaProps) []value {
	within := func(v float64) bool {
		if m := s.Minimum; m != nil && (v < *m || s.ExclusiveMinimum && v == *m) {
			return false
		}
		if m := s.Maximum; m != nil && (v > *m || s.ExclusiveMaximum && v == *m) {
			return false
		}
		return true
	}
	var out []value
	if m := s.Minimum; m != nil && !s.ExclusiveMinimum {
		out = append(out, value{*m, Boundary})
	}
	if m := s.Maximum; m != nil && !s.ExclusiveMaximum && (s.Minimum == nil || *m != *s.Minimum) {
		out = append(out, value{*m, Boundary})
	}
	for _, v := range []float64{0, 0.5, 1} {
		if within(v) && !slices.ContainsFunc(out, func(e value) bool { return e.value == v }) {
			out = append(out, value{v, Valid})
		}
	}
	return out
}

// strs returns the strings s admits: the empty string and the shortest,
// a short one, and the longest (or a long one). A pattern restricts them
// to the default.
func strs(s *apiextensionsv1.JSONSchemaProps) []value {
	if s.Pattern != "" {
		var def string
		if s.Default != nil && json.Unmarshal(s.Default.Raw, &def) == nil {
			return []value{{def, Valid}}
		}
		return nil
	}
	if s.Format == "date-time" {
		return []value{{"2026-01-02T03:04:05Z", Valid}}
	}
	lo, hi := int64(0), int64(-1)
	if s.MinLength != nil {
		lo = *s.MinLength
	}
	if s.MaxLength != nil {
		hi = *s.MaxLength
	}
	if hi >= 0 && lo > hi {
		return nil
	}
	out := []value{{strings.Repeat("a", int(lo)), Boundary}}
	if short := max(lo, 3); (hi < 0 || short <= hi) && short != lo {
		out = append(out, value{strings.Repeat("b", int(short)), Valid})
	}
	long := hi
	if long < 0 {
		long = longString
	}
	if long != lo && long > 3 {
		out = append(out, value{strings.Repeat("z", int(long)), Boundary})
	}
	return out
}

// maxListed is the most items a generated list holds.
const maxListed = 16

// arrays returns the lists s admits: the shortest (empty when allowed),
// one of one item when allowed, and the longest when it is short.
func arrays(s *apiextensionsv1.JSONSchemaProps) []value {
	var item any = "item"
	if s.Items != nil && s.Items.Schema != nil {
		vs := values(s.Items.Schema)
		if len(vs) == 0 {
			if s.Items.Schema.Type != "object" {
				return nil
			}
			vs = []value{{map[string]any{}, Valid}}
		}
		item = vs[0].value
	}
	set := s.XListType != nil && *s.XListType == "set"
	list := func(n int64) []any {
		l := make([]any, n)
		for i := range l {
			// The items of a set differ.
			switch it := item.(type) {
			case string:
				if set {
					l[i] = fmt.Sprint(it, i)
					continue
				}
			case int64:
				if set {
					l[i] = it + int64(i)
					continue
				}
			}
			l[i] = deepCopy(item)
		}
		return l
	}
	lo, hi := int64(0), int64(-1)
	if s.MinItems != nil {
		lo = *s.MinItems
	}
	if s.MaxItems != nil {
		hi = *s.MaxItems
	}
	if s.XListType != nil && *s.XListType == "map" && (hi < 0 || hi > 1) {
		// Items of a map list need keys of their own, which the package
		// does not make: one item at most.
		hi = 1
	}
	if lo > maxListed || hi >= 0 && lo > hi {
		return nil
	}
	out := []value{{list(lo), Boundary}}
	if lo < 1 && (hi < 0 || hi >= 1) {
		out = append(out, value{list(1), Valid})
	}
	if hi > max(lo, 1) && hi <= maxListed {
		out = append(out, value{list(hi), Boundary})
	}
	return out
}

// Sequence returns n changes drawn from Changes(spec) by a generator
// seeded with seed: the same seed and schema give the same sequence.
func Sequence(spec *apiextensionsv1.JSONSchemaProps, seed uint64, n int) []Change {
	all := Changes(spec)
	if len(all) == 0 || n <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x62_6f_73_75_6e)) // "bosun"
	out := make([]Change, n)
	for i := range out {
		out[i] = all[rng.IntN(len(all))]
	}
	return out
}

// Shrink returns a subsequence of steps, in their order, for which fails
// still reports true, shorter when it can be: it removes runs of changes,
// halving their length down to single changes, for as long as the failure
// holds without them. fails must report true for steps itself; Shrink
// calls it O(n log n) times for n steps in the usual case.
func Shrink(steps []Change, fails func([]Change) bool) []Change {
	cur := slices.Clone(steps)
	for run := len(cur) / 2; run >= 1; {
		removed := false
		for i := 0; i+run <= len(cur); {
			try := slices.Concat(cur[:i], cur[i+run:])
			if fails(try) {
				cur, removed = try, true
				continue
			}
			i += run
		}
		if !removed {
			run /= 2
		} else {
			run = min(run, len(cur)/2)
		}
	}
	if len(cur) == 1 && fails(nil) {
		return nil
	}
	return cur
}
