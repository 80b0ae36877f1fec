package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.uber.org/zap/zapcore"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/cmd/bosun/internal/scaffold"
)

// runIn runs name with args in dir and fails the test, with the output,
// when it fails.
func runIn(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	// As a user runs them: go.mod must be tidy (-mod=readonly).
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	t.Logf("%s %s: %s", filepath.Base(name), strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return string(out)
}

// TestScaffoldEndToEnd goes from an empty directory to a running operator
// as a new user does, with the commands of README.md and docs/SCAFFOLD.md
// (and --bosun-replace, so that the new module uses this checkout): bosun
// init with a first kind, then bosun create api adds a second one declared
// in a .bosun document and a second version of the first, and bosun create
// webhook gives the first a defaulting and a validating webhook, then, run
// again, the conversion between its versions, and the second a validating
// one; the new module builds, vets and passes its own unit, conversion and
// envtest tests (webhooks included), requires none of the modules only
// bosun's other commands and examples use, make generate manifests changes
// nothing, its config/default renders through make install.yaml (and the
// bosun it builds) with the webhook configurations, the certificate and
// the CRD's conversion webhook, make chart writes a Helm chart of it, and
// bosun dev runs it on an embedded control plane where both samples
// become Ready, the webhooks refuse and the conversion serves, until
// Ctrl-C.
func TestScaffoldEndToEnd(t *testing.T) {
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("the scaffold's Makefile needs make: install it (apt-get install make): %v", err)
	}
	tmp := t.TempDir()
	bosun := filepath.Join(tmp, "bosun")
	runIn(t, ".", "go", "build", "-o", bosun, ".")

	runIn(t, tmp, bosun, "init", "--domain", "example.com", "--repo", "github.com/me/shop", "--kind", "Widget", "--owns", "Deployment",
		"--bosun-replace", checkout, "shop")
	mod := filepath.Join(tmp, "shop")
	runIn(t, mod, bosun, "create", "api", "--group", "shop", "--version", "v1", "--kind", "Gadget", "--dsl")
	// The generators run once, at the last command.
	runIn(t, mod, bosun, "create", "api", "--group", "shop", "--version", "v2", "--kind", "Widget", "--skip-generate")
	runIn(t, mod, bosun, "create", "webhook", "--group", "shop", "--version", "v1", "--kind", "Widget", "--defaulting", "--programmatic-validation", "--skip-generate")
	runIn(t, mod, bosun, "create", "webhook", "--kind", "Gadget", "--programmatic-validation", "--skip-generate")
	runIn(t, mod, bosun, "create", "webhook", "--group", "shop", "--version", "v1", "--kind", "Widget", "--conversion")
	for _, want := range []string{"cmd/main.go", "api/v1/widget_types.go", "api/v1/gadget_types.go", "api/v1/zz_generated.deepcopy.go",
		"internal/controller/widget_controller.go", "internal/controller/widget_controller_test.go", "internal/controller/widget_envtest_test.go",
		"internal/controller/gadget.bosun", "internal/controller/zz_generated.gadget.go", "internal/controller/gadget_controller.go",
		"config/crd/shop.example.com_widgets.yaml", "config/crd/shop.example.com_gadgets.yaml",
		"config/samples/shop_v1_widget.yaml", "config/samples/shop_v1_gadget.yaml", "config/rbac/role.yaml",
		"config/manager/manager.yaml", "config/default/kustomization.yaml", "Makefile", "go.sum",
		"api/v1/widget_conversion.go", "api/v2/widget_types.go", "api/v2/widget_conversion.go", "api/v2/widget_conversion_test.go",
		"api/v2/zz_generated.deepcopy.go", "internal/controller/widget_webhook.go", "internal/controller/widget_webhook_test.go",
		"internal/controller/gadget_webhook.go", "config/webhook/manifests.yaml", "config/webhook/service.yaml", "config/webhook/webhook.go",
		"config/certmanager/certificate.yaml", "config/crd/patches/conversion_widgets.yaml"} {
		if _, err := os.Stat(filepath.Join(mod, want)); err != nil {
			t.Errorf("the scaffold lacks %s: %v", want, err)
		}
	}
	crd, err := os.ReadFile(filepath.Join(mod, "config", "crd", "shop.example.com_widgets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"    name: v1\n", "    name: v2\n", "storage: true", "storage: false", "rule: size(self.metadata.name) <= 63"} {
		if !strings.Contains(string(crd), want) {
			t.Errorf("the Widget CRD lacks %q", want)
		}
	}
	checkLean(t, mod)
	runIn(t, mod, "go", "build", "./...")
	runIn(t, mod, "go", "vet", "./...")
	out := runIn(t, mod, "go", "test", "-count=1", "-v", "./...")
	for _, want := range []string{"--- PASS: TestWidgetSteps", "--- PASS: TestWidgetOnAPIServer", "--- PASS: TestGadgetSteps",
		"--- PASS: TestGadgetOnAPIServer", "ok  \tgithub.com/me/shop/internal/controller",
		"--- PASS: TestWidgetWebhooks/defaults_spec.image", "--- PASS: TestWidgetWebhooks/refuses_a_wrong_spec.image_with_a_field_error",
		"--- PASS: TestWidgetWebhooks/converts_between_the_versions", "--- PASS: TestGadgetWebhooks/refuses_a_wrong_spec.message_with_a_field_error",
		"--- PASS: TestWidgetConversion", "ok  \tgithub.com/me/shop/api/v2"} {
		if !strings.Contains(out, want) {
			t.Errorf("go test in the new module did not print %q:\n%s", want, out)
		}
	}

	// What bosun wrote is what the module's own generators write.
	before := readTree(t, mod)
	runIn(t, mod, "make", "generate", "manifests")
	if diff := cmp.Diff(before, readTree(t, mod)); diff != "" {
		t.Errorf("make generate manifests changed the scaffold (-scaffolded +regenerated):\n%s", diff)
	}

	// The role the markers give is the one the steps declare: --role
	// prints it byte for byte.
	role, err := os.ReadFile(filepath.Join(mod, "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(role), runIn(t, mod, "go", "run", "./cmd", "--role")); diff != "" {
		t.Errorf("--role against the role the markers give (-markers +printed):\n%s", diff)
	}

	// The deployable manifests render, through the bosun of go.mod that
	// make builds into bin/bosun.
	runIn(t, mod, "make", "install.yaml")
	raw, err := os.ReadFile(filepath.Join(mod, "bin", "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	installYAML := string(raw)
	for _, want := range []string{"kind: Deployment", "namespace: shop-system", "name: widgets.shop.example.com",
		"name: gadgets.shop.example.com", "- gadgets/finalizers", "image: shop:dev", "runAsNonRoot: true",
		// The webhooks, their certificate, and the conversion webhook of the
		// Widget CRD.
		"kind: MutatingWebhookConfiguration", "kind: ValidatingWebhookConfiguration", "path: /mutate-shop-example-com-v1-widget",
		"path: /validate-shop-example-com-v1-gadget", "name: shop-webhook-service", "kind: Certificate", "kind: Issuer",
		"- shop-webhook-service.shop-system.svc\n", "secretName: webhook-server-cert", "--webhook-cert-path=",
		"cert-manager.io/inject-ca-from: shop-system/shop-serving-cert", "strategy: Webhook", "path: /convert"} {
		if !strings.Contains(installYAML, want) {
			t.Errorf("the rendered config/default lacks %q", want)
		}
	}

	// The Helm chart of the same manifests: Helm loads it, and its
	// defaults render what config/default renders (the chart's own tests
	// check that object for object).
	runIn(t, mod, "make", "chart")
	ch, err := loader.Load(filepath.Join(mod, "bin", "chart"))
	if err != nil {
		t.Fatalf("Helm cannot load the chart make chart wrote: %v", err)
	}
	if ch.Metadata.Name != "shop" || len(ch.Templates) == 0 {
		t.Errorf("the chart is named %q with %d templates, want shop and its templates", ch.Metadata.Name, len(ch.Templates))
	}

	// bosun dev as a user runs it; the probe flag only keeps it off port
	// 8081, which other tests may hold.
	dev := exec.Command(bosun, "dev", "--", "--health-probe-bind-address=0")
	dev.Dir = mod
	var devOut syncWriter
	dev.Stdout, dev.Stderr = &devOut, &devOut
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- dev.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if stopped {
			return
		}
		_ = dev.Process.Signal(syscall.SIGINT)
		select {
		case err := <-done:
			if err != nil {
				t.Logf("bosun dev stopped: %v", err)
			}
		case <-time.After(time.Minute):
			_ = dev.Process.Kill()
		}
	})

	// controller-runtime's global logger, which the client below logs
	// through: errors only.
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	kubeconfig := filepath.Join(mod, "bin", "dev.kubeconfig")
	var c client.Client
	bosuntest.Eventually(t, func(context.Context) error {
		if !strings.Contains(devOut.String(), "kubeconfig: "+kubeconfig) {
			return fmt.Errorf("bosun dev has not printed its kubeconfig yet:\n%s", devOut.String())
		}
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

	devWebhooks(t, c)
	devWorkloads(t, c)

	stopped = true
	if err := dev.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("bosun dev after Ctrl-C: %v\n%s", err, devOut.String())
		}
	case <-time.After(time.Minute):
		_ = dev.Process.Kill()
		t.Fatalf("bosun dev still runs a minute after Ctrl-C\n%s", devOut.String())
	}
	if !strings.Contains(devOut.String(), "stopping the control plane") {
		t.Errorf("bosun dev did not stop its control plane:\n%s", devOut.String())
	}
}

// devWebhooks checks, under bosun dev, that the API server calls the
// operator's webhooks: a Widget with an image tagged latest is refused by
// the validating webhook, and the Widget sample reads at v2 through the
// conversion webhook.
func devWebhooks(t *testing.T, c client.Client) {
	t.Helper()
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "shop.example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "default", "name": "latest"},
		"spec":     map[string]any{"size": int64(1), "image": "registry.k8s.io/pause:latest"},
	}}
	if err := c.Create(t.Context(), bad); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.image") {
		t.Errorf("creating a Widget of image latest under bosun dev: %v, want 422 naming spec.image", err)
	}
	v2 := &unstructured.Unstructured{}
	v2.SetGroupVersionKind(schema.GroupVersionKind{Group: "shop.example.com", Version: "v2", Kind: "Widget"})
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "default", Name: "widget-sample"}, v2); err != nil {
		t.Fatalf("reading the Widget sample at v2 under bosun dev: %v", err)
	}
	if image, _, _ := unstructured.NestedString(v2.Object, "spec", "image"); image == "" {
		t.Errorf("the Widget sample read at v2 has no spec.image: %v", v2.Object)
	}
}

// devWorkloads checks, under bosun dev, what the Widget sample that owns a
// Deployment shows on the workload controllers and simulated nodes: its
// pods run and it reports them ready, a change of spec.size rolls the
// Deployment, and deleting it takes the Deployment, its ReplicaSets and its
// pods with it through the garbage collector.
func devWorkloads(t *testing.T, c client.Client) {
	t.Helper()
	ctx := t.Context()
	sample := &unstructured.Unstructured{}
	sample.SetGroupVersionKind(schema.GroupVersionKind{Group: "shop.example.com", Version: "v1", Kind: "Widget"})
	key := client.ObjectKey{Namespace: "default", Name: "widget-sample"}
	owned := func(ctx context.Context) (*appsv1.Deployment, error) {
		list := &appsv1.DeploymentList{}
		if err := c.List(ctx, list, client.InNamespace(key.Namespace)); err != nil {
			return nil, err
		}
		for i := range list.Items {
			if metav1.IsControlledBy(&list.Items[i], sample) {
				return &list.Items[i], nil
			}
		}
		return nil, fmt.Errorf("no Deployment of %s among %d", key, len(list.Items))
	}
	// readyAt waits until the sample and its Deployment report size ready
	// pods, and that many pods run.
	readyAt := func(size int64) {
		t.Helper()
		bosuntest.Eventually(t, func(ctx context.Context) error {
			if err := c.Get(ctx, key, sample); err != nil {
				return err
			}
			ready, _, _ := unstructured.NestedInt64(sample.Object, "status", "readyReplicas")
			d, err := owned(ctx)
			if err != nil {
				return err
			}
			pods := &corev1.PodList{}
			if err := c.List(ctx, pods, client.InNamespace(key.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
				return err
			}
			running := 0
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
					running++
				}
			}
			if ready != size || d.Status.ReadyReplicas != int32(size) || running != int(size) {
				return fmt.Errorf("status.readyReplicas %d, the Deployment's %d, %d pods running; want %d", ready, d.Status.ReadyReplicas, running, size)
			}
			return nil
		}, bosuntest.Timeout(2*time.Minute))
	}
	if err := c.Get(ctx, key, sample); err != nil {
		t.Fatal(err)
	}
	size, _, _ := unstructured.NestedInt64(sample.Object, "spec", "size")
	if size < 1 {
		t.Fatalf("the Widget sample asks for %d pods, want some", size)
	}
	readyAt(size)

	patch := client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"size":%d}}`, size+1))
	if err := c.Patch(ctx, sample, patch); err != nil {
		t.Fatal(err)
	}
	readyAt(size + 1)

	d, err := owned(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, sample); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKeyFromObject(d), &appsv1.Deployment{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the Deployment %s is still there after its Widget was deleted (%w)", d.Name, err)
		}
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(key.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			return fmt.Errorf("%d pods of the deleted Widget remain", len(pods.Items))
		}
		return nil
	}, bosuntest.Timeout(2*time.Minute))
}

// unused are modules that only the bosun command (bosun image) and the
// examples (postgres, cronjob) use: a new operator must not require them.
// checkLean fails t when the module graph of the new module in dir holds a
// module that only the repository's other modules bring (the command's,
// the examples', the benches', the tools'): pgx, go-containerregistry,
// kustomize's API, cron, chromedp and the like. The new module's go.mod
// must require the library and no other module of this repository.
func checkLean(t *testing.T, dir string) {
	t.Helper()
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	library := map[string]bool{}
	for _, m := range strings.Fields(goOutside(t, checkout, "list", "-m", "-f", "{{.Path}}", "all")) {
		library[m] = true
	}
	others := map[string]bool{}
	for _, mod := range workspaceModules(t, checkout) {
		for _, m := range strings.Fields(goOutside(t, filepath.Join(checkout, mod), "list", "-m", "-f", "{{.Path}}", "all")) {
			if !library[m] && !strings.HasPrefix(m, "github.com/bosunkit/bosun/") {
				others[m] = true
			}
		}
	}
	for _, m := range []string{"github.com/jackc/pgx/v5", "github.com/google/go-containerregistry", "github.com/robfig/cron/v3", "github.com/chromedp/chromedp"} {
		if !others[m] {
			t.Fatalf("%s is not among the modules only the repository's other modules require; the check below would prove nothing", m)
		}
	}
	for _, m := range strings.Fields(goOutside(t, dir, "list", "-m", "-f", "{{.Path}}", "all")) {
		if others[m] {
			t.Errorf("the new module's graph holds %s, which only the repository's other modules need:\n%s", m, goOutside(t, dir, "mod", "why", "-m", m))
		}
		if strings.HasPrefix(m, "github.com/bosunkit/bosun/") {
			t.Errorf("the new module requires %s; it should require the library, github.com/bosunkit/bosun, only", m)
		}
	}
}

// workspaceModules returns the directories of go.work's modules under
// root, the library's (".") left out.
func workspaceModules(t *testing.T, root string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	var mods []string
	for line := range strings.Lines(string(data)) {
		if dir, ok := strings.CutPrefix(strings.TrimSpace(line), "./"); ok {
			mods = append(mods, dir)
		}
	}
	if len(mods) == 0 {
		t.Fatalf("%s/go.work names no module besides the library", root)
	}
	return mods
}

// goOutside runs the go command with args in dir outside any workspace,
// as a module on its own, and returns its standard output.
func goOutside(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return string(out)
}

// TestScaffoldGoModLean: go mod tidy in a new operator module requires
// what the operator imports, not what the bosun command, the examples or
// the repository's other modules import (checkLean).
func TestScaffoldGoModLean(t *testing.T) {
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(t.TempDir(), "shop")
	if err := execute([]string{"init", "--repo", "github.com/me/shop", "--bosun-replace", checkout, "--kind", "Widget", "--skip-generate", mod}); err != nil {
		t.Fatal(err)
	}
	runIn(t, mod, "go", "mod", "tidy")
	checkLean(t, mod)
}

// TestScaffoldOwns scaffolds an operator whose kinds own, between them,
// every kind bosun create api --owns accepts, and runs the module's unit
// and envtest tests: each kind gets its children, Ready follows them (a
// Deployment's and a StatefulSet's ready pods, which status.readyReplicas
// reports), a workload scaled by hand is put back, and a deleted kind's
// children are garbage-collected. The envtest tests of kinds owning
// workloads run kube-controller-manager and simulated nodes
// (controlplane.Options.ControllerManager and Nodes). The kind with a
// Service gets webhooks, which default and validate its spec.port.
func TestScaffoldOwns(t *testing.T) {
	checkout, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	bosun := filepath.Join(tmp, "bosun")
	runIn(t, ".", "go", "build", "-o", bosun, ".")
	runIn(t, tmp, bosun, "init", "--repo", "github.com/me/cache", "--bosun-replace", checkout, "--kind", "Memcached", "--owns", "Deployment,Service", "cache")
	mod := filepath.Join(tmp, "cache")
	kinds := map[string][]string{
		"Memcached": {"Deployment", "Service"},
		"Web":       {"StatefulSet", "Service"},
		"Agent":     {"DaemonSet"},
		"Task":      {"Job"},
		"Vault":     {"Secret", "ConfigMap"},
	}
	for _, kind := range []string{"Web", "Agent", "Task", "Vault"} {
		args := []string{"create", "api", "--group", "cache", "--kind", kind}
		for _, o := range kinds[kind] {
			args = append(args, "--owns", o)
		}
		args = append(args, "--skip-generate")
		runIn(t, mod, bosun, args...)
	}
	// The webhooks of a kind with a Service are about spec.port (the end
	// to end test has those about spec.image and spec.message).
	runIn(t, mod, bosun, "create", "webhook", "--kind", "Memcached", "--defaulting", "--programmatic-validation")
	checkLean(t, mod)
	runIn(t, mod, "go", "vet", "./...")
	out := runIn(t, mod, "go", "test", "-count=1", "-v", "./internal/controller/")
	for kind := range kinds {
		for _, test := range []string{"Test" + kind + "Steps", "Test" + kind + "OnAPIServer"} {
			if !strings.Contains(out, "--- PASS: "+test+" ") {
				t.Errorf("go test in the new module did not pass %s", test)
			}
		}
	}
	for _, test := range []string{"TestMemcachedWebhooks/defaults_spec.port", "TestMemcachedWebhooks/refuses_a_change_of_spec.port_with_a_field_error"} {
		if !strings.Contains(out, "--- PASS: "+test+" ") {
			t.Errorf("go test in the new module did not pass %s", test)
		}
	}
	if t.Failed() {
		t.Logf("go test:\n%s", out)
	}
}

// readTree returns the files of the module in dir, but for bin/, by their
// slash-separated paths.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		switch {
		case d.IsDir() && rel == "bin":
			return filepath.SkipDir
		case d.IsDir():
			return nil
		}
		b, err := os.ReadFile(path)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestScaffoldCommandErrors: the commands refuse what cannot make a project
// or a kind, with the package's errors, and overwrite nothing.
func TestScaffoldCommandErrors(t *testing.T) {
	existing := t.TempDir()
	if err := os.WriteFile(filepath.Join(existing, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	proj := t.TempDir()
	if err := execute([]string{"init", "--repo", "example.com/p", "--name", "p", "--bosun-version", "v0.1.0", "--kind", "Shop", "--skip-generate", proj}); err != nil {
		t.Fatal(err)
	}
	if err := execute([]string{"create", "webhook", "--kind", "Shop", "--defaulting", "--dir", proj, "--skip-generate"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want error
	}{
		{"existing module", []string{"init", "--repo", "example.com/x", "--bosun-version", "v0.1.0", existing}, scaffold.ErrModuleExists},
		{"init twice", []string{"init", "--repo", "example.com/p", "--bosun-version", "v0.1.0", proj}, scaffold.ErrModuleExists},
		{"no repo", []string{"init", "--bosun-version", "v0.1.0", t.TempDir()}, scaffold.ErrInvalid},
		{"bad group", []string{"init", "--repo", "example.com/x", "--name", "x", "--kind", "Shop", "--group", "a.b", "--bosun-version", "v0.1.0", t.TempDir()}, scaffold.ErrInvalid},
		{"bad domain", []string{"init", "--repo", "example.com/x", "--domain", "Example", "--bosun-version", "v0.1.0", t.TempDir()}, scaffold.ErrInvalid},
		{"dsl without kind", []string{"init", "--repo", "example.com/x", "--dsl", "--bosun-version", "v0.1.0", t.TempDir()}, scaffold.ErrInvalid},
		{"owns without kind", []string{"init", "--repo", "example.com/x", "--owns", "Deployment", "--bosun-version", "v0.1.0", t.TempDir()}, scaffold.ErrInvalid},
		{"owns an unknown kind", []string{"create", "api", "--group", "p", "--kind", "Order", "--owns", "Deployment,Pod", "--dir", proj, "--skip-generate"}, scaffold.ErrInvalid},
		{"owns two workloads", []string{"create", "api", "--group", "p", "--kind", "Order", "--owns", "Job", "--owns", "DaemonSet", "--dir", proj, "--skip-generate"}, scaffold.ErrInvalid},
		{"not a project", []string{"create", "api", "--group", "shop", "--kind", "Shop", "--dir", t.TempDir()}, scaffold.ErrNotProject},
		{"duplicate kind", []string{"create", "api", "--group", "p", "--kind", "Shop", "--dir", proj, "--skip-generate"}, scaffold.ErrKindExists},
		{"bad kind", []string{"create", "api", "--group", "p", "--kind", "shop-x", "--dir", proj, "--skip-generate"}, scaffold.ErrInvalid},
		{"bad version", []string{"create", "api", "--group", "p", "--kind", "Order", "--version", "1", "--dir", proj}, scaffold.ErrInvalid},
		{"webhook of nothing", []string{"create", "webhook", "--kind", "Shop", "--dir", proj, "--skip-generate"}, scaffold.ErrInvalid},
		{"webhook of no kind", []string{"create", "webhook", "--kind", "Order", "--defaulting", "--dir", proj, "--skip-generate"}, scaffold.ErrInvalid},
		{"conversion of one version", []string{"create", "webhook", "--kind", "Shop", "--conversion", "--dir", proj, "--skip-generate"}, scaffold.ErrInvalid},
		{"webhook of another version", []string{"create", "webhook", "--kind", "Shop", "--version", "v2", "--programmatic-validation", "--dir", proj, "--skip-generate"}, scaffold.ErrInvalid},
		{"webhook twice", []string{"create", "webhook", "--kind", "Shop", "--defaulting", "--dir", proj, "--skip-generate"}, scaffold.ErrWebhookExists},
		{"webhook outside a project", []string{"create", "webhook", "--kind", "Shop", "--defaulting", "--dir", t.TempDir()}, scaffold.ErrNotProject},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := execute(tc.args)
			if diff := cmp.Diff(tc.want, err, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("bosun %s: error (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(existing, "go.mod")); string(b) != "module x\n" {
		t.Errorf("init over an existing module changed its go.mod: %q", b)
	}
}

// execute runs bosun with args, its output discarded.
func execute(args []string) error {
	root := newRootCommand()
	root.SetArgs(args)
	root.SetOut(&syncWriter{})
	root.SetErr(&syncWriter{})
	return root.Execute()
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
