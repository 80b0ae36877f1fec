package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
)

// A CEL rule's refusal names the field where the rule sits: a rule on a
// string names that string, but a rule on an object (the root, a spec)
// names the object, and at the root no field at all ("<nil>: Invalid
// value"), unless the rule says which field with fieldPath. These tests
// hold the examples and the scaffold to it.
//
// A rule about the object's name says fieldPath=".metadata", not
// ".metadata.name": controller-gen writes the root metadata of a CRD's
// schema as a bare object (FixTopLevelMetadata), and the API server
// refuses a CRD whose fieldPath names a field its schema does not declare.

// objectRules returns the CEL rules of crd that sit on an object, at
// "crd version path".
func objectRules(crd *apiextensionsv1.CustomResourceDefinition) []marker {
	var rules []marker
	var version string
	var walk func(path string, s *apiextensionsv1.JSONSchemaProps)
	walk = func(path string, s *apiextensionsv1.JSONSchemaProps) {
		if s == nil {
			return
		}
		if s.Type == "object" {
			where := path
			if where == "" {
				where = "(root)"
			}
			for _, r := range s.XValidations {
				rules = append(rules, marker{at: crd.Name + " " + version + " " + where, rule: r.Rule, hasFieldPath: r.FieldPath != ""})
			}
		}
		for name, p := range s.Properties {
			walk(path+"."+name, &p)
		}
		if s.Items != nil {
			walk(path+"[*]", s.Items.Schema)
		}
		if s.AdditionalProperties != nil {
			walk(path+"[*]", s.AdditionalProperties.Schema)
		}
	}
	for _, v := range crd.Spec.Versions {
		if v.Schema != nil {
			version = v.Name
			walk("", v.Schema.OpenAPIV3Schema)
		}
	}
	sort.Slice(rules, func(i, j int) bool { return rules[i].at < rules[j].at })
	return rules
}

// readsAField matches a CEL rule that reads a field of self or oldSelf
// (self.spec, has(self.x)), not one that only calls a method of it
// (self.matches(...)): such a rule sits above the field it checks.
var readsAField = regexp.MustCompile(`\b(?:self|oldSelf)\.[A-Za-z_][A-Za-z0-9_]*\b\s*(?:[^\s(]|$)`)

// xValidation matches an XValidation marker and captures its rule.
var xValidation = regexp.MustCompile(`\+kubebuilder:validation:XValidation:rule="((?:[^"\\]|\\.)*)"(.*)$`)

// marker is one XValidation marker of a file.
type marker struct {
	at, rule     string // file:line, the rule as CEL reads it
	hasFieldPath bool
}

// xValidationMarkers returns the XValidation markers of the files under
// root whose names end in suffix.
func xValidationMarkers(t *testing.T, root, suffix string) []marker {
	t.Helper()
	var markers []marker
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, suffix) {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			m := xValidation.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			rule, err := strconv.Unquote(`"` + m[1] + `"`)
			if err != nil {
				return fmt.Errorf("%s:%d: the rule of an XValidation marker: %w", path, i+1, err)
			}
			markers = append(markers, marker{at: filepath.ToSlash(path) + ":" + strconv.Itoa(i+1), rule: rule, hasFieldPath: strings.Contains(m[2], "fieldPath=")})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return markers
}

// TestCELRulesNameTheirField checks that every XValidation marker of the
// examples' types and of the scaffold's templates that reads a field of
// self (so sits above the field it checks) gives a fieldPath, and that
// every CEL rule of the examples' CRDs that sits on an object, reads a
// field of it and comes from such a marker has one (a CRD not regenerated
// lacks it). The CRDs hold rules of Kubernetes' own types too (the Job
// template of the CronJob): those are not the examples' to change.
func TestCELRulesNameTheirField(t *testing.T) {
	ours := map[string]bool{}
	for _, tree := range []struct{ root, suffix string }{
		{"../../examples", "_types.go"},
		{"internal/scaffold/templates", ".tmpl"},
	} {
		markers := xValidationMarkers(t, tree.root, tree.suffix)
		if len(markers) == 0 {
			t.Errorf("%s: no XValidation markers found: nothing was checked", tree.root)
		}
		var missing []string
		for _, m := range markers {
			ours[m.rule] = true
			if readsAField.MatchString(m.rule) && !m.hasFieldPath {
				missing = append(missing, m.at+": "+m.rule)
			}
		}
		if len(missing) > 0 {
			t.Errorf("XValidation markers that read a field of self without a fieldPath, whose refusal names no field below the rule:\n%s", strings.Join(missing, "\n"))
		}
	}

	checked := 0
	for _, ex := range examples() {
		crds, err := ex.CRDs()
		if err != nil {
			t.Fatalf("%s: %v", ex.Name, err)
		}
		for _, crd := range crds {
			var missing []string
			for _, r := range objectRules(crd) {
				if !ours[r.rule] || !readsAField.MatchString(r.rule) {
					continue
				}
				checked++
				if !r.hasFieldPath {
					missing = append(missing, r.at+": "+r.rule)
				}
			}
			if len(missing) > 0 {
				t.Errorf("%s: rules on an object without a fieldPath, whose refusal names no field below it:\n%s", ex.Name, strings.Join(missing, "\n"))
			}
		}
	}
	if checked == 0 {
		t.Error("the examples' CRDs have no rule of theirs on an object: nothing was checked")
	}
}

// TestReadsAField pins which rules the marker check takes as reading a
// field of self.
func TestReadsAField(t *testing.T) {
	tests := []struct {
		rule string
		want bool
	}{
		{"self.metadata.name.size() <= 52", true},
		{"size(self.metadata.name) <= 63", true},
		{"has(self.spec.outputSecret) || self.metadata.name.size() <= 246", true},
		{"has(self.configMapName) == has(oldSelf.configMapName)", true},
		{"self == oldSelf", false},
		{"self.matches('^[a-z]+$')", false},
		{"self.matches ('^[a-z]+$')", false},
		{"size(self) <= 3", false},
	}
	var got, want []string
	for _, tt := range tests {
		if readsAField.MatchString(tt.rule) {
			got = append(got, tt.rule)
		}
		if tt.want {
			want = append(want, tt.rule)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules that read a field of self (-want +got):\n%s", diff)
	}
}

// cause is what a test reads of one cause of a 422.
type cause struct {
	Field, Type string
}

// TestExampleRuleRefusalsNameTheField installs the examples' CRDs on a real
// API server and breaks each CEL rule that sits above the field it checks:
// the 422 has one cause, on the field the rule is about, carrying the
// rule's message. A rule about the object's name names metadata (see
// above).
func TestExampleRuleRefusalsNameTheField(t *testing.T) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, ex := range examples() {
		got, err := ex.CRDs()
		if err != nil {
			t.Fatalf("%s: %v", ex.Name, err)
		}
		crds = append(crds, got...)
	}
	cp := bosuntest.Start(t, controlplane.Options{CRDs: crds})
	c, ns := cp.Client, bosuntest.Namespace(t, cp.Client)

	obj := func(apiVersion, kind, name string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"namespace": ns, "name": name},
			"spec":     spec,
		}}
	}
	jobTemplate := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"restartPolicy": "OnFailure",
		"containers":    []any{map[string]any{"name": "job", "image": "busybox"}},
	}}}}
	long := func(n int) string { return strings.Repeat("n", n) }

	tests := []struct {
		name string
		// first is created and must be admitted; then, when second is
		// set, it is updated to second.
		first, second *unstructured.Unstructured
		want          cause
		message       string
	}{
		{
			name:    "cronjob v1: name",
			first:   obj("cronjob.bosun.dev/v1", "CronJob", long(53), map[string]any{"schedule": "*/5 * * * *", "jobTemplate": jobTemplate}),
			want:    cause{"metadata", "FieldValueInvalid"},
			message: "metadata.name must be at most 52 characters",
		},
		{
			name:    "cronjob v2: name",
			first:   obj("cronjob.bosun.dev/v2", "CronJob", long(53), map[string]any{"schedule": map[string]any{"minute": "0"}, "jobTemplate": jobTemplate}),
			want:    cause{"metadata", "FieldValueInvalid"},
			message: "metadata.name must be at most 52 characters",
		},
		{
			name:    "memcached: name",
			first:   obj("cache.example.bosun.dev/v1alpha1", "Memcached", "1cache", map[string]any{"size": int64(1)}),
			want:    cause{"metadata", "FieldValueInvalid"},
			message: "the name of a Memcached names its Service",
		},
		{
			name:    "site: name",
			first:   obj("site.bosun.dev/v1alpha1", "Site", "1site", map[string]any{"title": "t", "pages": []any{"index"}}),
			want:    cause{"metadata", "FieldValueInvalid"},
			message: "the name of a Site names its Service",
		},
		{
			name:    "rwexternal: a long name needs spec.outputSecret",
			first:   obj("rwexternal.bosun.dev/v1alpha1", "RWExternal", long(247), map[string]any{"inputSecret": "in"}),
			want:    cause{"spec.outputSecret", "FieldValueRequired"},
			message: "names longer than 246 characters need spec.outputSecret",
		},
		{
			name:    "rwexternal: spec.outputSecret is immutable",
			first:   obj("rwexternal.bosun.dev/v1alpha1", "RWExternal", "rw", map[string]any{"inputSecret": "in", "outputSecret": "out"}),
			second:  obj("rwexternal.bosun.dev/v1alpha1", "RWExternal", "rw", map[string]any{"inputSecret": "in", "outputSecret": "other"}),
			want:    cause{"spec.outputSecret", "FieldValueInvalid"},
			message: "outputSecret is immutable",
		},
		{
			name:    "hello: spec.configMapName is immutable",
			first:   obj("hello.bosun.dev/v1alpha1", "Greeting", "hi", map[string]any{"name": "crew", "configMapName": "first"}),
			second:  obj("hello.bosun.dev/v1alpha1", "Greeting", "hi", map[string]any{"name": "crew", "configMapName": "second"}),
			want:    cause{"spec.configMapName", "FieldValueInvalid"},
			message: "configMapName is immutable",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Create(t.Context(), tt.first)
			if tt.second != nil {
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				tt.second.SetResourceVersion(tt.first.GetResourceVersion())
				err = c.Update(t.Context(), tt.second)
			}
			var status apierrors.APIStatus
			if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
				t.Fatalf("error %v, want a 422 Invalid with causes", err)
			}
			var got []cause
			for _, cs := range status.Status().Details.Causes {
				got = append(got, cause{cs.Field, string(cs.Type)})
				if !strings.Contains(cs.Message, tt.message) {
					t.Errorf("cause on %q: message %q, want it to contain %q", cs.Field, cs.Message, tt.message)
				}
			}
			if diff := cmp.Diff([]cause{tt.want}, got); diff != "" {
				t.Errorf("causes of %v (-want +got):\n%s", err, diff)
			}
		})
	}
}
