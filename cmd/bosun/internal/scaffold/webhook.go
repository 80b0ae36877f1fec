package scaffold

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// ErrWebhookExists is wrapped by the error of CreateWebhook for a webhook
// the kind has already.
var ErrWebhookExists = errors.New("the kind has that webhook already")

// Webhook describes the webhooks CreateWebhook adds to a kind.
type Webhook struct {
	// Group and Version name the kind's group (before the domain) and its
	// hub version; empty means the kind's. The webhooks of a kind of
	// several versions are its hub's: the API server converts the others
	// to it before it calls them.
	Group, Version string
	// Kind is the kind, which the project has already.
	Kind string
	// Defaulting adds a defaulting (mutating) webhook, with a default of
	// its own for a field of the spec and a test of it.
	Defaulting bool
	// Validation adds a validating webhook, with a rule of its own that
	// refuses a field of the spec with a field error, and a test of it.
	Validation bool
	// Conversion points the kind's CRD at the conversion webhook, which
	// the manager serves for a hub with spokes, and adds a test that the
	// API server converts through it. The kind must have two versions.
	Conversion bool
}

// specField is the field of a kind's spec that the scaffolded defaulting
// and validating webhooks are about: the first of these the spec has.
type specField struct {
	// Name is the Go name, JSON the JSON name, Type the Go type.
	Name, JSON, Type string
	// Zero is the field's zero value, Default the default the defaulting
	// webhook gives it, in Go; Why says what the default is.
	Zero, Default, Why string
	// Invalid is a value the validating webhook refuses (empty: the rule
	// is about updates).
	Invalid string
}

// refused names what the validating webhook refuses, for its test's name.
func (f specField) refused() string {
	if f.Invalid == "" {
		return "a change of spec." + f.JSON
	}
	return "a wrong spec." + f.JSON
}

// webhookFields are the fields of a scaffolded spec (see API.Owns) that
// the webhooks know, in the order they are chosen.
var webhookFields = []specField{
	{Name: "Port", JSON: "port", Type: "int32", Zero: "0", Default: "8080", Why: "the port of a {{.Kind}} that sets none"},
	{Name: "Image", JSON: "image", Type: "string", Zero: `""`, Default: `"registry.k8s.io/pause:3.10"`, Invalid: `"registry.k8s.io/pause:latest"`,
		Why: "the image of a {{.Kind}} that names none: change it to your operand's"},
	{Name: "Message", JSON: "message", Type: "string", Zero: `""`, Default: `"Hello from {{.Project}}"`, Invalid: `" padded "`,
		Why: "the message of a {{.Kind}} that sets none"},
}

// CreateWebhook adds webhooks to a kind of the operator module in dir: in
// internal/controller/<kind>_webhook.go, Setup<Kind>WebhookWithManager
// (registered in cmd/main.go) and the functions of the webhooks asked for,
// with the +kubebuilder:webhook markers controller-gen writes
// config/webhook/manifests.yaml from; in <kind>_webhook_test.go, a test of
// each against a real API server. The first webhook of the project also
// writes config/webhook (the Service, and webhook.go, which embeds the
// configurations for --dev and the tests), config/certmanager (an Issuer
// and the serving Certificate) and the patches and replacements of
// config/default that mount the certificate into the manager and make the
// API server trust it. Conversion also patches the kind's CRD.
//
// A kind that has webhooks gets more: CreateWebhook adds to its files. It
// refuses, writing nothing, a webhook the kind has already
// (ErrWebhookExists). The configurations are generated afterwards: see
// Generate.
func CreateWebhook(dir string, w Webhook) error {
	p, err := ReadProject(dir)
	if err != nil {
		return err
	}
	switch {
	case !w.Defaulting && !w.Validation && !w.Conversion:
		return fmt.Errorf("%w: which webhooks? give --defaulting, --programmatic-validation or --conversion", ErrInvalid)
	case !kindRE.MatchString(w.Kind):
		return fmt.Errorf("%w: --kind %q must be CamelCase letters and digits starting with a capital, such as Shop", ErrInvalid, w.Kind)
	case w.Group != "" && !groupRE.MatchString(w.Group):
		return fmt.Errorf("%w: --group %q must be lower-case letters and digits, such as shop", ErrInvalid, w.Group)
	}
	lower := strings.ToLower(w.Kind)
	versions, err := Versions(dir, w.Kind)
	if err != nil {
		return err
	}
	if len(versions) == 0 {
		return fmt.Errorf("%w: the project has no kind %s: add it with bosun create api first", ErrInvalid, w.Kind)
	}
	hubVersion, err := hub(dir, w.Kind, versions)
	if err != nil {
		return err
	}
	switch {
	case w.Version != "" && !slices.Contains(versions, w.Version):
		return fmt.Errorf("%w: %s has no version %s: it has %s", ErrInvalid, w.Kind, w.Version, strings.Join(versions, ", "))
	case w.Version != "" && w.Version != hubVersion:
		return fmt.Errorf("%w: the webhooks of %s are its hub's, %s, to which the API server converts every version before it calls them: give --version %s",
			ErrInvalid, w.Kind, hubVersion, hubVersion)
	case w.Conversion && len(versions) < 2:
		return fmt.Errorf("%w: %s has one version, %s, and nothing to convert: add another with bosun create api --version first", ErrInvalid, w.Kind, hubVersion)
	}
	group, err := groupOf(dir, hubVersion)
	if err != nil {
		return err
	}
	if w.Group != "" && group != w.Group+"."+p.Domain {
		return fmt.Errorf("%w: %s is in the group %s, not %s", ErrInvalid, w.Kind, group, w.Group+"."+p.Domain)
	}
	shortGroup := strings.TrimSuffix(group, "."+p.Domain)
	types := filepath.Join("api", hubVersion, lower+"_types.go")
	plural, err := resourceOf(dir, types, lower)
	if err != nil {
		return err
	}

	goFile := filepath.Join("internal", "controller", lower+"_webhook.go")
	testFile := filepath.Join("internal", "controller", lower+"_webhook_test.go")
	conversionPatch := filepath.Join("config", "crd", "patches", "conversion_"+plural+".yaml")
	has, err := webhooksOf(dir, goFile)
	if err != nil {
		return err
	}
	has["conversion"] = exists(dir, conversionPatch)
	for _, c := range []struct {
		asked      bool
		name, what string
		where      string
	}{
		{w.Defaulting, "defaulting", "has a defaulting webhook", goFile},
		{w.Validation, "validation", "has a validating webhook", goFile},
		{w.Conversion, "conversion", "converts through the conversion webhook", conversionPatch},
	} {
		if c.asked && has[c.name] {
			return fmt.Errorf("%w: %s %s already (%s): ask for the webhooks it lacks", ErrWebhookExists, w.Kind, c.what, c.where)
		}
	}
	var f specField
	if w.Defaulting || w.Validation {
		if f, err = fieldOf(dir, types, w.Kind); err != nil {
			return err
		}
		// The field's texts name the kind and the project.
		names := strings.NewReplacer("{{.Kind}}", w.Kind, "{{.Project}}", p.Name)
		f.Default, f.Why = names.Replace(f.Default), names.Replace(f.Why)
	}
	var spokes []map[string]string
	for _, v := range versions {
		if v != hubVersion {
			spokes = append(spokes, map[string]string{"Version": v, "Alias": shortGroup + v})
		}
	}
	alias := shortGroup + hubVersion
	data := map[string]any{
		"Project": p.Name, "Repo": p.Repo, "Domain": p.Domain, "Group": shortGroup, "GroupName": group,
		"GroupPath": strings.ReplaceAll(group, ".", "-"), "Version": hubVersion, "Kind": w.Kind, "Lower": lower,
		"Plural": plural, "Alias": alias, "Spokes": spokes, "Field": f,
	}

	// Refuse, before writing anything, files that lack the lines bosun
	// adds to.
	defaultKustomization := filepath.Join("config", "default", "kustomization.yaml")
	webhookKustomization := filepath.Join("config", "webhook", "kustomization.yaml")
	crdKustomization := filepath.Join("config", "crd", "kustomization.yaml")
	firstWebhook := !exists(dir, webhookKustomization)
	checks := map[string][]string{
		"cmd/main.go": {"// +bosun:scaffold:imports", "// +bosun:scaffold:setup", "// +bosun:scaffold:options"},
	}
	switch {
	case firstWebhook:
		checks[defaultKustomization] = []string{"# +bosun:scaffold:resources"}
		if err := checkNoPatches(dir, defaultKustomization); err != nil {
			return err
		}
	case w.Conversion:
		checks[defaultKustomization] = []string{"# +bosun:scaffold:inject-ca-namespace", "# +bosun:scaffold:inject-ca-certificate"}
	}
	if !firstWebhook && (w.Defaulting || w.Validation) {
		checks[webhookKustomization] = []string{"# +bosun:scaffold:webhooks"}
	}
	if w.Conversion {
		if err := checkCRDPatches(dir, crdKustomization); err != nil {
			return err
		}
	}
	if exists(dir, goFile) && (w.Defaulting || w.Validation) {
		checks[goFile] = []string{"// +bosun:scaffold:webhook"}
	}
	if exists(dir, testFile) {
		checks[testFile] = []string{"// +bosun:scaffold:webhooktests"}
		if w.Conversion {
			checks[testFile] = append(checks[testFile], "// +bosun:scaffold:scheme")
		}
	}
	for _, path := range slices.Sorted(maps.Keys(checks)) {
		if err := hasMarkers(dir, path, checks[path]...); err != nil {
			return err
		}
		if strings.HasSuffix(path, "_webhook.go") || strings.HasSuffix(path, "_webhook_test.go") {
			if err := appendable(dir, path); err != nil {
				return err
			}
		}
	}

	if err := webhookInfra(dir, p, data, firstWebhook); err != nil {
		return err
	}
	if err := render(dir, []file{
		{tmpl: "webhook/webhook.go", path: goFile, once: true},
		{tmpl: "webhook/webhook_test.go", path: testFile, once: true},
	}, data); err != nil {
		return err
	}
	parts := []struct {
		asked        bool
		name, field  string
		test, method string
	}{
		{w.Defaulting, "default", "Default: default" + w.Kind + ",", "defaults spec." + f.JSON, "Defaulting"},
		{w.Validation, "validate", "Validate: validate" + w.Kind + ",", "refuses " + f.refused() + " with a field error", "Validation"},
		{w.Conversion, "conversion", "", "converts between the versions", "Conversion"},
	}
	for _, part := range parts {
		if !part.asked {
			continue
		}
		if part.name != "conversion" {
			if err := appendGo(dir, goFile, "templates/webhook/"+part.name+".go.tmpl", p.Repo, data); err != nil {
				return err
			}
			if err := insert(dir, goFile, "// +bosun:scaffold:webhook", part.field); err != nil {
				return err
			}
		}
		if err := appendGo(dir, testFile, "templates/webhook/"+part.name+"_test.go.tmpl", p.Repo, data); err != nil {
			return err
		}
		run := fmt.Sprintf("t.Run(%q, func(t *testing.T) { test%s%s(t, cp.Client, ns) })", part.test, w.Kind, part.method)
		if err := insert(dir, testFile, "// +bosun:scaffold:webhooktests", run); err != nil {
			return err
		}
	}
	if w.Defaulting || w.Validation {
		if err := insert(dir, webhookKustomization, "# +bosun:scaffold:webhooks", "- manifests.yaml"); err != nil {
			return err
		}
	}
	if w.Conversion {
		if err := conversionConfig(dir, data, crdKustomization, defaultKustomization, conversionPatch); err != nil {
			return err
		}
		for _, s := range spokes {
			if err := insert(dir, testFile, "// +bosun:scaffold:scheme", s["Alias"]+".AddToScheme,"); err != nil {
				return err
			}
		}
	}
	return insert(dir, "cmd/main.go", "// +bosun:scaffold:setup", "controller.Setup"+w.Kind+"WebhookWithManager,")
}

// webhookInfra writes, for the project's first webhook, what every webhook
// needs: the Service, certificate and manager patches, config/webhook's Go
// package, and the registration of the configurations in cmd/main.go.
func webhookInfra(dir string, p Project, data map[string]any, first bool) error {
	if err := render(dir, []file{
		{tmpl: "webhook/service.yaml", path: "config/webhook/service.yaml", once: true},
		{tmpl: "webhook/kustomization.yaml", path: "config/webhook/kustomization.yaml", once: true},
		{tmpl: "webhook/configurations.go", path: "config/webhook/webhook.go", once: true},
		{tmpl: "webhook/issuer.yaml", path: "config/certmanager/issuer.yaml", once: true},
		{tmpl: "webhook/certificate.yaml", path: "config/certmanager/certificate.yaml", once: true},
		{tmpl: "webhook/certmanager-kustomization.yaml", path: "config/certmanager/kustomization.yaml", once: true},
		{tmpl: "webhook/certmanager-kustomizeconfig.yaml", path: "config/certmanager/kustomizeconfig.yaml", once: true},
		{tmpl: "webhook/manager_patch.yaml", path: "config/default/webhook_manager_patch.yaml", once: true},
		{tmpl: "webhook/manager_args_patch.yaml", path: "config/default/webhook_manager_args_patch.yaml", once: true},
	}, data); err != nil {
		return err
	}
	kustomization := filepath.Join("config", "default", "kustomization.yaml")
	if first {
		if err := insert(dir, kustomization, "# +bosun:scaffold:resources", "- ../webhook\n- ../certmanager"); err != nil {
			return err
		}
		if err := appendText(dir, kustomization, "webhook/default-kustomization.yaml", data); err != nil {
			return err
		}
	}
	if err := insert(dir, "cmd/main.go", "// +bosun:scaffold:imports", fmt.Sprintf("%q", p.Repo+"/config/webhook")); err != nil {
		return err
	}
	return insert(dir, "cmd/main.go", "// +bosun:scaffold:options", "Webhooks: webhook.Configurations,")
}

// conversionConfig points the kind's CRD at the conversion webhook: a
// patch of config/crd, and the CRD among those config/default has
// cert-manager inject the CA into.
func conversionConfig(dir string, data map[string]any, crdKustomization, defaultKustomization, patch string) error {
	if err := render(dir, []file{
		{tmpl: "webhook/crd-conversion-patch.yaml", path: patch},
		{tmpl: "webhook/crd-kustomizeconfig.yaml", path: "config/crd/kustomizeconfig.yaml", once: true},
	}, data); err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(dir, crdKustomization))
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	if !strings.Contains(string(raw), "# +bosun:scaffold:crdpatches") {
		if err := appendText(dir, crdKustomization, "webhook/crd-kustomization.yaml", data); err != nil {
			return err
		}
	}
	if err := insert(dir, crdKustomization, "# +bosun:scaffold:crdpatches", "- path: "+filepath.ToSlash(strings.TrimPrefix(patch, filepath.Join("config", "crd")+string(filepath.Separator)))); err != nil {
		return err
	}
	crd := fmt.Sprintf("%s.%s", data["Plural"], data["GroupName"])
	for i, marker := range []string{"# +bosun:scaffold:inject-ca-namespace", "# +bosun:scaffold:inject-ca-certificate"} {
		target := fmt.Sprintf("- select:\n    kind: CustomResourceDefinition\n    name: %s\n  fieldPaths:\n  - metadata.annotations.[cert-manager.io/inject-ca-from]\n  options:\n    delimiter: /\n    index: %d\n    create: true", crd, i)
		if err := insert(dir, defaultKustomization, marker, target); err != nil {
			return err
		}
	}
	return nil
}

// appendText renders the template tmpl (under templates/) with data and
// adds it to the end of dir/path.
func appendText(dir, path, tmpl string, data any) error {
	out, err := execute(path, "templates/"+tmpl+".tmpl", data)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(dir, path))
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		raw = append(raw, '\n')
	}
	return writeFile(dir, path, append(raw, out...))
}

// topLevelRE matches a top-level key of a kustomization that bosun
// create webhook would add a second time.
var topLevelRE = regexp.MustCompile(`(?m)^(patches|replacements):`)

// checkNoPatches refuses a config/default kustomization that has patches
// or replacements of its own, to which the webhooks' cannot be appended.
func checkNoPatches(dir, path string) error {
	raw, err := os.ReadFile(filepath.Join(dir, path))
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	if m := topLevelRE.Find(raw); m != nil {
		return fmt.Errorf("%w: %s has %s of its own, to which bosun cannot add the webhooks': move them into a kustomization it includes, or add the webhooks' by hand",
			ErrInvalid, path, strings.TrimSuffix(string(m), ":"))
	}
	return nil
}

// checkCRDPatches refuses a config/crd kustomization that has patches of
// its own without the line where bosun adds to them.
func checkCRDPatches(dir, path string) error {
	raw, err := os.ReadFile(filepath.Join(dir, path))
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	if strings.Contains(string(raw), "# +bosun:scaffold:crdpatches") {
		return nil
	}
	if regexp.MustCompile(`(?m)^(patches|configurations):`).Match(raw) {
		return fmt.Errorf("%w: %s has patches or configurations of its own, without the %q line where bosun adds to them",
			ErrInvalid, path, "# +bosun:scaffold:crdpatches")
	}
	return nil
}

// webhooksOf returns which of the webhooks the kind's webhook file holds,
// by the markers of their configurations.
func webhooksOf(dir, path string) (map[string]bool, error) {
	has := map[string]bool{}
	raw, err := os.ReadFile(filepath.Join(dir, path))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return has, nil
	case err != nil:
		return nil, fmt.Errorf("scaffold: %w", err)
	}
	has["defaulting"] = regexp.MustCompile(`(?m)^// \+kubebuilder:webhook:.*mutating=true`).Match(raw)
	has["validation"] = regexp.MustCompile(`(?m)^// \+kubebuilder:webhook:.*mutating=false`).Match(raw)
	return has, nil
}

// resourceRE matches the resource name in a kind's +kubebuilder:resource
// marker.
var resourceRE = regexp.MustCompile(`(?m)^// \+kubebuilder:resource:(?:.*,)?path=([a-z0-9]+)`)

// resourceOf returns the resource name of the kind of the types file: the
// path of its +kubebuilder:resource marker, or the plural of its name.
func resourceOf(dir, types, lower string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, types))
	if err != nil {
		return "", fmt.Errorf("scaffold: %w", err)
	}
	if m := resourceRE.FindSubmatch(raw); m != nil {
		return string(m[1]), nil
	}
	return pluralize(lower), nil
}

// fieldOf returns the field of the kind's spec, in the types file, that
// the scaffolded webhooks default and validate: the first of
// webhookFields that the spec has, with the same type.
func fieldOf(dir, types, kind string) (specField, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(dir, types), nil, parser.SkipObjectResolution)
	if err != nil {
		return specField{}, fmt.Errorf("scaffold: %w", err)
	}
	fields := map[string]string{} // name -> type
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != kind+"Spec" {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return false
		}
		for _, fl := range st.Fields.List {
			if id, ok := fl.Type.(*ast.Ident); ok {
				for _, name := range fl.Names {
					fields[name.Name] = id.Name
				}
			}
		}
		return false
	})
	var names []string
	for _, wf := range webhookFields {
		if fields[wf.Name] == wf.Type {
			return wf, nil
		}
		names = append(names, "spec."+wf.JSON)
	}
	return specField{}, fmt.Errorf("%w: the %sSpec of %s has none of %s, which bosun's defaulting and validating webhooks are about: write them by hand (see package webhook of bosun), or add --conversion only",
		ErrInvalid, kind, types, strings.Join(names, ", "))
}
