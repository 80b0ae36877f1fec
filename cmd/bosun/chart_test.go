package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
)

// TestChartOnDevCluster makes the memcached example's chart with bosun
// chart and installs it with Helm's Go library into a cluster of bosun
// dev (the workload controllers and a simulated node): Helm waits for the
// manager's Deployment to be available, with the values' replicas and
// image; an upgrade changes the replicas; an uninstall removes the
// release's objects and keeps the CRD.
func TestChartOnDevCluster(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chart")
	if _, _, status := runMain(t, ".", "chart", "--dir", "../../examples/memcached/config/default", "-o", dir); status != 0 {
		t.Fatalf("bosun chart: exit %d", status)
	}
	ch, err := loader.Load(dir)
	if err != nil {
		t.Fatal(err)
	}

	cp := bosuntest.Start(t, controlplane.Options{ControllerManager: true, Nodes: 1})
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	const ns, release = "shop-system", "shop"
	cfg, install := helmInstall(t, kubeconfig, ns, release)
	vals := map[string]any{"replicas": 2, "image": map[string]any{"repository": "registry.example/memcached", "tag": "v1.2.3"}}
	if _, err := install.RunWithContext(t.Context(), ch, vals); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	dep := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: ns, Name: "memcached-controller-manager"}
	if err := cp.Client.Get(t.Context(), key, dep); err != nil {
		t.Fatal(err)
	}
	if got := *dep.Spec.Replicas; got != 2 || dep.Status.AvailableReplicas != 2 {
		t.Errorf("after helm install, the Deployment has %d replicas, %d available; want 2 and 2", got, dep.Status.AvailableReplicas)
	}
	if got := dep.Spec.Template.Spec.Containers[0].Image; got != "registry.example/memcached:v1.2.3" {
		t.Errorf("the manager's image is %s, want the values'", got)
	}
	binding := &rbacv1.ClusterRoleBinding{}
	if err := cp.Client.Get(t.Context(), client.ObjectKey{Name: "memcached-manager-rolebinding"}, binding); err != nil {
		t.Fatal(err)
	}
	if s := binding.Subjects[0]; s.Namespace != ns {
		t.Errorf("the manager's ClusterRoleBinding binds the ServiceAccount of namespace %q, want the release's %q", s.Namespace, ns)
	}

	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace, upgrade.WaitStrategy, upgrade.Timeout = ns, kube.StatusWatcherStrategy, 3*time.Minute
	vals["replicas"] = 1
	if _, err := upgrade.RunWithContext(t.Context(), release, ch, vals); err != nil {
		t.Fatalf("helm upgrade: %v", err)
	}
	if err := cp.Client.Get(t.Context(), key, dep); err != nil {
		t.Fatal(err)
	}
	if got := *dep.Spec.Replicas; got != 1 {
		t.Errorf("after helm upgrade, the Deployment has %d replicas, want 1", got)
	}

	uninstall := action.NewUninstall(cfg)
	uninstall.WaitStrategy, uninstall.Timeout = kube.StatusWatcherStrategy, 3*time.Minute
	if _, err := uninstall.Run(release); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.ServiceAccount{}} {
			k := client.ObjectKey{Namespace: ns, Name: "memcached-controller-manager"}
			if err := cp.Client.Get(ctx, k, o); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%T %s after helm uninstall: %w, want not found", o, k, err)
			}
		}
		return nil
	})
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := cp.Client.Get(t.Context(), client.ObjectKey{Name: "memcacheds.cache.example.bosun.dev"}, crd); err != nil {
		t.Errorf("the CRD after helm uninstall: %v, want it kept (crds.keep)", err)
	}

	// Installed again into another namespace, the release adopts the kept
	// CRD with --take-ownership; without it Helm refuses the CRD as the
	// first release's.
	const otherNS = "shop-two"
	_, again := helmInstall(t, kubeconfig, otherNS, release)
	if _, err := again.RunWithContext(t.Context(), ch, vals); err == nil || !strings.Contains(err.Error(), "ownership") {
		t.Errorf("helm install into %s beside the kept CRD: %v, want a refusal for its ownership", otherNS, err)
	}
	_, again = helmInstall(t, kubeconfig, otherNS, release)
	again.TakeOwnership = true
	if _, err := again.RunWithContext(t.Context(), ch, vals); err != nil {
		t.Fatalf("helm install --take-ownership into %s: %v", otherNS, err)
	}
	if err := cp.Client.Get(t.Context(), client.ObjectKey{Name: "memcacheds.cache.example.bosun.dev"}, crd); err != nil {
		t.Fatal(err)
	}
	if got := crd.Annotations["meta.helm.sh/release-namespace"]; got != otherNS {
		t.Errorf("the kept CRD belongs to the release of namespace %q, want %q", got, otherNS)
	}
}

// helmInstall returns Helm's configuration for namespace ns of the cluster
// of kubeconfig, and its install of release there (the namespace made if
// missing), waiting up to 3 minutes for what it installs to be ready, as
// `helm install --create-namespace --wait` does.
func helmInstall(t *testing.T, kubeconfig, ns, release string) (*action.Configuration, *action.Install) {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := action.NewConfiguration()
	if err := cfg.Init(flags, ns, "secret"); err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace, install.CreateNamespace = release, ns, true
	install.WaitStrategy, install.Timeout = kube.StatusWatcherStrategy, 3*time.Minute
	return cfg, install
}
