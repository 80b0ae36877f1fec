package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
)

// runIn runs name with args in dir and fails the test, with the output,
// when it fails.
func runIn(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// TestScaffoldEndToEnd goes from an empty directory to a running operator
// as a new user would: bosun init, bosun create api, then the new module
// builds, vets and passes its own unit and envtest tests, and bosun dev
// runs it on an embedded control plane, where its sample becomes Ready,
// until Ctrl-C.
func TestScaffoldEndToEnd(t *testing.T) {
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bosun := filepath.Join(tmp, "bosun")
	runIn(t, ".", "go", "build", "-o", bosun, ".")

	// Two commands: init with a first kind, then dev (below); a second
	// kind with create api.
	runIn(t, tmp, bosun, "init", "--domain", "example.com", "--repo", "example.com/shop", "--bosun-replace", checkout, "--kind", "Widget", "shop")
	mod := filepath.Join(tmp, "shop")
	runIn(t, mod, bosun, "create", "api", "--group", "shop", "--version", "v1", "--kind", "Gadget")
	for _, want := range []string{"cmd/main.go", "api/v1/widget_types.go", "internal/controller/widget_controller.go",
		"internal/controller/widget_controller_test.go", "internal/controller/widget_envtest_test.go",
		"config/crd/shop.example.com_widgets.yaml", "config/samples/shop_v1_widget.yaml", "config/rbac/role.yaml",
		"config/manager/manager.yaml", "config/default/kustomization.yaml", "Makefile",
		"api/v1/gadget_types.go", "internal/controller/gadget_controller.go", "config/samples/shop_v1_gadget.yaml"} {
		if _, err := os.Stat(filepath.Join(mod, want)); err != nil {
			t.Errorf("the scaffold lacks %s: %v", want, err)
		}
	}
	runIn(t, mod, "go", "build", "./...")
	runIn(t, mod, "go", "vet", "./...")
	out := runIn(t, mod, "go", "test", "./...")
	if !strings.Contains(out, "ok  \texample.com/shop/internal/controller") {
		t.Errorf("go test in the new module ran no controller tests:\n%s", out)
	}

	// The deployable manifests render, through the module's own bosun
	// (go tool bosun, as make install.yaml runs it).
	installYAML := runIn(t, mod, "go", "tool", "bosun", "manifests", "config/default")
	for _, want := range []string{"kind: Deployment", "namespace: shop-system", "name: widgets.shop.example.com",
		"name: gadgets.shop.example.com", "- gadgets/finalizers", "image: shop:dev"} {
		if !strings.Contains(installYAML, want) {
			t.Errorf("the rendered config/default lacks %q", want)
		}
	}

	kubeconfig := filepath.Join(tmp, "dev.kubeconfig")
	dev := exec.Command(bosun, "dev", "--", "--dev-kubeconfig="+kubeconfig, "--health-probe-bind-address=0")
	dev.Dir = mod
	var devOut syncWriter
	dev.Stdout, dev.Stderr = &devOut, &devOut
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- dev.Wait() }()
	t.Cleanup(func() {
		if dev.ProcessState == nil {
			_ = dev.Process.Signal(syscall.SIGINT)
			select {
			case err := <-done:
				if err != nil {
					t.Logf("bosun dev stopped: %v", err)
				}
			case <-time.After(time.Minute):
				_ = dev.Process.Kill()
			}
		}
	})

	var c client.Client
	bosuntest.Eventually(t, func(context.Context) error {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			return err
		}
		c, err = client.New(cfg, client.Options{})
		return err
	}, bosuntest.Timeout(5*time.Minute))
	for _, kind := range []string{"Widget", "Gadget"} {
		sample := &unstructured.Unstructured{}
		sample.SetGroupVersionKind(schema.GroupVersionKind{Group: "shop.example.com", Version: "v1", Kind: kind})
		bosuntest.Eventually(t, func(ctx context.Context) error {
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: strings.ToLower(kind) + "-sample"}, sample); err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(sample.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Ready" && m["status"] == "True" {
					return nil
				}
			}
			return fmt.Errorf("the %s sample is not Ready yet: %v", kind, conds)
		}, bosuntest.Timeout(2*time.Minute))
	}

	if err := dev.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("bosun dev after Ctrl-C: %v\n%s", err, devOut.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("bosun dev still runs a minute after Ctrl-C\n%s", devOut.String())
	}
}

// TestScaffoldErrors: arguments that cannot make a project or a kind are
// refused with a clear error, and nothing is overwritten.
func TestScaffoldErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"existing module", []string{"init", "--repo", "example.com/x", "--bosun-version", "v0.1.0", "--skip-tidy", dir}, "already holds a go.mod"},
		{"no repo", []string{"init", "--bosun-version", "v0.1.0", t.TempDir()}, "--repo is required"},
		{"bad domain", []string{"init", "--repo", "example.com/x", "--domain", "Example", "--bosun-version", "v0.1.0", t.TempDir()}, "is not a DNS domain"},
		{"not a project", []string{"create", "api", "--group", "shop", "--kind", "Shop", "--dir", t.TempDir()}, "is not a project of bosun init"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRootCommand()
			root.SetArgs(tc.args)
			root.SetOut(&syncWriter{})
			root.SetErr(&syncWriter{})
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("bosun %s: error %v, want one saying %q", strings.Join(tc.args, " "), err, tc.want)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "go.mod")); string(b) != "module x\n" {
		t.Errorf("init over an existing module changed its go.mod: %q", b)
	}

	proj := t.TempDir()
	root := newRootCommand()
	root.SetArgs([]string{"init", "--repo", "example.com/p", "--bosun-version", "v0.1.0", "--skip-tidy", proj})
	root.SetOut(&syncWriter{})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bad kind", []string{"--group", "shop", "--kind", "shop"}, "must be CamelCase"},
		{"bad version", []string{"--group", "shop", "--kind", "Shop", "--version", "1"}, "is not a Kubernetes API version"},
		{"bad group", []string{"--group", "Shop.x", "--kind", "Shop"}, "must be lower-case"},
		{"twice", []string{"--group", "shop", "--kind", "Shop"}, "already exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "twice" {
				root := newRootCommand()
				root.SetArgs(append([]string{"create", "api", "--dir", proj, "--skip-tidy"}, tc.args...))
				root.SetOut(&syncWriter{})
				if err := root.Execute(); err != nil {
					t.Fatal(err)
				}
			}
			root := newRootCommand()
			root.SetArgs(append([]string{"create", "api", "--dir", proj, "--skip-tidy"}, tc.args...))
			root.SetOut(&syncWriter{})
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create api %v: error %v, want one saying %q", tc.args, err, tc.want)
			}
		})
	}
}

// syncWriter is a buffer that processes and goroutines may write to at
// once.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
