package children

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestMetadataOnlyKind keeps ConfigMaps of a kind watched and cached as
// metadata only: they are made, found ready (Present), and passes over
// the converged set write nothing; a value changed by hand, a key removed
// by hand and the set's label removed are each put back, though the cache
// holds no value to compare (the step's field manager no longer owns the
// field); a child no longer desired is pruned.
func TestMetadataOnlyKind(t *testing.T) {
	kinds := []Kind{{Object: &corev1.ConfigMap{}, MetadataOnly: true}, Of(&appsv1.Deployment{}), Of(&corev1.Service{})}
	step := NewStep("web", webApp, kinds)
	e := start(t, reconciler(step))
	ctx := t.Context()
	e.create("mine", 2, 0)
	e.waitConditions("mine", map[string]cond{
		"ConfigMapReady":     {metav1.ConditionTrue, ReasonReady},
		conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded},
	})
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
	e.touch("mine", "converged")
	e.writes.Reset()
	e.touch("mine", "quiet-1")
	e.touch("mine", "quiet-2")
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes by passes over a converged set of metadata-only children, want 0: %v", n, e.writes.Writes())
	}

	edit := func(name string, change func(*corev1.ConfigMap)) {
		t.Helper()
		cm := &corev1.ConfigMap{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, cm); err != nil {
			t.Fatal(err)
		}
		change(cm)
		if err := e.c.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	edit("cm-0", func(cm *corev1.ConfigMap) { cm.Data["value"] = "tampered" })
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
	edit("cm-1", func(cm *corev1.ConfigMap) { delete(cm.Data, "value") })
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
	edit("cm-1", func(cm *corev1.ConfigMap) { delete(cm.Labels, LabelSet) })
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})

	e.setSpec("mine", 1, 0)
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": "1"})
}

// editAs reads the object key of obj's type, changes it and updates it,
// as kubectl edit or kubectl set image would (an Update by another field
// manager), retrying on conflicts with the step's writes.
func editAs[O client.Object](e *env, obj O, change func(O)) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change(obj)
		return e.c.Update(ctx, obj)
	}, bosuntest.Timeout(30*time.Second))
}

// TestMetadataOnlyListElementChangedByHand changes a field inside an
// element of a merged list of children of kinds cached as metadata only
// (kubectl set image on the Deployment's container, the Service port's
// name edited): the step puts both back, as it does for the kinds cached
// whole. Seen failing before the fix: a list counted as in place while
// the step owned any element of it, and the image set by hand stayed.
func TestMetadataOnlyListElementChangedByHand(t *testing.T) {
	for _, metadataOnly := range []bool{false, true} {
		name := "whole"
		if metadataOnly {
			name = "metadata-only"
		}
		t.Run(name, func(t *testing.T) {
			kinds := []Kind{Of(&corev1.ConfigMap{}), {Object: &appsv1.Deployment{}, MetadataOnly: metadataOnly}, {Object: &corev1.Service{}, MetadataOnly: metadataOnly}}
			e := start(t, reconciler(NewStep("web", webApp, kinds)))
			e.create("mine", 1, 1)
			dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}
			bosuntest.Eventually(t, func(ctx context.Context) error {
				if err := e.c.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
					return err
				}
				return e.c.Get(ctx, client.ObjectKeyFromObject(svc), svc)
			}, bosuntest.Timeout(30*time.Second))
			e.touch("mine", "converged")

			editAs(e, dep, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "registry.example/web:evil" })
			editAs(e, svc, func(s *corev1.Service) { s.Spec.Ports[0].Name = "renamed" })
			e.touch("mine", "after-edit")

			bosuntest.Eventually(t, func(ctx context.Context) error {
				var errs []error
				if err := e.c.Get(ctx, client.ObjectKeyFromObject(dep), dep); err != nil {
					return err
				}
				if got := dep.Spec.Template.Spec.Containers[0].Image; got != "registry.example/web:1" {
					errs = append(errs, fmt.Errorf("the Deployment web runs image %q, set by hand, want registry.example/web:1 put back", got))
				}
				if err := e.c.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
					return err
				}
				if got := svc.Spec.Ports[0].Name; got != "http" {
					errs = append(errs, fmt.Errorf("the Service web's port is named %q, set by hand, want http put back", got))
				}
				return errors.Join(errs...)
			}, bosuntest.Timeout(30*time.Second))
		})
	}
}

// TestMetadataOnlySecretStringData keeps a Secret child whose desired
// form writes its value through stringData, cached as metadata only and
// whole: a value changed by hand is put back, and so is one another
// manager applies through stringData; passes after either write nothing.
// Seen failing before the fix, under MetadataOnly: the step's manager
// owned f:stringData.f:value, which the API server never stores and no
// other write takes from it, so the value changed by hand stayed.
func TestMetadataOnlySecretStringData(t *testing.T) {
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		return []client.Object{&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "creds"},
			StringData: map[string]string{"value": fmt.Sprint(req.Object.Spec.Value)},
		}}, nil
	}
	for _, metadataOnly := range []bool{false, true} {
		name := "whole"
		if metadataOnly {
			name = "metadata-only"
		}
		t.Run(name, func(t *testing.T) {
			e := start(t, reconciler(NewStep("creds", desired, []Kind{{Object: &corev1.Secret{}, MetadataOnly: metadataOnly}})))
			e.create("mine", 2, 0)
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "creds"}}
			bosuntest.Eventually(t, func(ctx context.Context) error { return e.c.Get(ctx, client.ObjectKeyFromObject(s), s) }, bosuntest.Timeout(30*time.Second))
			e.touch("mine", "converged")
			editAs(e, s, func(s *corev1.Secret) { s.Data["value"] = []byte("tampered") })
			// putBack waits until the Secret holds the value again, after
			// what changed it.
			putBack := func(what string) {
				t.Helper()
				bosuntest.Eventually(t, func(ctx context.Context) error {
					if err := e.c.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
						return err
					}
					if got := string(s.Data["value"]); got != "2" {
						return fmt.Errorf("the Secret creds holds %q under value, %s, want 2 put back", got, what)
					}
					return nil
				}, bosuntest.Timeout(30*time.Second))
			}
			e.touch("mine", "after-edit")
			putBack("set by hand")

			// Another manager applies the value through stringData: it
			// owns stringData, the step still owns data.value.
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Secret",
				"metadata":   map[string]any{"namespace": e.ns, "name": "creds"},
				"stringData": map[string]any{"value": "applied by another"},
			}}
			if err := e.c.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("another")); err != nil {
				t.Fatal(err)
			}
			e.touch("mine", "after-apply")
			putBack("applied through stringData by another manager")
			e.touch("mine", "repaired")
			e.writes.Reset()
			e.touch("mine", "quiet-1")
			e.touch("mine", "quiet-2")
			if n := e.writes.Total(); n != 0 {
				t.Errorf("%d writes by passes over a repaired Secret, want 0: %v", n, e.writes.Writes())
			}
		})
	}
}

// TestMetadataOnlyRollingNeedsReadiness refuses MaxUnavailable on a kind
// cached as metadata only without a Readiness: the default, Present,
// takes every child for ready as soon as it exists, and the roll-out
// would pace nothing. Seen failing before the fix: three Deployments, none
// available, updated in one pass.
func TestMetadataOnlyRollingNeedsReadiness(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if _, err := resolve([]Kind{{Object: &appsv1.Deployment{}, MaxUnavailable: 1, MetadataOnly: true}}, scheme); err == nil || !strings.Contains(err.Error(), "Readiness") {
		t.Errorf("resolve: %v, want MaxUnavailable refused without a Readiness", err)
	}
	byAnnotation := func(obj client.Object) (bool, string) {
		return obj.GetAnnotations()["ready"] == "true", "not marked ready"
	}
	if _, err := resolve([]Kind{{Object: &appsv1.Deployment{}, MaxUnavailable: 1, MetadataOnly: true, Readiness: byAnnotation}}, scheme); err != nil {
		t.Errorf("resolve with a Readiness: %v", err)
	}
}
