package plan

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// noise are the fields of metadata that the API server keeps for itself:
// a write that changes only these changes nothing a user asked for.
var noise = []string{"resourceVersion", "managedFields", "generation", "uid", "creationTimestamp", "selfLink"}

// clean returns m without its kind, apiVersion and metadata noise.
func clean(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k == "kind" || k == "apiVersion" {
			continue
		}
		out[k] = v
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		md2 := make(map[string]any, len(md))
		for k, v := range md {
			md2[k] = v
		}
		for _, k := range noise {
			delete(md2, k)
		}
		out["metadata"] = md2
	}
	return out
}

// fields lists the fields of m, an object to create, as "path: value", its
// metadata left out but for labels and annotations.
func fields(m map[string]any) []string {
	m = clean(m)
	md, _ := m["metadata"].(map[string]any)
	delete(m, "metadata")
	var out []string
	walk("", m, func(path string, v any) { out = append(out, path+": "+show(v)) })
	for _, k := range []string{"labels", "annotations"} {
		if v, ok := md[k]; ok {
			walk("metadata."+k, v, func(path string, v any) { out = append(out, path+": "+show(v)) })
		}
	}
	return out
}

// walk calls leaf for each leaf of v under path, maps in key order.
func walk(path string, v any, leaf func(string, any)) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		if v != nil {
			leaf(path, v)
		}
		return
	}
	for _, k := range sortedKeys(m) {
		walk(join(path, k), m[k], leaf)
	}
}

// diff lists the fields that differ between before and after, as
// "path: old -> new" ("<none>" for a field that is missing), metadata
// noise left out.
func diff(before, after map[string]any) []string {
	var out []string
	compare("", clean(before), clean(after), &out)
	return out
}

func compare(path string, a, b any, out *[]string) {
	if reflect.DeepEqual(a, b) {
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			compare(join(path, k), am[k], bm[k], out)
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			compare(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i], out)
		}
		return
	}
	if empty(a) && empty(b) {
		return
	}
	*out = append(*out, fmt.Sprintf("%s: %s -> %s", path, show(a), show(b)))
}

// empty reports whether v is missing or an empty map or list, which the
// API server does not tell apart.
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

func show(v any) string {
	switch v := v.(type) {
	case nil:
		return "<none>"
	case hidden:
		return v.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// join adds key k to path, quoted when it holds a dot or a slash.
func join(path, k string) string {
	if strings.ContainsAny(k, "./ ") {
		return fmt.Sprintf("%s[%q]", path, k)
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
