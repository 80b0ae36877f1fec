package trust

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/conditions"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// TestForeignConfigMapTakenOver: a ConfigMap of the Bundle's name that
// someone else made in one namespace is taken over, as trust-manager
// applies over it, its other keys kept, and holds back no other
// namespace: each gets its target, and a source change reaches them all.
func TestForeignConfigMapTakenOver(t *testing.T) {
	e := start(t, Options{}, false)
	a, b := newTestCert(t, "a", false, time.Time{}), newTestCert(t, "b", false, time.Time{})
	e.namespace("aaa-taken", nil)
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "aaa-taken", Name: "corp"}, Data: map[string]string{"mine": "yes"}}
	if err := e.c.Create(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}
	e.namespace("team-a", nil)
	e.source("corp-ca", map[string]string{"ca.crt": a.pem}, nil)
	e.bundle("corp", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Name: "corp-ca", Key: "ca.crt"}}},
		Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}},
	})
	e.waitSynced("corp", metav1.ConditionTrue, ReasonSynced)
	targets := e.waitTargets("corp", "ca.pem", bundleOf(t, a), e.allNamespaces()...)
	if got := targets["aaa-taken"].Data["mine"]; got != "yes" {
		t.Errorf("the ConfigMap taken over lost its own key: %q", got)
	}
	e.namespace("team-b", nil)
	e.waitTargets("corp", "ca.pem", bundleOf(t, a), e.allNamespaces()...)
	e.source("corp-ca", map[string]string{"ca.crt": b.pem}, nil)
	e.waitTargets("corp", "ca.pem", bundleOf(t, b), e.allNamespaces()...)
}

// TestMissingSourceWaits: the SourceNotFound message names what is
// missing once, as trust-manager's does ("Bundle source was not found:
// <what>"), and a Bundle waiting for its source is not retried on its
// own: no pass over it fails, and two touches bring two passes.
func TestMissingSourceWaits(t *testing.T) {
	e := start(t, Options{}, false)
	e.bundle("broken", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Name: "later", Key: "ca.crt"}}},
		Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}},
	})
	b := e.waitSynced("broken", metav1.ConditionFalse, ReasonSourceNotFound)
	want := "Bundle source was not found: ConfigMap cert-manager/later"
	if msg := conditions.Find(b.Status.Conditions, trustv1alpha1.ConditionSynced).Message; msg != want {
		t.Errorf("Synced says %q, want %q", msg, want)
	}
	key := client.ObjectKey{Name: "broken"}
	obj := &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: "broken"}}
	e.passes.Touch(t, e.c, obj, "settled")
	since := time.Now()
	e.passes.Touch(t, e.c, obj, "1")
	e.passes.Touch(t, e.c, obj, "2")
	if n := e.passes.CountSince(key, since); n != 2 {
		t.Errorf("%d passes over a Bundle waiting for its source, brought by 2 touches; want 2 (no retries of its own)", n)
	}
	if failed := e.passes.failedPasses(key); len(failed) > 0 {
		t.Errorf("passes over a Bundle waiting for its source failed, which brings retries with backoff: %v", failed)
	}
}

// TestSelectedSourcesFormatsAndStale: label-selected sources come and
// go, identical certificates write nothing, a converged Bundle with JKS
// and PKCS#12 in several namespaces writes nothing, a PKCS#12 password
// change reaches the targets, and formats and template labels removed
// leave nothing stale.
func TestSelectedSourcesFormatsAndStale(t *testing.T) {
	e := start(t, Options{}, false)
	a, b, z := newTestCert(t, "a", false, time.Time{}), newTestCert(t, "b", false, time.Time{}), newTestCert(t, "z", false, time.Time{})
	for _, ns := range []string{"ns1", "ns2", "ns3", "ns4"} {
		e.namespace(ns, nil)
	}
	e.source("cm1", map[string]string{"ca.crt": a.pem}, map[string]string{"ca": "yes"})
	e.source("cm2", map[string]string{"x.crt": b.pem}, map[string]string{"ca": "yes"})
	pw := "pw1"
	e.bundle("sel", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{
			{ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ca": "yes"}}, IncludeAllKeys: new(true)}},
			{InLine: z.pem},
		},
		Target: trustv1alpha1.BundleTarget{
			ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem", Metadata: trustv1alpha1.TargetMetadata{Labels: map[string]string{"team": "x"}, Annotations: map[string]string{"note": "y"}}},
			AdditionalFormats: &trustv1alpha1.AdditionalFormats{
				JKS:    &trustv1alpha1.JKS{KeySelector: trustv1alpha1.KeySelector{Key: "ca.jks"}},
				PKCS12: &trustv1alpha1.PKCS12{KeySelector: trustv1alpha1.KeySelector{Key: "ca.p12"}, Password: &pw},
			},
		},
	})
	e.waitSynced("sel", metav1.ConditionTrue, ReasonSynced)
	e.waitTargets("sel", "ca.pem", bundleOf(t, a, b, z), e.allNamespaces()...)
	key := &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: "sel"}}
	e.passes.Touch(t, e.c, key, "settled")
	e.writes.Reset()
	e.passes.Touch(t, e.c, key, "1")
	e.passes.Touch(t, e.c, key, "2")
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes over a converged Bundle with JKS and PKCS#12, want 0: %v", n, e.writes.Writes())
	}
	// The same certificates, other text around them.
	e.source("cm1", map[string]string{"ca.crt": "a comment\n" + a.pem}, map[string]string{"ca": "yes"})
	e.passes.Touch(t, e.c, key, "3")
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes after a source change with the same certificates, want 0: %v", n, e.writes.Writes())
	}
	// Relabelled out, deleted.
	e.source("cm2", map[string]string{"x.crt": b.pem}, nil)
	e.waitTargets("sel", "ca.pem", bundleOf(t, a, z), e.allNamespaces()...)
	if err := e.c.Delete(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: trustNamespace, Name: "cm1"}}); err != nil {
		t.Fatal(err)
	}
	e.waitTargets("sel", "ca.pem", bundleOf(t, z), e.allNamespaces()...)
	// A new PKCS#12 password.
	before := e.waitTargets("sel", "ca.pem", bundleOf(t, z), e.allNamespaces()...)["ns1"].BinaryData["ca.p12"]
	e.patch("sel", func(b *trustv1alpha1.Bundle) { pw2 := "pw2"; b.Spec.Target.AdditionalFormats.PKCS12.Password = &pw2 })
	bosuntest.Eventually(t, func(ctx context.Context) error {
		cm := &corev1.ConfigMap{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "ns1", Name: "sel"}, cm); err != nil {
			return err
		}
		if string(cm.BinaryData["ca.p12"]) == string(before) {
			return fmt.Errorf("the PKCS#12 target is still the one of the old password")
		}
		return nil
	}, bosuntest.Timeout(20*time.Second))
	// Formats and template metadata removed.
	e.patch("sel", func(b *trustv1alpha1.Bundle) {
		b.Spec.Target.AdditionalFormats = nil
		b.Spec.Target.ConfigMap.Metadata = trustv1alpha1.TargetMetadata{}
	})
	e.waitSynced("sel", metav1.ConditionTrue, ReasonSynced)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		cm := &corev1.ConfigMap{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "ns2", Name: "sel"}, cm); err != nil {
			return err
		}
		if len(cm.BinaryData) != 0 || cm.Labels["team"] != "" || cm.Annotations["note"] != "" {
			return fmt.Errorf("stale: binaryData keys %d, labels %v, annotations %v", len(cm.BinaryData), cm.Labels, cm.Annotations)
		}
		return nil
	}, bosuntest.Timeout(20*time.Second))
}

// TestRecreatedBundle: a Bundle deleted and made again under its name
// while the garbage collector has yet to take the old targets gets its
// targets back.
func TestRecreatedBundle(t *testing.T) {
	e := start(t, Options{}, true)
	a, b := newTestCert(t, "a", false, time.Time{}), newTestCert(t, "b", false, time.Time{})
	e.namespace("team-a", nil)
	spec := func(c testCert) trustv1alpha1.BundleSpec {
		return trustv1alpha1.BundleSpec{
			Sources: []trustv1alpha1.BundleSource{{InLine: c.pem}},
			Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}},
		}
	}
	e.bundle("again", spec(a))
	e.waitSynced("again", metav1.ConditionTrue, ReasonSynced)
	e.waitTargets("again", "ca.pem", bundleOf(t, a), e.allNamespaces()...)
	if err := e.c.Delete(t.Context(), &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: "again"}}); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		err := e.c.Get(ctx, client.ObjectKey{Name: "again"}, &trustv1alpha1.Bundle{})
		if err == nil {
			return fmt.Errorf("still there")
		}
		return client.IgnoreNotFound(err)
	})
	e.bundle("again", spec(b))
	e.waitTargets("again", "ca.pem", bundleOf(t, b), e.allNamespaces()...)
	e.waitSynced("again", metav1.ConditionTrue, ReasonSynced)
}

// TestSecretSourceBySelector: a Secret selected by labels, added
// later, reaches the targets; a TLS Secret with includeAllKeys is refused
// (SourceBuildError) naming it.
func TestSecretSourceBySelector(t *testing.T) {
	e := start(t, Options{}, false)
	a, b := newTestCert(t, "a", false, time.Time{}), newTestCert(t, "b", false, time.Time{})
	e.bundle("sec", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{
			{InLine: a.pem},
			{Secret: &trustv1alpha1.SourceObjectKeySelector{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"ca": "yes"}}, IncludeAllKeys: new(true)}},
		},
		Target: trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}},
	})
	e.waitSynced("sec", metav1.ConditionTrue, ReasonSynced)
	e.waitTargets("sec", "ca.pem", bundleOf(t, a), e.allNamespaces()...)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: trustNamespace, Name: "s1", Labels: map[string]string{"ca": "yes"}}, Data: map[string][]byte{"b.crt": []byte(b.pem)}}
	if err := e.c.Create(t.Context(), s); err != nil {
		t.Fatal(err)
	}
	e.waitTargets("sec", "ca.pem", bundleOf(t, a, b), e.allNamespaces()...)
	tls := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: trustNamespace, Name: "tls1", Labels: map[string]string{"ca": "yes"}}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte(b.pem), "tls.key": []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")}}
	if err := e.c.Create(t.Context(), tls); err != nil {
		t.Fatal(err)
	}
	bnd := e.waitSynced("sec", metav1.ConditionFalse, ReasonSourceBuildError)
	msg := conditions.Find(bnd.Status.Conditions, trustv1alpha1.ConditionSynced).Message
	if !strings.Contains(msg, "tls1") || strings.Contains(msg, "AAAA") {
		t.Errorf("Synced says %q", msg)
	}
}

// TestTargetNamespacesAndSelectorMessage: with --target-namespaces
// and a namespace selector, trust-manager says "Successfully synced Bundle
// to allowed namespaces that match this label selector: <selector>".
func TestTargetNamespacesAndSelectorMessage(t *testing.T) {
	e := start(t, Options{TargetNamespaces: []string{"in", "other"}}, false)
	a := newTestCert(t, "a", false, time.Time{})
	e.namespace("in", map[string]string{"trust": "yes"})
	e.bundle("tn", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{InLine: a.pem}},
		Target: trustv1alpha1.BundleTarget{
			ConfigMap:         &trustv1alpha1.TargetTemplate{Key: "ca.pem"},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"trust": "yes"}},
		},
	})
	b := e.waitSynced("tn", metav1.ConditionTrue, ReasonSynced)
	want := "Successfully synced Bundle to allowed namespaces that match this label selector: trust=yes"
	if msg := conditions.Find(b.Status.Conditions, trustv1alpha1.ConditionSynced).Message; msg != want {
		t.Errorf("Synced says %q, want trust-manager's %q", msg, want)
	}
}

// TestNamespaceDeleted: a namespace being deleted loses its target and
// the Bundle stays Synced.
func TestNamespaceDeleted(t *testing.T) {
	e := start(t, Options{}, false)
	a := newTestCert(t, "a", false, time.Time{})
	e.namespace("doomed", nil)
	e.bundle("nsd", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{InLine: a.pem}},
		Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}},
	})
	e.waitSynced("nsd", metav1.ConditionTrue, ReasonSynced)
	all := e.allNamespaces()
	e.waitTargets("nsd", "ca.pem", bundleOf(t, a), all...)
	if err := e.c.Delete(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "doomed"}}); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for _, ns := range all {
		if ns != "doomed" {
			rest = append(rest, ns)
		}
	}
	e.waitTargets("nsd", "ca.pem", bundleOf(t, a), rest...)
	e.passes.Touch(t, e.c, &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: "nsd"}}, "x")
	e.waitSynced("nsd", metav1.ConditionTrue, ReasonSynced)
}

// TestNamespaceWakesOnlyItsBundles: a new namespace brings a pass of the
// Bundles that select it and of no other, so that a cluster of many
// Bundles does not run them all for every namespace; a namespace
// relabelled into a selector wakes that Bundle, and out of it too.
func TestNamespaceWakesOnlyItsBundles(t *testing.T) {
	e := start(t, Options{}, false)
	a := newTestCert(t, "a", false, time.Time{})
	for name, sel := range map[string]*metav1.LabelSelector{"everywhere": nil, "team-a": {MatchLabels: map[string]string{"team": "a"}}} {
		e.bundle(name, trustv1alpha1.BundleSpec{
			Sources: []trustv1alpha1.BundleSource{{InLine: a.pem}},
			Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}, NamespaceSelector: sel},
		})
		e.waitSynced(name, metav1.ConditionTrue, ReasonSynced)
	}
	teamA := client.ObjectKey{Name: "team-a"}
	before := e.passes.Count(teamA)
	for _, ns := range []string{"other-1", "other-2"} {
		e.namespace(ns, nil)
		e.waitTargets("everywhere", "ca.pem", bundleOf(t, a), e.allNamespaces()...)
	}
	if n := e.passes.Count(teamA) - before; n != 0 {
		t.Errorf("%d passes of Bundle team-a for namespaces it does not select, want 0", n)
	}
	relabel := func(lbls map[string]string) {
		ns := &corev1.Namespace{}
		if err := e.c.Get(t.Context(), client.ObjectKey{Name: "other-1"}, ns); err != nil {
			t.Fatal(err)
		}
		ns.Labels = lbls
		if err := e.c.Update(t.Context(), ns); err != nil {
			t.Fatal(err)
		}
	}
	relabel(map[string]string{"team": "a"})
	e.waitTargets("team-a", "ca.pem", bundleOf(t, a), "other-1")
	relabel(nil)
	e.waitTargets("team-a", "ca.pem", "")
}

// TestSecretTargetOverriddenThroughStringData server-side applies a
// Secret target with stringData under the bundle's key, as Helm,
// kustomize or kubectl apply --server-side of a Secret manifest do: the
// API server stores the value in data and records the field under
// stringData for that manager, so the controller's field manager still
// owns data[ca.crt]. The bundle is put back, and passes after write
// nothing. Seen failing before the fix: the Bundle stayed Synced while
// the Secret in "apps" held the other value (the targets are cached as
// metadata only).
func TestSecretTargetOverriddenThroughStringData(t *testing.T) {
	e := start(t, Options{SecretTargetsEnabled: true}, false)
	a := newTestCert(t, "a", false, time.Time{})
	e.namespace("apps", nil)
	e.bundle("corp", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{InLine: a.pem}},
		Target:  trustv1alpha1.BundleTarget{Secret: &trustv1alpha1.TargetTemplate{Key: "ca.crt"}},
	})
	e.waitSynced("corp", metav1.ConditionTrue, ReasonSynced)
	want := bundleOf(t, a)
	e.waitSecretTargets("corp", "ca.crt", want, e.allNamespaces()...)

	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata":   map[string]any{"namespace": "apps", "name": "corp"},
		"stringData": map[string]any{"ca.crt": "not the bundle"},
	}}
	if err := e.c.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("someone-else")); err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{}
	if err := e.c.Get(t.Context(), client.ObjectKey{Namespace: "apps", Name: "corp"}, s); err != nil {
		t.Fatal(err)
	}
	if string(s.Data["ca.crt"]) != "not the bundle" {
		t.Fatalf("the apply of stringData did not land: data[ca.crt] = %q", s.Data["ca.crt"])
	}
	e.passes.Touch(t, e.c, &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: "corp"}}, "after-override")
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "corp"}, s); err != nil {
			return err
		}
		b := &trustv1alpha1.Bundle{}
		if err := e.c.Get(ctx, client.ObjectKey{Name: "corp"}, b); err != nil {
			return err
		}
		synced := conditions.Find(b.Status.Conditions, trustv1alpha1.ConditionSynced)
		if got := string(s.Data["ca.crt"]); got != want {
			return fmt.Errorf("the Bundle says Synced %s (%s) while the Secret target in apps holds %q under ca.crt, not the bundle", synced.Status, synced.Message, got)
		}
		return nil
	}, bosuntest.Timeout(30*time.Second))
	e.quiet("corp", "a Bundle whose Secret target was repaired")
}

// TestTargetLosesItsSetLabel: the
// manager's cache holds only ConfigMaps labelled as the set's
// (CacheOptions), and keeps their managedFields (the lean cache keeps a
// set child's only). A target whose bosun.dev/set label someone removes
// leaves the cache: the controller finds it on the API server, takes it
// back, and holds the bundle; once repaired, passes write nothing.
func TestTargetLosesItsSetLabel(t *testing.T) {
	e := start(t, Options{}, false)
	a := newTestCert(t, "a", false, time.Time{})
	e.namespace("team-a", nil)
	e.bundle("corp", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{InLine: a.pem}},
		Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}},
	})
	e.waitSynced("corp", metav1.ConditionTrue, ReasonSynced)
	want := bundleOf(t, a)
	e.waitTargets("corp", "ca.pem", want, e.allNamespaces()...)

	bosuntest.Eventually(t, func(ctx context.Context) error {
		cm := &corev1.ConfigMap{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "corp"}, cm); err != nil {
			return err
		}
		delete(cm.Labels, children.LabelSet)
		cm.Data["ca.pem"] = "tampered"
		return e.c.Update(ctx, cm)
	}, bosuntest.Timeout(timeout))
	bosuntest.Eventually(t, func(ctx context.Context) error {
		cm := &corev1.ConfigMap{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "team-a", Name: "corp"}, cm); err != nil {
			return err
		}
		if cm.Labels[children.LabelSet] != ControllerName || cm.Data["ca.pem"] != want {
			return fmt.Errorf("the target in team-a: labels %v, ca.pem %q: want the set's label and the bundle put back", cm.Labels, cm.Data["ca.pem"])
		}
		return nil
	}, bosuntest.Timeout(timeout))
	e.quiet("corp", "a Bundle whose target was repaired")
}
