package scaffold

import (
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Versions returns the versions of the project in dir that hold kind, in
// order (api/<version>/<kind>_types.go): none when it has no such kind.
func Versions(dir, kind string) ([]string, error) {
	matches, err := fs.Glob(os.DirFS(dir), "api/*/"+strings.ToLower(kind)+"_types.go")
	if err != nil {
		return nil, fmt.Errorf("scaffold: %w", err)
	}
	var out []string
	for _, m := range matches {
		out = append(out, path.Base(path.Dir(m)))
	}
	slices.Sort(out)
	return out, nil
}

// hubRE matches the Hub method that makes a version the hub of a kind.
func hubRE(kind string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^func \((\w+ )?\*` + kind + `\) Hub\(\)`)
}

// hub returns the hub of kind among its versions: the version that
// declares a Hub method for it, or its only version when none does.
func hub(dir, kind string, versions []string) (string, error) {
	re := hubRE(kind)
	var hubs []string
	for _, v := range versions {
		files, err := filepath.Glob(filepath.Join(dir, "api", v, "*.go"))
		if err != nil {
			return "", fmt.Errorf("scaffold: %w", err)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				return "", fmt.Errorf("scaffold: %w", err)
			}
			if re.Match(raw) {
				hubs = append(hubs, v)
				break
			}
		}
	}
	switch {
	case len(hubs) == 1:
		return hubs[0], nil
	case len(hubs) > 1:
		return "", fmt.Errorf("%w: %s has a Hub method in %s: one version is the hub", ErrInvalid, kind, strings.Join(hubs, " and "))
	case len(versions) == 1:
		return versions[0], nil
	}
	return "", fmt.Errorf("%w: %s is in %s but none of them is its hub: give one of them a Hub method (see api/<version>/%s_conversion.go)",
		ErrInvalid, kind, strings.Join(versions, ", "), strings.ToLower(kind))
}

// groupOf returns the API group of api/<version>, from its +groupName.
func groupOf(dir, version string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "api", version, "groupversion_info.go"))
	if err != nil {
		return "", fmt.Errorf("scaffold: %w", err)
	}
	m := groupNameRE.FindSubmatch(raw)
	if m == nil {
		return "", fmt.Errorf("%w: api/%s/groupversion_info.go has no +groupName marker", ErrInvalid, version)
	}
	return string(m[1]), nil
}

// storageVersionRE matches the marker that makes a version the one the
// API server stores.
var storageVersionRE = regexp.MustCompile(`(?m)^// \+kubebuilder:storageversion\n`)

// createVersion adds version a.Version to a kind the project has in the
// versions given: its types, a copy of the hub's with the same spec and
// status, converted to and from the hub by the methods of
// <kind>_conversion.go, with a round-trip test; the hub (its only version
// so far, when it has no other) gets a Hub method and becomes the stored
// version. The new version is added to the scheme of cmd/main.go; the
// controller stays the hub's.
func createVersion(dir string, p Project, a API, lower string, versions []string) error {
	if a.DSL || len(a.Owns) > 0 || a.ShortName != "" {
		return fmt.Errorf("%w: %s is in api/%s: a new version of it takes its spec, short name and controller from there; --owns, --dsl and --short-name are for a new kind",
			ErrInvalid, a.Kind, strings.Join(versions, ", api/"))
	}
	hubVersion, err := hub(dir, a.Kind, versions)
	if err != nil {
		return err
	}
	group, err := groupOf(dir, hubVersion)
	if err != nil {
		return err
	}
	if want := a.Group + "." + p.Domain; group != want {
		return fmt.Errorf("%w: %s is in the group %s (api/%s), not %s", ErrInvalid, a.Kind, group, hubVersion, want)
	}
	hubTypes := filepath.Join("api", hubVersion, lower+"_types.go")
	raw, err := os.ReadFile(filepath.Join(dir, hubTypes))
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	if !strings.Contains(string(raw), "\ntype "+a.Kind+" struct {") {
		return fmt.Errorf("%w: %s has no line %q, above which the version stored is marked", ErrInvalid, hubTypes, "type "+a.Kind+" struct {")
	}
	if err := hasMarkers(dir, "cmd/main.go", "// +bosun:scaffold:imports", "// +bosun:scaffold:scheme"); err != nil {
		return err
	}
	// The new version's types: the hub's, in their own package, not
	// stored.
	pkgRE := regexp.MustCompile(`(?m)^package ` + regexp.QuoteMeta(hubVersion) + `$`)
	if !pkgRE.Match(raw) {
		return fmt.Errorf("%w: %s is not in the package %s", ErrInvalid, hubTypes, hubVersion)
	}
	types := pkgRE.ReplaceAll(raw, []byte("package "+a.Version))
	types = storageVersionRE.ReplaceAll(types, nil)
	if types, err = format.Source(types); err != nil {
		return fmt.Errorf("scaffold: formatting the types of %s %s: %w", a.Kind, a.Version, err)
	}
	data := map[string]any{
		"Repo": p.Repo, "Domain": p.Domain, "Group": a.Group, "Version": a.Version, "Kind": a.Kind, "Lower": lower,
		"Hub": hubVersion, "HubAlias": a.Group + hubVersion,
	}
	if err := render(dir, []file{
		{tmpl: "api/groupversion_info.go", path: filepath.Join("api", a.Version, "groupversion_info.go"), once: true},
		{tmpl: "version/hub.go", path: filepath.Join("api", hubVersion, lower+"_conversion.go"), once: true},
		{tmpl: "version/conversion.go", path: filepath.Join("api", a.Version, lower+"_conversion.go")},
		{tmpl: "version/conversion_test.go", path: filepath.Join("api", a.Version, lower+"_conversion_test.go")},
	}, data); err != nil {
		return err
	}
	if err := writeFile(dir, filepath.Join("api", a.Version, lower+"_types.go"), types); err != nil {
		return err
	}
	if err := insert(dir, hubTypes, "type "+a.Kind+" struct {", "// +kubebuilder:storageversion"); err != nil {
		return err
	}
	alias := a.Group + a.Version
	if err := insert(dir, "cmd/main.go", "// +bosun:scaffold:imports", fmt.Sprintf("%s %q", alias, p.Repo+"/api/"+a.Version)); err != nil {
		return err
	}
	return insert(dir, "cmd/main.go", "// +bosun:scaffold:scheme", alias+".AddToScheme,")
}
