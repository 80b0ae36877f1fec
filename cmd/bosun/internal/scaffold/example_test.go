package scaffold_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/bosunkit/bosun/cmd/bosun/internal/scaffold"
)

// A project with one kind, as `bosun init --kind Widget` writes it before
// it runs the generators (scaffold.Generate), which add the deep copies,
// the CRD and the role from the markers.
func Example() {
	dir, err := os.MkdirTemp("", "shop")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	p := scaffold.Project{Name: "shop", Repo: "github.com/me/shop", Domain: "example.com"}
	if err := scaffold.Init(dir, p, scaffold.InitOptions{BosunVersion: "v0.3.0", GoVersion: "1.26.0"}); err != nil {
		panic(err)
	}
	if err := scaffold.CreateAPI(dir, scaffold.API{Group: "shop", Version: "v1", Kind: "Widget"}); err != nil {
		panic(err)
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			fmt.Println(filepath.ToSlash(rel))
		}
		return err
	})
	// Output:
	// .gitignore
	// Makefile
	// PROJECT
	// README.md
	// api/v1/groupversion_info.go
	// api/v1/widget_types.go
	// cmd/dev.go
	// cmd/main.go
	// config/crd/crd.go
	// config/crd/kustomization.yaml
	// config/default/kustomization.yaml
	// config/manager/kustomization.yaml
	// config/manager/manager.yaml
	// config/rbac/kustomization.yaml
	// config/rbac/leader_election_role.yaml
	// config/rbac/leader_election_role_binding.yaml
	// config/rbac/role.yaml
	// config/rbac/role_binding.yaml
	// config/rbac/service_account.yaml
	// config/samples/kustomization.yaml
	// config/samples/samples.go
	// config/samples/shop_v1_widget.yaml
	// go.mod
	// internal/controller/doc.go
	// internal/controller/widget_controller.go
	// internal/controller/widget_controller_test.go
	// internal/controller/widget_envtest_test.go
	// internal/controller/widget_sample_test.go
}

// The webhooks of a kind, as `bosun create webhook --kind Widget
// --defaulting --programmatic-validation` writes them before it runs the
// generators, which write config/webhook/manifests.yaml from the markers.
func ExampleCreateWebhook() {
	dir, err := os.MkdirTemp("", "shop")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	p := scaffold.Project{Name: "shop", Repo: "github.com/me/shop", Domain: "example.com"}
	if err := scaffold.Init(dir, p, scaffold.InitOptions{BosunVersion: "v0.3.0", GoVersion: "1.26.0"}); err != nil {
		panic(err)
	}
	if err := scaffold.CreateAPI(dir, scaffold.API{Group: "shop", Version: "v1", Kind: "Widget"}); err != nil {
		panic(err)
	}
	before := map[string]bool{}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		before[path] = true
		return err
	})
	if err := scaffold.CreateWebhook(dir, scaffold.Webhook{Kind: "Widget", Defaulting: true, Validation: true}); err != nil {
		panic(err)
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !before[path] {
			rel, _ := filepath.Rel(dir, path)
			fmt.Println(filepath.ToSlash(rel))
		}
		return err
	})
	// Output:
	// config/certmanager/certificate.yaml
	// config/certmanager/issuer.yaml
	// config/certmanager/kustomization.yaml
	// config/certmanager/kustomizeconfig.yaml
	// config/default/webhook_manager_args_patch.yaml
	// config/default/webhook_manager_patch.yaml
	// config/webhook/kustomization.yaml
	// config/webhook/service.yaml
	// config/webhook/webhook.go
	// internal/controller/widget_webhook.go
	// internal/controller/widget_webhook_test.go
}
