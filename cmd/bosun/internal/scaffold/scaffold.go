package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"
)

//go:embed templates
var templates embed.FS

// ErrInvalid is wrapped by the errors of arguments that cannot make a
// project or a kind.
var ErrInvalid = errors.New("invalid scaffold arguments")

// Project describes an operator module: bosun init writes it, and keeps it
// in the file PROJECT for bosun create api.
type Project struct {
	// Name names the operator: its binary, Lease and namespace prefix.
	Name string `json:"name"`
	// Repo is the Go module path.
	Repo string `json:"repo"`
	// Domain is the domain of the API groups (shop.example.com for the
	// group shop and the domain example.com).
	Domain string `json:"domain"`
}

// InitOptions are what Init needs besides the Project.
type InitOptions struct {
	// BosunVersion is the version of github.com/bosunkit/bosun go.mod
	// requires.
	BosunVersion string
	// BosunReplace, when set, replaces the module by this directory.
	BosunReplace string
	// GoVersion is the go directive of go.mod.
	GoVersion string
}

var (
	dns1123   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	domainRE  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`)
	kindRE    = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	versionRE = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)
	groupRE   = regexp.MustCompile(`^[a-z]([a-z0-9]*)$`)
)

// Init writes a new operator module into dir, which must not hold a
// go.mod.
func Init(dir string, p Project, o InitOptions) error {
	switch {
	case p.Repo == "":
		return fmt.Errorf("%w: --repo is empty: give the Go module path, such as github.com/me/%s", ErrInvalid, p.Name)
	case !dns1123.MatchString(p.Name):
		return fmt.Errorf("%w: name %q must be lower-case letters, digits and dashes", ErrInvalid, p.Name)
	case !domainRE.MatchString(p.Domain):
		return fmt.Errorf("%w: --domain %q is not a DNS domain such as example.com", ErrInvalid, p.Domain)
	case o.BosunVersion == "":
		return fmt.Errorf("%w: no version of bosun to require: pass --bosun-version or --bosun-replace", ErrInvalid)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		return fmt.Errorf("%w: %s already holds a go.mod: bosun init starts a new module", ErrInvalid, dir)
	}
	data := map[string]any{
		"Name": p.Name, "Repo": p.Repo, "Domain": p.Domain,
		"BosunVersion": o.BosunVersion, "BosunReplace": o.BosunReplace, "GoVersion": o.GoVersion,
	}
	files := []struct{ tmpl, path string }{
		{"go.mod", "go.mod"},
		{"gitignore", ".gitignore"},
		{"PROJECT", "PROJECT"},
		{"Makefile", "Makefile"},
		{"README.md", "README.md"},
		{"main.go", "cmd/main.go"},
		{"crd.go", "config/crd/crd.go"},
		{"crd-kustomization.yaml", "config/crd/kustomization.yaml"},
		{"samples.go", "config/samples/samples.go"},
		{"samples-kustomization.yaml", "config/samples/kustomization.yaml"},
		{"role.yaml", "config/rbac/role.yaml"},
		{"role_binding.yaml", "config/rbac/role_binding.yaml"},
		{"service_account.yaml", "config/rbac/service_account.yaml"},
		{"leader_election_role.yaml", "config/rbac/leader_election_role.yaml"},
		{"leader_election_role_binding.yaml", "config/rbac/leader_election_role_binding.yaml"},
		{"rbac-kustomization.yaml", "config/rbac/kustomization.yaml"},
		{"manager.yaml", "config/manager/manager.yaml"},
		{"manager-kustomization.yaml", "config/manager/kustomization.yaml"},
		{"default-kustomization.yaml", "config/default/kustomization.yaml"},
	}
	for _, f := range files {
		if err := write(dir, f.path, "templates/init/"+f.tmpl+".tmpl", data, false); err != nil {
			return err
		}
	}
	return nil
}

// API describes a kind that CreateAPI adds.
type API struct {
	Group, Version, Kind string
}

// CreateAPI adds a kind to the operator module in dir: its types, CRD,
// sample, controller with a step, a unit test and an envtest test, and
// registers it in cmd/main.go and the manifests.
func CreateAPI(dir string, a API) error {
	raw, err := os.ReadFile(filepath.Join(dir, "PROJECT"))
	if err != nil {
		return fmt.Errorf("%w: %s is not a project of bosun init (reading PROJECT: %w)", ErrInvalid, dir, err)
	}
	var p Project
	if err := yaml.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("%w: reading PROJECT: %w", ErrInvalid, err)
	}
	switch {
	case !groupRE.MatchString(a.Group):
		return fmt.Errorf("%w: --group %q must be lower-case letters and digits, such as shop", ErrInvalid, a.Group)
	case !versionRE.MatchString(a.Version):
		return fmt.Errorf("%w: --version %q is not a Kubernetes API version such as v1 or v1alpha1", ErrInvalid, a.Version)
	case !kindRE.MatchString(a.Kind):
		return fmt.Errorf("%w: --kind %q must be CamelCase letters and digits, starting with a capital, such as Shop", ErrInvalid, a.Kind)
	}
	lower := strings.ToLower(a.Kind)
	plural := pluralize(lower)
	data := map[string]any{
		"Project": p.Name, "Repo": p.Repo, "Domain": p.Domain,
		"Group": a.Group, "Version": a.Version, "Kind": a.Kind,
		"Lower": lower, "Plural": plural, "Alias": a.Group + a.Version,
	}
	types := filepath.Join("api", a.Version, lower+"_types.go")
	if _, err := os.Stat(filepath.Join(dir, types)); err == nil {
		return fmt.Errorf("%w: kind %s already exists (%s)", ErrInvalid, a.Kind, types)
	}
	files := []struct {
		tmpl, path string
		once       bool // written only when missing
	}{
		{"groupversion_info.go", filepath.Join("api", a.Version, "groupversion_info.go"), true},
		{"types.go", types, false},
		{"deepcopy.go", filepath.Join("api", a.Version, "zz_generated."+lower+".deepcopy.go"), false},
		{"crd.yaml", filepath.Join("config", "crd", a.Group+"."+p.Domain+"_"+plural+".yaml"), false},
		{"sample.yaml", filepath.Join("config", "samples", a.Group+"_"+a.Version+"_"+lower+".yaml"), false},
		{"controller.go", filepath.Join("internal", "controller", lower+"_controller.go"), false},
		{"controller_test.go", filepath.Join("internal", "controller", lower+"_controller_test.go"), false},
		{"envtest_test.go", filepath.Join("internal", "controller", lower+"_envtest_test.go"), false},
	}
	for _, f := range files {
		if err := write(dir, f.path, "templates/api/"+f.tmpl+".tmpl", data, f.once); err != nil {
			return err
		}
	}
	alias := a.Group + a.Version
	edits := []struct {
		path, marker, line string
	}{
		{"cmd/main.go", "// +bosun:scaffold:imports", fmt.Sprintf("%s %q", alias, p.Repo+"/api/"+a.Version)},
		{"cmd/main.go", "// +bosun:scaffold:imports", fmt.Sprintf("%q", p.Repo+"/internal/controller")},
		{"cmd/main.go", "// +bosun:scaffold:scheme", alias + ".AddToScheme,"},
		{"cmd/main.go", "// +bosun:scaffold:setup", "controller.Setup" + a.Kind + "WithManager,"},
		{"config/crd/kustomization.yaml", "# +bosun:scaffold:crds", "- " + a.Group + "." + p.Domain + "_" + plural + ".yaml"},
		{"config/samples/kustomization.yaml", "# +bosun:scaffold:samples", "- " + a.Group + "_" + a.Version + "_" + lower + ".yaml"},
		{"config/rbac/role.yaml", "# +bosun:scaffold:rules", fmt.Sprintf(
			"- apiGroups: [%s.%s]\n  resources: [%s]\n  verbs: [get, list, watch, update, patch]\n"+
				"- apiGroups: [%s.%s]\n  resources: [%s/status]\n  verbs: [get, update, patch]\n"+
				"- apiGroups: [%s.%s]\n  resources: [%s/finalizers]\n  verbs: [update]",
			a.Group, p.Domain, plural, a.Group, p.Domain, plural, a.Group, p.Domain, plural)},
	}
	if !strings.Contains(mustRead(dir, "config/rbac/role.yaml"), "resources: [configmaps]") {
		edits = append(edits, struct{ path, marker, line string }{"config/rbac/role.yaml", "# +bosun:scaffold:rules",
			"- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get, list, watch, create, update, patch, delete]"})
	}
	for _, e := range edits {
		if err := insert(dir, e.path, e.marker, e.line); err != nil {
			return err
		}
	}
	return nil
}

// mustRead returns the file's content, or "" when it cannot be read.
func mustRead(dir, path string) string {
	b, _ := os.ReadFile(filepath.Join(dir, path))
	return string(b)
}

// pluralize makes the resource name of a lower-case kind.
func pluralize(s string) string {
	switch {
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	case strings.HasSuffix(s, "y") && len(s) > 1 && !strings.ContainsRune("aeiou", rune(s[len(s)-2])):
		return s[:len(s)-1] + "ies"
	}
	return s + "s"
}

// write renders the template tmpl with data into dir/path, formatting Go
// files; with once, an existing file is kept.
func write(dir, path, tmpl string, data any, once bool) error {
	full := filepath.Join(dir, path)
	if _, err := os.Stat(full); err == nil && once {
		return nil
	}
	text, err := templates.ReadFile(tmpl)
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	t, err := template.New(path).Option("missingkey=error").Parse(string(text))
	if err != nil {
		return fmt.Errorf("scaffold: template %s: %w", tmpl, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return fmt.Errorf("scaffold: template %s: %w", tmpl, err)
	}
	out := b.Bytes()
	if strings.HasSuffix(path, ".go") {
		if out, err = format.Source(out); err != nil {
			return fmt.Errorf("scaffold: formatting %s: %w", path, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	if err := os.WriteFile(full, out, 0o644); err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	return nil
}

// insert adds line above the marker in dir/path, unless the file holds it
// already, keeping the marker's indentation; Go files are formatted.
func insert(dir, path, marker, line string) error {
	full := filepath.Join(dir, path)
	raw, err := os.ReadFile(full)
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	text := string(raw)
	i := strings.Index(text, marker)
	if i < 0 {
		return fmt.Errorf("%w: %s has no %q line, where bosun adds the new kind: add it back", ErrInvalid, path, marker)
	}
	start := strings.LastIndex(text[:i], "\n") + 1
	indent := text[start:i]
	var lines []string
	for _, l := range strings.Split(line, "\n") {
		lines = append(lines, indent+l)
	}
	if strings.Contains(text, "\n"+strings.Join(lines, "\n")+"\n") {
		return nil
	}
	text = text[:start] + strings.Join(lines, "\n") + "\n" + text[start:]
	out := []byte(text)
	if strings.HasSuffix(path, ".go") {
		if out, err = format.Source(out); err != nil {
			return fmt.Errorf("scaffold: formatting %s: %w", path, err)
		}
	}
	return os.WriteFile(full, out, 0o644)
}
