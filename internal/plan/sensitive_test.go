package plan

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// obj reads a JSON object.
func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	if s == "" {
		return nil
	}
	m := map[string]any{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestSensitiveValuesAreHidden tables what a plan prints for the writes of
// a Secret and of kinds with fields an operator names sensitive: every
// path and key that changes, never a value of such a field, old or new.
func TestSensitiveValuesAreHidden(t *testing.T) {
	widget := schema.GroupKind{Group: "test.bosun.dev", Kind: "Widget"}
	secret := schema.GroupKind{Kind: "Secret"}
	marked := map[schema.GroupKind][]string{widget: {
		"spec.password",
		"spec.users.token",
		"spec.auth",
		`metadata.annotations["example.com/key"]`,
	}}
	for _, tc := range []struct {
		name string
		kind schema.GroupKind
		// before is empty for a create.
		before, after string
		want          []string
	}{{
		name:   "a Secret's keys added, changed and removed",
		kind:   secret,
		before: fmt.Sprintf(`{"data":{"host":%q,"port":%q,"old":%q}}`, b64("db-1"), b64("5432"), b64("gone")),
		after:  fmt.Sprintf(`{"data":{"host":%q,"port":%q,"password":%q}}`, b64("db-2"), b64("5432"), b64("hunter2")),
		want: []string{
			"data.host: (sensitive value) -> (sensitive value)",
			"data.old: (sensitive value) -> <none>",
			"data.password: <none> -> (sensitive value)",
		},
	}, {
		name:  "a Secret created",
		kind:  secret,
		after: fmt.Sprintf(`{"metadata":{"labels":{"app":"db"}},"type":"Opaque","data":{"password":%q},"stringData":{"user":"admin"}}`, b64("hunter2")),
		want: []string{
			"data.password: (sensitive value)",
			"stringData.user: (sensitive value)",
			`type: "Opaque"`,
			`metadata.labels.app: "db"`,
		},
	}, {
		name:   "a Secret's data where there was none",
		kind:   secret,
		before: `{"type":"Opaque"}`,
		after:  fmt.Sprintf(`{"type":"Opaque","data":{"password":%q}}`, b64("hunter2")),
		want:   []string{`data: <none> -> {"password":"(sensitive value)"}`},
	}, {
		name:   "a Secret's data all removed",
		kind:   secret,
		before: fmt.Sprintf(`{"data":{"password":%q}}`, b64("hunter2")),
		after:  `{"data":null}`,
		want:   []string{`data: {"password":"(sensitive value)"} -> <none>`},
	}, {
		name:   "a Secret's other fields are shown",
		kind:   secret,
		before: fmt.Sprintf(`{"type":"Opaque","data":{"password":%q},"metadata":{"labels":{"v":"1"}}}`, b64("hunter2")),
		after:  fmt.Sprintf(`{"type":"Opaque","data":{"password":%q},"metadata":{"labels":{"v":"2"}}}`, b64("hunter2")),
		want:   []string{`metadata.labels.v: "1" -> "2"`},
	}, {
		name:   "kubectl's copy of a Secret",
		kind:   secret,
		before: `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"data\":{\"password\":\"aHVudGVyMg==\"}}"}}}`,
		after:  `{"metadata":{"annotations":{}}}`,
		want:   []string{`metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]: (sensitive value) -> <none>`},
	}, {
		name:   "the digest of a Secret applied by a children step",
		kind:   secret,
		before: `{"metadata":{"annotations":{"bosun.dev/applied-hash":"c5af4779"}}}`,
		after:  `{"metadata":{"annotations":{"bosun.dev/applied-hash":"c3fa63ee"}}}`,
		want:   []string{`metadata.annotations["bosun.dev/applied-hash"]: (sensitive value) -> (sensitive value)`},
	}, {
		name:   "the digest of a kind without sensitive fields",
		kind:   schema.GroupKind{Kind: "ConfigMap"},
		before: `{"metadata":{"annotations":{"bosun.dev/applied-hash":"0aa11bb2"}}}`,
		after:  `{"metadata":{"annotations":{"bosun.dev/applied-hash":"0cc33dd4"}}}`,
		want:   []string{`metadata.annotations["bosun.dev/applied-hash"]: "0aa11bb2" -> "0cc33dd4"`},
	}, {
		name:   "a ConfigMap is not sensitive",
		kind:   schema.GroupKind{Kind: "ConfigMap"},
		before: `{"data":{"greeting":"hello"}}`,
		after:  `{"data":{"greeting":"hello, world"}}`,
		want:   []string{`data.greeting: "hello" -> "hello, world"`},
	}, {
		name:   "a field named sensitive, and those beside it",
		kind:   widget,
		before: `{"spec":{"password":"hunter2","size":1}}`,
		after:  `{"spec":{"password":"swordfish","size":2}}`,
		want:   []string{"spec.password: (sensitive value) -> (sensitive value)", "spec.size: 1 -> 2"},
	}, {
		name:   "an unchanged sensitive field is not listed",
		kind:   widget,
		before: `{"spec":{"password":"hunter2","size":1}}`,
		after:  `{"spec":{"password":"hunter2","size":2}}`,
		want:   []string{"spec.size: 1 -> 2"},
	}, {
		name:   "a map named sensitive keeps its keys",
		kind:   widget,
		before: `{"spec":{"auth":{"alice":"hunter2","bob":{"nested":"x"}}}}`,
		after:  `{"spec":{"auth":{"alice":"swordfish","carol":"letmein","bob":{"nested":"y"}}}}`,
		want: []string{
			"spec.auth.alice: (sensitive value) -> (sensitive value)",
			"spec.auth.bob: (sensitive value) -> (sensitive value)",
			"spec.auth.carol: <none> -> (sensitive value)",
		},
	}, {
		name:   "a list on the way stands for each element",
		kind:   widget,
		before: `{"spec":{"users":[{"name":"alice","token":"t1"},{"name":"bob","token":"t2"}]}}`,
		after:  `{"spec":{"users":[{"name":"alice","token":"t3"},{"name":"bob","token":"t2"},{"name":"carol","token":"t4"}]}}`,
		want:   []string{`spec.users: [{"name":"alice","token":"(sensitive value)"},{"name":"bob","token":"(sensitive value)"}] -> [{"name":"alice","token":"(sensitive value)"},{"name":"bob","token":"(sensitive value)"},{"name":"carol","token":"(sensitive value)"}]`},
	}, {
		name:   "a list of the same length, element by element",
		kind:   widget,
		before: `{"spec":{"users":[{"name":"alice","token":"t1"}]}}`,
		after:  `{"spec":{"users":[{"name":"alice","token":"t3"}]}}`,
		want:   []string{"spec.users[0].token: (sensitive value) -> (sensitive value)"},
	}, {
		name:   "a whole spec where there was none",
		kind:   widget,
		before: `{"metadata":{"name":"w"}}`,
		after:  `{"metadata":{"name":"w"},"spec":{"password":"hunter2","size":1}}`,
		want:   []string{`spec: <none> -> {"password":"(sensitive value)","size":1}`},
	}, {
		name:  "an annotation named sensitive",
		kind:  widget,
		after: `{"spec":{"size":1},"metadata":{"annotations":{"example.com/key":"hunter2","example.com/other":"shown"}}}`,
		want: []string{
			"spec.size: 1",
			`metadata.annotations["example.com/key"]: (sensitive value)`,
			`metadata.annotations["example.com/other"]: "shown"`,
		},
	}, {
		name:  "a sensitive field set to null",
		kind:  widget,
		after: `{"spec":{"password":null,"size":1}}`,
		want:  []string{"spec.size: 1"},
	}, {
		name:   "another kind with fields of the same name",
		kind:   schema.GroupKind{Group: "other.dev", Kind: "Widget"},
		before: `{"spec":{"password":"a"}}`,
		after:  `{"spec":{"password":"b"}}`,
		want:   []string{`spec.password: "a" -> "b"`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSensitive(marked)
			if err != nil {
				t.Fatal(err)
			}
			before, after := obj(t, tc.before), obj(t, tc.after)
			var got []string
			if before == nil {
				got = fields(s.hide(tc.kind, after))
			} else {
				got = diff(s.hide(tc.kind, before), s.hide(tc.kind, after))
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("plan lines (-want +got):\n%s", d)
			}
			for _, secret := range []string{"hunter2", "swordfish", "letmein", "db-1", "db-2", "gone", "t1", "t3", "t4", "c5af4779", "c3fa63ee"} {
				for _, v := range []string{secret, b64(secret)} {
					if strings.Contains(strings.Join(got, "\n"), `"`+v+`"`) {
						t.Errorf("the plan prints the value %q", v)
					}
				}
			}
		})
	}
}

// TestHideLeavesTheObject: hiding works on a copy; the object a write
// sends is not changed.
func TestHideLeavesTheObject(t *testing.T) {
	m := obj(t, `{"data":{"password":"aHVudGVyMg=="},"spec":{"users":[{"token":"t1"}]}}`)
	want := obj(t, `{"data":{"password":"aHVudGVyMg=="},"spec":{"users":[{"token":"t1"}]}}`)
	s, err := NewSensitive(map[schema.GroupKind][]string{{Kind: "Secret"}: {"spec.users.token"}})
	if err != nil {
		t.Fatal(err)
	}
	s.hide(schema.GroupKind{Kind: "Secret"}, m)
	if d := cmp.Diff(want, m); d != "" {
		t.Errorf("the object after hide (-want +got):\n%s", d)
	}
}

// TestHiddenPrintsNoValue: however a hidden value is printed, it is the
// marker.
func TestHiddenPrintsNoValue(t *testing.T) {
	h := conceal("hunter2")
	b, err := json.Marshal(map[string]any{"k": h})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{fmt.Sprint(h), fmt.Sprintf("%v", h), fmt.Sprintf("%+v", h), fmt.Sprintf("%#v", h), fmt.Sprintf("%s", h), string(b), show(h)}
	want := []string{marker, marker, marker, marker, marker, `{"k":"(sensitive value)"}`, marker}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("printed (-want +got):\n%s", d)
	}
	if conceal("a") == conceal("b") || conceal("a") != conceal("a") {
		t.Error("hidden values do not compare as the values they stand for")
	}
}

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		path string
		want []string
		err  bool
	}{
		{path: "data", want: []string{"data"}},
		{path: "spec.users.token", want: []string{"spec", "users", "token"}},
		{path: `metadata.annotations["example.com/key"]`, want: []string{"metadata", "annotations", "example.com/key"}},
		{path: `spec["a.b"].c`, want: []string{"spec", "a.b", "c"}},
		{path: `spec["a"]["b c"]`, want: []string{"spec", "a", "b c"}},
		{path: `["data"]`, want: []string{"data"}},
		{path: "", err: true},
		{path: "spec.", err: true},
		{path: ".spec", err: true},
		{path: "spec..x", err: true},
		{path: "spec.users[0].token", err: true},
		{path: `spec["unterminated`, err: true},
		{path: `spec["a"]x`, err: true},
		{path: `spec[a]`, err: true},
	} {
		got, err := ParsePath(tc.path)
		if (err != nil) != tc.err {
			t.Errorf("ParsePath(%q): error %v, want an error: %t", tc.path, err, tc.err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("ParsePath(%q) (-want +got):\n%s", tc.path, d)
		}
	}
}

func TestNewSensitiveRefusesBadFields(t *testing.T) {
	for _, fields := range []map[schema.GroupKind][]string{
		{{Group: "x.dev"}: {"spec.a"}},
		{{Kind: "Widget"}: {"spec.a[0]"}},
		{{Kind: "Widget"}: {""}},
	} {
		if _, err := NewSensitive(fields); err == nil {
			t.Errorf("NewSensitive(%v) took them", fields)
		}
	}
}
