package trust

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/children"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// trustManagerApply writes, as trust-manager v0.25.0 does
// (pkg/bundle/internal/target: a server-side apply with the field manager
// "trust-manager", forcing ownership), the target of kind (ConfigMap or
// Secret) of the Bundle b in namespace ns, holding bundle under key and
// the template's labels.
func trustManagerApply(t *testing.T, c client.Client, kind, ns string, b *trustv1alpha1.Bundle, key, bundle string, lbls map[string]string) {
	t.Helper()
	labels := map[string]any{trustv1alpha1.LabelBundle: b.Name}
	for k, v := range lbls {
		labels[k] = v
	}
	data := map[string]any{key: bundle}
	if kind == "Secret" {
		// The unstructured form of a Secret's []byte is its base64 text.
		data = map[string]any{key: base64.StdEncoding.EncodeToString([]byte(bundle))}
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       kind,
		"metadata": map[string]any{
			"name":        b.Name,
			"namespace":   ns,
			"labels":      labels,
			"annotations": map[string]any{trustv1alpha1.AnnotationHash: "trust-manager's hash"},
			"ownerReferences": []any{map[string]any{
				"apiVersion": trustv1alpha1.GroupVersion.String(), "kind": "Bundle", "name": b.Name, "uid": string(b.UID),
				"controller": true, "blockOwnerDeletion": true,
			}},
		},
	}}
	u.Object["data"] = data
	if err := c.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("trust-manager"), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
}

// TestSwitchFromTrustManagerLeavesNoStaleKey: a cluster switched
// from trust-manager to the port keeps its targets, which the port takes
// over on its first pass. The docs promise that a new target key leaves
// no data under the old one, and that removed template labels leave
// nothing stale. On a target trust-manager wrote, both stay: its field
// manager ("trust-manager") still owns them, and server-side apply removes
// a field only when no manager owns it. Consumers keep reading the old
// key, frozen at the bundle of the switch.
func TestSwitchFromTrustManagerLeavesNoStaleKey(t *testing.T) {
	e := start(t, Options{SecretTargetsEnabled: true}, false)
	a, b := newTestCert(t, "a", false, time.Time{}), newTestCert(t, "b", false, time.Time{})
	e.namespace("legacy", nil)
	e.bundle("corp", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{InLine: a.pem}},
		Target: trustv1alpha1.BundleTarget{
			ConfigMap:         &trustv1alpha1.TargetTemplate{Key: "ca.pem", Metadata: trustv1alpha1.TargetMetadata{Labels: map[string]string{"team": "x"}}},
			Secret:            &trustv1alpha1.TargetTemplate{Key: "ca.pem"},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"trust": "yes"}},
		},
	})
	bundle := e.waitSynced("corp", metav1.ConditionTrue, ReasonSynced)
	want := bundleOf(t, a)

	// trust-manager's targets, as it left them.
	trustManagerApply(t, e.c, "ConfigMap", "legacy", bundle, "ca.pem", want, map[string]string{"team": "x"})
	trustManagerApply(t, e.c, "Secret", "legacy", bundle, "ca.pem", want, nil)

	// The switch: the namespace is selected, the port takes the targets over.
	ns := &corev1.Namespace{}
	if err := e.c.Get(t.Context(), client.ObjectKey{Name: "legacy"}, ns); err != nil {
		t.Fatal(err)
	}
	ns.Labels = map[string]string{"trust": "yes"}
	if err := e.c.Update(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		cm := &corev1.ConfigMap{}
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: "legacy", Name: "corp"}, cm); err != nil {
			return err
		}
		if cm.Labels[children.LabelSet] != ControllerName {
			return fmt.Errorf("the target is not taken over yet: labels %v", cm.Labels)
		}
		return nil
	}, bosuntest.Timeout(timeout))

	// A new key, a new certificate, the template label removed.
	e.patch("corp", func(bd *trustv1alpha1.Bundle) {
		bd.Spec.Sources = []trustv1alpha1.BundleSource{{InLine: b.pem}}
		bd.Spec.Target.ConfigMap = &trustv1alpha1.TargetTemplate{Key: "new.pem"}
		bd.Spec.Target.Secret = &trustv1alpha1.TargetTemplate{Key: "new.pem"}
	})
	want = bundleOf(t, b)
	targets := e.waitTargets("corp", "new.pem", want, "legacy")
	secrets := e.waitSecretTargets("corp", "new.pem", want, "legacy")
	cm, s := targets["legacy"], secrets["legacy"]
	if old, stale := cm.Data["ca.pem"]; stale {
		t.Errorf("the ConfigMap target trust-manager wrote still holds the old key ca.pem after the key changed to new.pem (the old bundle, certificate a: %t); its managedFields: %v", old == bundleOf(t, a), managers(cm.ManagedFields))
	}
	if _, stale := s.Data["ca.pem"]; stale {
		t.Errorf("the Secret target trust-manager wrote still holds the old key ca.pem after the key changed to new.pem; its managedFields: %v", managers(s.ManagedFields))
	}
	if v, stale := cm.Labels["team"]; stale {
		t.Errorf("the ConfigMap target trust-manager wrote keeps the template label team=%s removed from the Bundle", v)
	}
}

// managers lists the field managers of entries and their operations.
func managers(entries []metav1.ManagedFieldsEntry) []string {
	var out []string
	for _, m := range entries {
		out = append(out, m.Manager+"/"+string(m.Operation))
	}
	return out
}

// TestWebhookRefusesWhatTrustManagerRefuses: the docs promise
// that the webhook "refuses what trust-manager's webhook refuses", so that
// a cluster may keep trust-manager's CRD, and that this CRD, with its CEL
// rules, needs no webhook. trust-manager v0.25.0's webhook
// (pkg/webhook/validation.go) also runs
// metav1validation.ValidateLabelSelector on each source's selector and on
// the namespace selector, and ValidateLabels/ValidateAnnotations on the
// targets' templates. Neither trust-manager's CRD nor this one checks
// these, and validateBundle does not: each Bundle below is refused by
// trust-manager and admitted by the port.
func TestWebhookRefusesWhatTrustManagerRefuses(t *testing.T) {
	cm := &trustv1alpha1.TargetTemplate{Key: "ca.pem"}
	inline := []trustv1alpha1.BundleSource{{InLine: "x"}}
	tests := []struct {
		name string
		spec trustv1alpha1.BundleSpec
	}{
		{name: "namespace selector In without values", spec: trustv1alpha1.BundleSpec{Sources: inline, Target: trustv1alpha1.BundleTarget{
			ConfigMap:         cm,
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpIn}}},
		}}},
		{name: "namespace selector of an unknown operator", spec: trustv1alpha1.BundleSpec{Sources: inline, Target: trustv1alpha1.BundleTarget{
			ConfigMap:         cm,
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Bogus"}}},
		}}},
		{name: "namespace selector of an invalid label key", spec: trustv1alpha1.BundleSpec{Sources: inline, Target: trustv1alpha1.BundleTarget{
			ConfigMap:         cm,
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"not a key!": "x"}},
		}}},
		{name: "source selector Exists with values", spec: trustv1alpha1.BundleSpec{
			Sources: []trustv1alpha1.BundleSource{{Secret: &trustv1alpha1.SourceObjectKeySelector{
				Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "ca", Operator: metav1.LabelSelectorOpExists, Values: []string{"yes"}}}},
				Key:      "ca.crt",
			}}},
			Target: trustv1alpha1.BundleTarget{ConfigMap: cm},
		}},
		{name: "template label of an invalid key", spec: trustv1alpha1.BundleSpec{Sources: inline, Target: trustv1alpha1.BundleTarget{
			ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem", Metadata: trustv1alpha1.TargetMetadata{Labels: map[string]string{"not a key!": "x"}}},
		}}},
		{name: "template label of an invalid value", spec: trustv1alpha1.BundleSpec{Sources: inline, Target: trustv1alpha1.BundleTarget{
			Secret: &trustv1alpha1.TargetTemplate{Key: "ca.pem", Metadata: trustv1alpha1.TargetMetadata{Labels: map[string]string{"team": "not a value!"}}},
		}}},
		{name: "template annotation of an invalid key", spec: trustv1alpha1.BundleSpec{Sources: inline, Target: trustv1alpha1.BundleTarget{
			ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem", Metadata: trustv1alpha1.TargetMetadata{Annotations: map[string]string{"a/b/c": "x"}}},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: tt.spec}
			theirs := trustManagerChecks(b)
			if len(theirs) == 0 {
				t.Fatal("the test is wrong: trust-manager's checks admit this Bundle")
			}
			if _, errs := validateBundle(t.Context(), nil, b); len(errs) == 0 {
				t.Errorf("the webhook admits a Bundle trust-manager's webhook refuses with %v", theirs.ToAggregate())
			}
		})
	}
}

// trustManagerChecks runs the checks trust-manager v0.25.0's webhook
// (pkg/webhook/validation.go) makes with apimachinery's validators, which
// neither CRD states: the label selectors, and the targets' template
// labels and annotations.
func trustManagerChecks(b *trustv1alpha1.Bundle) field.ErrorList {
	var el field.ErrorList
	path := field.NewPath("spec")
	for i, s := range b.Spec.Sources {
		for name, sel := range map[string]*trustv1alpha1.SourceObjectKeySelector{"configMap": s.ConfigMap, "secret": s.Secret} {
			if sel != nil {
				el = append(el, metav1validation.ValidateLabelSelector(sel.Selector, metav1validation.LabelSelectorValidationOptions{}, path.Child("sources").Index(i).Child(name, "selector"))...)
			}
		}
	}
	for name, tmpl := range map[string]*trustv1alpha1.TargetTemplate{"configMap": b.Spec.Target.ConfigMap, "secret": b.Spec.Target.Secret} {
		if tmpl != nil {
			p := path.Child("target", name, "metadata")
			el = append(el, apivalidation.ValidateAnnotations(tmpl.Metadata.Annotations, p.Child("annotations"))...)
			el = append(el, metav1validation.ValidateLabels(tmpl.Metadata.Labels, p.Child("labels"))...)
		}
	}
	el = append(el, metav1validation.ValidateLabelSelector(b.Spec.Target.NamespaceSelector, metav1validation.LabelSelectorValidationOptions{}, path.Child("target", "namespaceSelector"))...)
	return el
}

// TestTargetLabelsRemovedPutBack: the cache holds, outside the
// trust namespace, only the ConfigMaps that carry the set label. A user
// who strips the labels off a target makes it vanish from the cache; the
// target must still be put back (labels, data) rather than left
// unmanaged, and a later source change must reach it.
func TestTargetLabelsRemovedPutBack(t *testing.T) {
	e := start(t, Options{}, false)
	a, b := newTestCert(t, "a", false, time.Time{}), newTestCert(t, "b", false, time.Time{})
	e.namespace("team-a", nil)
	e.source("corp-ca", map[string]string{"ca.crt": a.pem}, nil)
	e.bundle("corp", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Name: "corp-ca", Key: "ca.crt"}}},
		Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}},
	})
	e.waitSynced("corp", metav1.ConditionTrue, ReasonSynced)
	e.waitTargets("corp", "ca.pem", bundleOf(t, a), e.allNamespaces()...)

	cm := &corev1.ConfigMap{}
	if err := e.c.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: "corp"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Labels = nil
	cm.Data["ca.pem"] = "tampered"
	if err := e.c.Update(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	e.waitTargets("corp", "ca.pem", bundleOf(t, a), e.allNamespaces()...)
	e.source("corp-ca", map[string]string{"ca.crt": b.pem}, nil)
	e.waitTargets("corp", "ca.pem", bundleOf(t, b), e.allNamespaces()...)
	if err := e.c.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: "corp"}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Labels[children.LabelSet] != ControllerName {
		t.Errorf("the target whose labels were removed is not a member again: labels %v", cm.Labels)
	}
}

// TestConflictingTargetHoldsBackNoOtherNamespace: the docs
// take a foreign ConfigMap of the Bundle's name over because "refused, it
// would hold back the targets of every other namespace". One the port may
// not take over (ChildConflict) still does: a ConfigMap of the Bundle's
// name that a tenant makes in its own namespace, controlled by another
// object or carrying the set label, leaves every namespace of the cluster
// without its target, and the Bundle is not retried (the error is
// terminal). trust-manager applies each target on its own and retries, so
// the other namespaces get theirs.
func TestConflictingTargetHoldsBackNoOtherNamespace(t *testing.T) {
	blockers := map[string]func(e *env) *corev1.ConfigMap{
		"controlled by another object": func(e *env) *corev1.ConfigMap {
			owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "aaa-tenant", Name: "owner"}}
			if err := e.c.Create(t.Context(), owner); err != nil {
				t.Fatal(err)
			}
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "aaa-tenant", Name: "corp", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: new(true),
			}}}, Data: map[string]string{"theirs": "x"}}
		},
		"labelled for the set": func(*env) *corev1.ConfigMap {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "aaa-tenant", Name: "corp", Labels: map[string]string{children.LabelSet: ControllerName}},
				Data: map[string]string{"theirs": "x"}}
		},
	}
	for name, blocker := range blockers {
		t.Run(name, func(t *testing.T) {
			e := start(t, Options{}, false)
			a, b := newTestCert(t, "a", false, time.Time{}), newTestCert(t, "b", false, time.Time{})
			e.namespace("aaa-tenant", nil)
			if err := e.c.Create(t.Context(), blocker(e)); err != nil {
				t.Fatal(err)
			}
			e.namespace("team-a", nil)
			e.source("corp-ca", map[string]string{"ca.crt": a.pem}, nil)
			e.bundle("corp", trustv1alpha1.BundleSpec{
				Sources: []trustv1alpha1.BundleSource{{ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Name: "corp-ca", Key: "ca.crt"}}},
				Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}},
			})
			var others []string
			for _, ns := range e.allNamespaces() {
				if ns != "aaa-tenant" {
					others = append(others, ns)
				}
			}
			e.waitTargets("corp", "ca.pem", bundleOf(t, a), others...)
			e.source("corp-ca", map[string]string{"ca.crt": b.pem}, nil)
			e.waitTargets("corp", "ca.pem", bundleOf(t, b), others...)
		})
	}
}

// TestQuietAfterRestart: a converged Bundle with ConfigMap and
// Secret targets and both additional formats, in several namespaces:
// after the operator restarts (a new manager, memory lost), its passes
// write nothing.
func TestQuietAfterRestart(t *testing.T) {
	e := newEnv(t, false)
	cp := e.cp
	opts := Options{SecretTargetsEnabled: true}
	e.namespace("team-a", nil)
	a := newTestCert(t, "a", false, time.Time{})
	t.Run("before", func(t *testing.T) {
		first := &env{t: t, cp: cp, c: cp.Client, writes: &bosuntest.WriteCounter{}, passes: &passLog{}}
		bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{Configure: CacheOptions(withTrustNamespace(opts))}, first.setup(opts))
		first.bundle("corp", trustv1alpha1.BundleSpec{
			Sources: []trustv1alpha1.BundleSource{{InLine: a.pem}},
			Target: trustv1alpha1.BundleTarget{
				ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem", Metadata: trustv1alpha1.TargetMetadata{Labels: map[string]string{"team": "x"}}},
				Secret:    &trustv1alpha1.TargetTemplate{Key: "ca.crt", Metadata: trustv1alpha1.TargetMetadata{Annotations: map[string]string{"note": "y"}}},
				AdditionalFormats: &trustv1alpha1.AdditionalFormats{
					JKS:    &trustv1alpha1.JKS{KeySelector: trustv1alpha1.KeySelector{Key: "ca.jks"}},
					PKCS12: &trustv1alpha1.PKCS12{KeySelector: trustv1alpha1.KeySelector{Key: "ca.p12"}, Profile: trustv1alpha1.Modern2023PKCS12Profile},
				},
			},
		})
		first.waitSynced("corp", metav1.ConditionTrue, ReasonSynced)
		first.waitTargets("corp", "ca.pem", bundleOf(t, a), first.allNamespaces()...)
		first.waitSecretTargets("corp", "ca.crt", bundleOf(t, a), first.allNamespaces()...)
		first.passes.Touch(t, first.c, &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: "corp"}}, "settled")
	})
	bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{Configure: CacheOptions(withTrustNamespace(opts))}, e.setup(opts))
	obj := &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: "corp"}}
	for i := range 3 {
		e.passes.Touch(t, e.c, obj, fmt.Sprint("after-", i))
	}
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes by the passes over a converged Bundle after a restart, want 0: %v", n, e.writes.Writes())
	}
}

// TestTakenOverSecretNotDeletedWhole: promise 1 of the seam
// review is that nothing is deleted that bosun did not create. A Secret
// of the Bundle's name that a team made (here holding its own key) is
// taken over; when its namespace leaves the selector, trust-manager only
// removes its own keys, and the port deletes the team's Secret whole,
// with the team's data. (docs/EXAMPLES.md lists it under "What it does
// not do"; it still breaks the promise and loses user data.)
func TestTakenOverSecretNotDeletedWhole(t *testing.T) {
	e := start(t, Options{SecretTargetsEnabled: true}, false)
	a := newTestCert(t, "a", false, time.Time{})
	e.namespace("app", map[string]string{"trust": "yes"})
	theirs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "corp"}, StringData: map[string]string{"password": "the team's"}}
	if err := e.c.Create(t.Context(), theirs); err != nil {
		t.Fatal(err)
	}
	e.bundle("corp", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{InLine: a.pem}},
		Target: trustv1alpha1.BundleTarget{
			Secret:            &trustv1alpha1.TargetTemplate{Key: "ca.crt"},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"trust": "yes"}},
		},
	})
	e.waitSecretTargets("corp", "ca.crt", bundleOf(t, a), "app")
	ns := &corev1.Namespace{}
	if err := e.c.Get(t.Context(), client.ObjectKey{Name: "app"}, ns); err != nil {
		t.Fatal(err)
	}
	ns.Labels = nil
	if err := e.c.Update(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	e.waitSynced("corp", metav1.ConditionTrue, ReasonSynced)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		s := &corev1.Secret{}
		if err := e.c.Get(ctx, client.ObjectKeyFromObject(theirs), s); err != nil {
			return fmt.Errorf("the team's Secret, taken over, is gone with its own data once its namespace left the selector: %w", err)
		}
		if string(s.Data["password"]) != "the team's" {
			return fmt.Errorf("the team's Secret lost its own key: %v", s.Data)
		}
		if _, ok := s.Data["ca.crt"]; ok {
			return errors.New("the team's Secret still holds the target key")
		}
		return nil
	}, bosuntest.Timeout(15*time.Second))
}
