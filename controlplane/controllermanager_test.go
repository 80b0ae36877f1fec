package controlplane_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/controlplane"
)

// waitFor polls cond until it returns nil, failing the test with its last
// error after timeout.
func waitFor(t *testing.T, timeout time.Duration, cond func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	for {
		err := cond(ctx)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("still waiting after %s: %v", timeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// gone returns a condition that holds once obj no longer exists.
func gone(c client.Client, obj client.Object) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%s %s still exists (deletionTimestamp %v, finalizers %v)",
			obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), obj.GetDeletionTimestamp(), obj.GetFinalizers())
	}
}

// ownedBy returns a controller owner reference to owner with
// blockOwnerDeletion as given.
func ownedBy(owner client.Object, apiVersion, kind string, block bool) []metav1.OwnerReference {
	return []metav1.OwnerReference{{
		APIVersion: apiVersion, Kind: kind, Name: owner.GetName(), UID: owner.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(block),
	}}
}

// TestControllerManager starts a control plane with kube-controller-manager
// and checks what its two controllers do: the garbage collector deletes the
// dependents of a deleted owner, in the background or before the owner
// (foreground), and the namespace controller empties and removes a deleted
// namespace. It also checks the admission plugin that guards
// blockOwnerDeletion.
func TestControllerManager(t *testing.T) {
	var output syncBuffer
	cp, err := controlplane.Start(t.Context(), controlplane.Options{
		CRDs:              []*apiextensionsv1.CustomResourceDefinition{widgetCRD()},
		Progress:          os.Stderr,
		Output:            &output,
		ControllerManager: true,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	c := cp.Client
	servicesBeyondASlash24(t, c)

	got, err := controlplane.RunningControllers(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(controlplane.DefaultControllers(), got); diff != "" {
		t.Errorf("RunningControllers (-want +got):\n%s", diff)
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kcm-test"}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	newConfigMap := func(name string, owners []metav1.OwnerReference, finalizers ...string) *corev1.ConfigMap {
		t.Helper()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns.Name, Name: name, OwnerReferences: owners, Finalizers: finalizers,
		}}
		if err := c.Create(t.Context(), cm); err != nil {
			t.Fatalf("creating configmap %s: %v", name, err)
		}
		return cm
	}

	t.Run("background", func(t *testing.T) {
		owner := newConfigMap("bg-owner", nil)
		dependent := newConfigMap("bg-dependent", ownedBy(owner, "v1", "ConfigMap", false))
		if err := c.Delete(t.Context(), owner); err != nil {
			t.Fatal(err)
		}
		waitFor(t, time.Minute, gone(c, dependent))
	})

	t.Run("foreground", func(t *testing.T) {
		const hold = "test.bosun.dev/hold"
		owner := newConfigMap("fg-owner", nil)
		dependent := newConfigMap("fg-dependent", ownedBy(owner, "v1", "ConfigMap", true), hold)
		if err := c.Delete(t.Context(), owner, client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
			t.Fatal(err)
		}
		// The garbage collector deletes the dependent, which its finalizer
		// keeps; the owner waits for it.
		waitFor(t, time.Minute, func(ctx context.Context) error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(dependent), dependent); err != nil {
				return err
			}
			if dependent.DeletionTimestamp.IsZero() {
				return errors.New("the dependent is not being deleted yet")
			}
			return nil
		})
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(owner), owner); err != nil {
			t.Fatalf("the owner is gone while a blocking dependent exists: %v", err)
		}
		if diff := cmp.Diff([]string{metav1.FinalizerDeleteDependents}, owner.Finalizers); diff != "" {
			t.Errorf("owner finalizers (-want +got):\n%s", diff)
		}
		dependent.Finalizers = nil
		if err := c.Update(t.Context(), dependent); err != nil {
			t.Fatal(err)
		}
		waitFor(t, time.Minute, gone(c, dependent))
		waitFor(t, time.Minute, gone(c, owner))
	})

	t.Run("namespace", func(t *testing.T) {
		doomed := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kcm-doomed"}}
		if err := c.Create(t.Context(), doomed); err != nil {
			t.Fatal(err)
		}
		widget := &unstructured.Unstructured{}
		widget.SetGroupVersionKind(widgetGVR.GroupVersion().WithKind("Widget"))
		widget.SetNamespace(doomed.Name)
		widget.SetName("w")
		if err := c.Create(t.Context(), widget); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(t.Context(), doomed); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 2*time.Minute, gone(c, doomed))
	})

	t.Run("blockOwnerDeletion needs finalizers", func(t *testing.T) {
		const user = "kcm-test-user"
		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: user},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create"}}},
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: user},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
		}
		for _, obj := range []client.Object{role, binding} {
			if err := c.Create(t.Context(), obj); err != nil {
				t.Fatal(err)
			}
		}
		cfg, err := cp.AddUser(user)
		if err != nil {
			t.Fatal(err)
		}
		uc, err := client.New(cfg, client.Options{Scheme: cp.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		owner := &unstructured.Unstructured{}
		owner.SetGroupVersionKind(widgetGVR.GroupVersion().WithKind("Widget"))
		owner.SetNamespace(ns.Name)
		owner.SetName("owner")
		if err := c.Create(t.Context(), owner); err != nil {
			t.Fatal(err)
		}
		create := func(name string, block bool) error {
			return uc.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Namespace: ns.Name, Name: name, OwnerReferences: ownedBy(owner, widgetGVR.GroupVersion().String(), "Widget", block),
			}})
		}
		if err := create("not-blocking", false); err != nil {
			t.Errorf("creating a dependent without blockOwnerDeletion: %v", err)
		}
		err = create("blocking", true)
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "blockOwnerDeletion") {
			t.Errorf("creating a dependent with blockOwnerDeletion and no right on widgets/finalizers: %v, want Forbidden naming blockOwnerDeletion", err)
		}

		role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{widgetGVR.Group}, Resources: []string{"widgets/finalizers"}, Verbs: []string{"update"}})
		if err := c.Update(t.Context(), role); err != nil {
			t.Fatal(err)
		}
		// RBAC takes the new rule from its cache: retry until it does.
		waitFor(t, 30*time.Second, func(context.Context) error { return create("blocking", true) })
	})

	if output.Len() == 0 {
		t.Error("Options.Output received nothing")
	}
	if !strings.Contains(output.String(), "garbage") {
		t.Error("Options.Output received nothing from the garbage collector")
	}
}

// TestControllerManagerStartFailure runs a kube-controller-manager that exits
// at once, through KUBEBUILDER_ASSETS: Start fails, quoting its output and
// saying how to fix it.
func TestControllerManagerStartFailure(t *testing.T) {
	assets := assetsWithFailing(t, controlplane.Options{}, "kube-controller-manager",
		"echo 'E1123 fake kube-controller-manager: cannot start' >&2\nexit 3")

	cp, err := controlplane.Start(t.Context(), controlplane.Options{ControllerManager: true})
	if err == nil {
		_ = cp.Stop()
		t.Fatal("Start with a kube-controller-manager that exits succeeded")
	}
	t.Logf("the error reads:\n%v", err)
	for _, want := range []string{
		"starting kube-controller-manager " + filepath.Join(assets, "kube-controller-manager"),
		"exited before it was ready: exit status 3",
		"last lines of kube-controller-manager's output",
		"fake kube-controller-manager: cannot start",
		"how to fix",
		"KUBEBUILDER_ASSETS",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
}

// assetsWithFailing points KUBEBUILDER_ASSETS, for the rest of t, at a new
// directory that holds the real binaries a control plane started with opts
// runs, and in place of the binary name a shell script of body, which
// exits at once. It returns the directory.
func assetsWithFailing(t *testing.T, opts controlplane.Options, name, body string) string {
	t.Helper()
	opts.Progress = os.Stderr
	real, err := controlplane.Binaries(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	assets := t.TempDir()
	for _, bin := range []string{"kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if _, err := os.Stat(filepath.Join(real, bin)); bin == name || err != nil {
			continue
		}
		if err := os.Symlink(filepath.Join(real, bin), filepath.Join(assets, bin)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(assets, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBEBUILDER_ASSETS", assets)
	return assets
}

// servicesBeyondASlash24 checks that the default Service range holds more
// Services than envtest's own /24 (254 addresses): a test of a thousand
// objects with a Service each ran out of it.
func servicesBeyondASlash24(t *testing.T, c client.Client) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "many-services"}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: fmt.Sprintf("s-%d", i)},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
		}
		if err := c.Create(t.Context(), svc); err != nil {
			t.Fatalf("creating Service %d of 300: %v", i, err)
		}
		if i == 0 {
			if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err != nil || !netip.MustParsePrefix("10.96.0.0/16").Contains(ip) {
				t.Errorf("cluster IP %q, want one in %s", svc.Spec.ClusterIP, "10.96.0.0/16")
			}
		}
	}
}
