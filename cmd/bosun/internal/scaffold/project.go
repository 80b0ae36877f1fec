package scaffold

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Project describes an operator module: Init writes it, and keeps it in
// the file PROJECT for CreateAPI.
type Project struct {
	// Name names the operator: its binary, Lease, namespace prefix and
	// the category of its kinds.
	Name string `json:"name"`
	// Repo is the Go module path.
	Repo string `json:"repo"`
	// Domain is the domain of the API groups (shop.example.com for the
	// group shop and the domain example.com).
	Domain string `json:"domain"`
}

// InitOptions are what Init needs besides the Project.
type InitOptions struct {
	// BosunVersion is the version of github.com/bosunkit/bosun that
	// go.mod requires.
	BosunVersion string
	// BosunReplace, when set, replaces that module by this directory.
	BosunReplace string
	// GoVersion is the go directive of go.mod.
	GoVersion string
}

var (
	dns1123  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	domainRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`)
)

// Init writes a new operator module into dir, which must not hold a
// go.mod: go.mod, cmd/main.go, the Makefile, README.md, PROJECT and
// config/ (the kustomizations of the CRDs, RBAC, manager Deployment and
// samples). It has no kind yet: CreateAPI adds them.
func Init(dir string, p Project, o InitOptions) error {
	switch {
	case p.Repo == "":
		return fmt.Errorf("%w: --repo is empty: give the Go module path, such as github.com/me/%s", ErrInvalid, p.Name)
	case !dns1123.MatchString(p.Name) || len(p.Name) > 40:
		return fmt.Errorf("%w: name %q must be at most 40 lower-case letters, digits and dashes", ErrInvalid, p.Name)
	case !domainRE.MatchString(p.Domain):
		return fmt.Errorf("%w: --domain %q is not a DNS domain such as example.com", ErrInvalid, p.Domain)
	case o.BosunVersion == "":
		return fmt.Errorf("%w: no version of bosun to require: pass --bosun-version or --bosun-replace", ErrInvalid)
	case o.GoVersion == "":
		return fmt.Errorf("%w: no go version for go.mod", ErrInvalid)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		return fmt.Errorf("%w: %s: bosun init starts a new module; add kinds to this one with bosun create api", ErrModuleExists, filepath.Join(dir, "go.mod"))
	}
	data := map[string]any{
		"Name": p.Name, "Repo": p.Repo, "Domain": p.Domain,
		"BosunVersion": o.BosunVersion, "BosunReplace": o.BosunReplace, "GoVersion": o.GoVersion,
		"ControllerGen": ControllerGen, "Group": DefaultGroup(p.Name),
		// What the Makefile asks go list -m of the bosun module.
		"GoListReplace": "{{with .Replace}}{{.Dir}}{{end}}", "GoListVersion": "{{.Version}}",
	}
	return render(dir, []file{
		{tmpl: "init/go.mod", path: "go.mod"},
		{tmpl: "init/gitignore", path: ".gitignore"},
		{tmpl: "init/PROJECT", path: "PROJECT"},
		{tmpl: "init/Makefile", path: "Makefile"},
		{tmpl: "init/README.md", path: "README.md"},
		{tmpl: "init/main.go", path: "cmd/main.go"},
		{tmpl: "init/dev.go", path: "cmd/dev.go"},
		{tmpl: "init/controller-doc.go", path: "internal/controller/doc.go"},
		{tmpl: "init/crd.go", path: "config/crd/crd.go"},
		{tmpl: "init/crd-kustomization.yaml", path: "config/crd/kustomization.yaml"},
		{tmpl: "init/samples.go", path: "config/samples/samples.go"},
		{tmpl: "init/samples-kustomization.yaml", path: "config/samples/kustomization.yaml"},
		{tmpl: "init/role.yaml", path: "config/rbac/role.yaml"},
		{tmpl: "init/role_binding.yaml", path: "config/rbac/role_binding.yaml"},
		{tmpl: "init/service_account.yaml", path: "config/rbac/service_account.yaml"},
		{tmpl: "init/leader_election_role.yaml", path: "config/rbac/leader_election_role.yaml"},
		{tmpl: "init/leader_election_role_binding.yaml", path: "config/rbac/leader_election_role_binding.yaml"},
		{tmpl: "init/rbac-kustomization.yaml", path: "config/rbac/kustomization.yaml"},
		{tmpl: "init/manager.yaml", path: "config/manager/manager.yaml"},
		{tmpl: "init/manager-kustomization.yaml", path: "config/manager/kustomization.yaml"},
		{tmpl: "init/default-kustomization.yaml", path: "config/default/kustomization.yaml"},
	}, data)
}

// DefaultGroup is the API group of a project's first kind unless one is
// given: the project's name without its dashes.
func DefaultGroup(name string) string {
	return strings.ReplaceAll(name, "-", "")
}
