package children

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/internal/wiretest"
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
	bothCaches(t, func(t *testing.T, metadataOnly bool) {
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
	bothCaches(t, func(t *testing.T, metadataOnly bool) {
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

// TestMetadataOnlyRemovedPortWithDefaultedKey keeps a DNS-like Service
// child with two ports on 53: one UDP, one that leaves the protocol to its
// default (TCP). A user deletes the TCP port by hand (kubectl edit): the
// step puts it back, cached whole or as metadata only. Seen failing before
// the fix, as metadata only: the desired port without a protocol matched,
// in part, the step's UDP entry in managedFields, and the Service counted
// as in place while it served no TCP.
func TestMetadataOnlyRemovedPortWithDefaultedKey(t *testing.T) {
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		labels := map[string]string{"app": req.Object.Name}
		return []client.Object{&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "dns"},
			Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP},
				{Name: "dns-tcp", Port: 53},
			}},
		}}, nil
	}
	bothCaches(t, func(t *testing.T, metadataOnly bool) {
		e := start(t, reconciler(NewStep("dns", desired, []Kind{{Object: &corev1.Service{}, MetadataOnly: metadataOnly}})))
		e.create("mine", 1, 0)
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "dns"}}
		bosuntest.Eventually(t, func(ctx context.Context) error { return e.c.Get(ctx, client.ObjectKeyFromObject(svc), svc) }, bosuntest.Timeout(30*time.Second))
		e.touch("mine", "converged")

		editAs(e, svc, func(s *corev1.Service) {
			var keep []corev1.ServicePort
			for _, p := range s.Spec.Ports {
				if p.Protocol != corev1.ProtocolTCP {
					keep = append(keep, p)
				}
			}
			s.Spec.Ports = keep
		})
		e.touch("mine", "after-edit")
		bosuntest.Eventually(t, func(context.Context) error {
			if err := e.c.Get(t.Context(), client.ObjectKeyFromObject(svc), svc); err != nil {
				return err
			}
			for _, p := range svc.Spec.Ports {
				if p.Port == 53 && p.Protocol == corev1.ProtocolTCP && p.Name == "dns-tcp" {
					return nil
				}
			}
			return fmt.Errorf("the Service dns serves %v: its TCP port dns-tcp, deleted by hand, was not put back", svc.Spec.Ports)
		}, bosuntest.Timeout(20*time.Second))
	})
}

// TestSecretStringDataNotAString refuses a Secret child given with a
// stringData value that is not a string (a number, as a templated
// manifest easily yields), as the API server would: Ready False with
// InvalidChildren naming the value, and no Secret. Seen failing before the
// fix: the step folded stringData into data and stored an empty value.
func TestSecretStringDataNotAString(t *testing.T) {
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		return []client.Object{&unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata":   map[string]any{"name": "db"},
			"stringData": map[string]any{"port": int64(5432)},
		}}}, nil
	}
	bothCaches(t, func(t *testing.T, metadataOnly bool) {
		e := start(t, reconciler(NewStep("db", desired, []Kind{{Object: &corev1.Secret{}, MetadataOnly: metadataOnly}})))
		e.create("mine", 1, 0)
		bosuntest.Eventually(t, func(ctx context.Context) error {
			w := &testapi.Widget{}
			if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: "mine"}, w); err != nil {
				return err
			}
			ready := conditions.Find(w.Status.Conditions, conditions.TypeReady)
			if ready == nil || ready.Status != metav1.ConditionFalse || ready.Reason != string(ReasonInvalidChildren) || !strings.Contains(ready.Message, "stringData.port") {
				return fmt.Errorf("Ready %v, want False %s naming stringData.port", ready, ReasonInvalidChildren)
			}
			return nil
		}, bosuntest.Timeout(30*time.Second))
		err := e.c.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: "db"}, &corev1.Secret{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("reading the Secret db: %v, want it not made", err)
		}
	})
}

// TestMetadataOnlyStringDataReadOncePerVersion keeps a Secret child
// cached as metadata only. A user once applies the Secret's value through
// stringData (kubectl apply of a manifest with stringData), and the step
// puts its value back. The user's managedFields entry for stringData
// stays for good (the API server never stores stringData, so no later
// write takes it): the step reads the Secret whole once for its version,
// and passes over it after read nothing and write nothing. Budget: 0
// reads of the API server per converged pass. Seen failing before the
// fix: one whole read every pass, forever.
func TestMetadataOnlyStringDataReadOncePerVersion(t *testing.T) {
	cp := shared.ControlPlane(t)
	var secretReads atomic.Int64
	base, err := client.NewWithWatch(cp.Config, client.Options{Scheme: cp.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	counting := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if obj.GetObjectKind().GroupVersionKind().Kind == "Secret" {
				if _, ok := obj.(*unstructured.Unstructured); ok {
					secretReads.Add(1)
				}
			}
			return c.Get(ctx, key, obj, opts...)
		},
	})
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		return []client.Object{&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "creds"},
			StringData: map[string]string{"value": fmt.Sprint(req.Object.Spec.Value)},
		}}, nil
	}
	r := reconciler(NewStep("creds", desired, []Kind{{Object: &corev1.Secret{}, MetadataOnly: true}}))
	r.APIReader = counting
	e := start(t, r)
	e.create("mine", 2, 0)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "creds"}}
	bosuntest.Eventually(t, func(ctx context.Context) error { return e.c.Get(ctx, client.ObjectKeyFromObject(s), s) }, bosuntest.Timeout(30*time.Second))
	e.touch("mine", "converged")
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"namespace": e.ns, "name": "creds"},
		"stringData": map[string]any{"value": "applied by a user"},
	}}
	if err := e.c.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("kubectl")); err != nil {
		t.Fatal(err)
	}
	e.touch("mine", "after-apply")
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
			return err
		}
		if got := string(s.Data["value"]); got != "2" {
			return fmt.Errorf("the Secret creds holds %q, want 2 put back", got)
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
	// The cache shows the repaired version: a pass reads it whole once.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
		if err := e.mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(s), m); err != nil {
			return err
		}
		if m.ResourceVersion != s.ResourceVersion {
			return fmt.Errorf("the cache shows version %s of the Secret, want %s", m.ResourceVersion, s.ResourceVersion)
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
	e.touch("mine", "repaired")
	before := secretReads.Load()
	e.writes.Reset()
	const passes = 5
	for i := range passes {
		e.touch("mine", fmt.Sprintf("quiet-%d", i))
	}
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes over %d converged passes, want 0: %v", n, passes, e.writes.Writes())
	}
	if n := secretReads.Load() - before; n > 0 {
		t.Errorf("%d whole reads of the Secret creds from the API server over %d converged passes, want 0: the version was read whole once already", n, passes)
	}
}

// bothCaches runs test for a kind cached whole and for one cached as
// metadata only, each as a subtest.
func bothCaches(t *testing.T, test func(t *testing.T, metadataOnly bool)) {
	for _, metadataOnly := range []bool{false, true} {
		name := "whole"
		if metadataOnly {
			name = "metadata-only"
		}
		t.Run(name, func(t *testing.T) { test(t, metadataOnly) })
	}
}

// TestMetadataOnlyApplyAnswer: the apply of a child of a MetadataOnly kind
// asks the API server for the child's metadata only, so its data is
// neither sent back nor decoded; the child is still created, changed and
// judged ready from that answer. Every answer to a write of the
// ConfigMaps is read on the wire.
func TestMetadataOnlyApplyAnswer(t *testing.T) {
	const payload = "payload-Zq81-"
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		var objs []client.Object
		for i := range req.Object.Spec.Value {
			objs = append(objs, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)},
				Data:       map[string]string{"value": fmt.Sprint(payload, req.Object.Spec.Value)},
			})
		}
		return objs, nil
	}
	answers := &patchAnswers{}
	kinds := []Kind{{Object: &corev1.ConfigMap{}, MetadataOnly: true}}
	e := startWith(t, reconciler(NewStep("web", desired, kinds)), answers.record)
	e.create("mine", 2, 0)
	e.waitConditions("mine", map[string]cond{
		"ConfigMapReady":     {metav1.ConditionTrue, ReasonReady},
		conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded},
	})
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": payload + "2", "cm-1": payload + "2"})
	e.setSpec("mine", 3, 0)
	e.waitConfigMaps(e.ns, map[string]string{"cm-0": payload + "3", "cm-1": payload + "3", "cm-2": payload + "3"})

	got := answers.take(e.ns)
	if len(got) < 5 {
		t.Fatalf("%d answers to writes of the ConfigMaps of %s, want at least the 5 applies: %q", len(got), e.ns, got)
	}
	for _, body := range got {
		// The answer is JSON or protobuf, as the client negotiates;
		// either names the kind it holds.
		if !strings.Contains(body, "PartialObjectMetadata") || strings.Contains(body, payload) {
			t.Errorf("the answer to an apply of a metadata-only child is not its metadata only: %q", body)
		}
	}
}

// patchAnswers records the bodies of the API server's answers to PATCH
// requests of ConfigMaps, by namespace.
type patchAnswers struct {
	mu     sync.Mutex
	bodies map[string][]string
}

// record makes the manager's client send its requests through a.
func (a *patchAnswers) record(o *ctrl.Options) {
	next := o.NewClient
	if next == nil {
		next = client.New
	}
	o.NewClient = func(cfg *rest.Config, opts client.Options) (client.Client, error) {
		hc := *opts.HTTPClient
		send := hc.Transport
		hc.Transport = wiretest.RoundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := send.RoundTrip(r)
			parts := strings.Split(r.URL.Path, "/")
			if err != nil || r.Method != http.MethodPatch || len(parts) < 7 || parts[5] != "configmaps" {
				return resp, err
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return nil, err
			}
			resp.Body = io.NopCloser(bytes.NewReader(body))
			a.mu.Lock()
			defer a.mu.Unlock()
			if a.bodies == nil {
				a.bodies = map[string][]string{}
			}
			a.bodies[parts[4]] = append(a.bodies[parts[4]], string(body))
			return resp, nil
		})
		opts.HTTPClient = &hc
		return next(cfg, opts)
	}
}

// take returns the answers recorded for namespace ns.
func (a *patchAnswers) take(ns string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bodies[ns]
}
