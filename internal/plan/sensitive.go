package plan

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// marker is what the plan prints in place of a sensitive value.
const marker = "(sensitive value)"

// secret is the kind whose fields secretFields are always sensitive: its
// data, and the copy of it that kubectl apply leaves in an annotation.
var (
	secret       = schema.GroupKind{Kind: "Secret"}
	secretFields = [][]string{{"data"}, {"stringData"}, {"metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration"}}
)

// appliedHash is the path of the annotation in which package children
// keeps a digest of the child it applied: of a kind with sensitive fields,
// it is hidden too, since a digest of a short secret can be searched for.
var appliedHash = []string{"metadata", "annotations", "bosun.dev/applied-hash"}

// Sensitive holds, per kind, the paths of the fields whose values a plan
// does not print, besides those of Secrets, which it never prints. The
// zero value hides the fields of Secrets alone.
type Sensitive map[schema.GroupKind][][]string

// NewSensitive returns the Sensitive of fields, whose paths are written as
// ParsePath reads them.
func NewSensitive(fields map[schema.GroupKind][]string) (Sensitive, error) {
	s := Sensitive{}
	for gk, paths := range fields {
		if gk.Kind == "" {
			return nil, fmt.Errorf("%s: the kind is empty", kindName(gk))
		}
		for _, p := range paths {
			keys, err := ParsePath(p)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", kindName(gk), err)
			}
			s[gk] = append(s[gk], keys)
		}
	}
	return s, nil
}

func kindName(gk schema.GroupKind) string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// ParsePath reads the path of a field as a plan prints it: field names
// joined by dots, a name that holds a dot, a slash or a space written as a
// quoted string in brackets (`metadata.annotations["example.com/key"]`).
// There are no list indexes: a list on the way stands for each of its
// elements.
func ParsePath(path string) ([]string, error) {
	var keys []string
	rest := path
	for {
		var key string
		if strings.HasPrefix(rest, "[") {
			q, err := strconv.QuotedPrefix(rest[1:])
			if err != nil || !strings.HasPrefix(rest[1+len(q):], "]") {
				return nil, fmt.Errorf("field path %q: brackets hold a quoted name (lists need no index)", path)
			}
			key, _ = strconv.Unquote(q)
			rest = rest[1+len(q)+1:]
		} else {
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			key, rest = rest[:end], rest[end:]
			if key == "" {
				return nil, fmt.Errorf("field path %q: a field name is empty", path)
			}
		}
		keys = append(keys, key)
		switch {
		case rest == "":
			return keys, nil
		case strings.HasPrefix(rest, "["):
		case strings.HasPrefix(rest, ".") && len(rest) > 1:
			rest = rest[1:]
		default:
			return nil, fmt.Errorf("field path %q: a field name is empty", path)
		}
	}
}

// hide returns m, an object of kind gk, with the value of each of its
// sensitive fields replaced by a hidden value (of a map, each of its
// values, its keys kept). m itself is left as it is.
func (s Sensitive) hide(gk schema.GroupKind, m map[string]any) map[string]any {
	paths := s[gk]
	if gk == secret {
		paths = append(secretFields[:len(secretFields):len(secretFields)], paths...)
	}
	if len(paths) > 0 {
		paths = append(paths[:len(paths):len(paths)], appliedHash)
	}
	for _, p := range paths {
		m, _ = hideAt(m, p).(map[string]any)
	}
	return m
}

// hideAt returns v with the field at path p hidden, copying what it
// changes.
func hideAt(v any, p []string) any {
	if len(p) == 0 {
		if m, ok := v.(map[string]any); ok {
			out := make(map[string]any, len(m))
			for k, x := range m {
				out[k] = conceal(x)
			}
			return out
		}
		return conceal(v)
	}
	switch v := v.(type) {
	case map[string]any:
		x, ok := v[p[0]]
		if !ok {
			return v
		}
		out := maps.Clone(v)
		out[p[0]] = hideAt(x, p[1:])
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = hideAt(x, p)
		}
		return out
	}
	return v
}

// hidden stands for a sensitive value in a diff: two are equal when the
// values they stand for are, and each prints as marker. It keeps a digest
// of the value, not the value.
type hidden struct{ sum [sha256.Size]byte }

// conceal returns the hidden value that stands for v; nil stays nil (a
// field set to null).
func conceal(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		// Values read from JSON marshal; this is for anything else.
		b = fmt.Appendf(nil, "%#v", v)
	}
	return hidden{sum: sha256.Sum256(b)}
}

func (hidden) String() string { return marker }

// GoString keeps %#v from printing the digest.
func (hidden) GoString() string { return marker }

func (hidden) MarshalJSON() ([]byte, error) { return json.Marshal(marker) }
