package trust

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// trustNamespace is the trust namespace of the tests: trust-manager's
// default.
const trustNamespace = "cert-manager"

// timeout bounds each wait of the envtest tests.
const timeout = time.Minute

// env is a control plane of its own, since Bundles reach every
// namespace, with the Bundle controller running.
type env struct {
	t      *testing.T
	cp     *controlplane.ControlPlane
	c      client.Client
	writes *bosuntest.WriteCounter
	passes *passLog
}

// start runs the Bundle controller with opts (in trustNamespace) on a new
// control plane, with kube-controller-manager when gc, for its garbage
// collector.
func start(t *testing.T, opts Options, gc bool) *env {
	t.Helper()
	e := newEnv(t, gc)
	bosuntest.RunManagerWith(t, e.cp, bosuntest.ManagerOptions{Configure: CacheOptions(withTrustNamespace(opts))}, e.setup(opts))
	return e
}

// newEnv starts a new control plane, with kube-controller-manager when
// gc, and makes the trust namespace in it; no controller runs yet.
func newEnv(t *testing.T, gc bool) *env {
	t.Helper()
	cpOpts, err := controlplane.OptionsFor(AddToScheme, CRDs)()
	if err != nil {
		t.Fatal(err)
	}
	cpOpts.ControllerManager = gc
	cp := bosuntest.Start(t, cpOpts)
	e := &env{t: t, cp: cp, c: cp.Client, writes: &bosuntest.WriteCounter{}, passes: &passLog{}}
	e.namespace(trustNamespace, nil)
	return e
}

// setup registers the controller with opts, through the counting client,
// and records its passes.
func (e *env) setup(opts Options) func(ctrl.Manager) error {
	opts = withTrustNamespace(opts)
	return func(mgr ctrl.Manager) error {
		bosun.ObservationOf(mgr).AddObserver(e.passes)
		c := e.passes.WrapClient(e.writes.Wrap(mgr.GetClient()))
		return SetupWithManager(bosuntest.ManagerWithClient(mgr, c), opts)
	}
}

// withTrustNamespace returns opts with the tests' trust namespace.
func withTrustNamespace(opts Options) Options {
	opts.TrustNamespace = trustNamespace
	return opts
}

// namespace creates a namespace with labels.
func (e *env) namespace(name string, lbls map[string]string) {
	e.t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
	if err := e.c.Create(e.t.Context(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		e.t.Fatal(err)
	}
}

// source writes a ConfigMap of the trust namespace with data.
func (e *env) source(name string, data map[string]string, lbls map[string]string) {
	e.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: trustNamespace, Name: name, Labels: lbls}}
	err := e.c.Get(e.t.Context(), client.ObjectKeyFromObject(cm), cm)
	switch {
	case apierrors.IsNotFound(err):
		cm.Data = data
		err = e.c.Create(e.t.Context(), cm)
	case err == nil:
		cm.Data, cm.Labels = data, lbls
		err = e.c.Update(e.t.Context(), cm)
	}
	if err != nil {
		e.t.Fatal(err)
	}
}

// secret writes a Secret of the trust namespace with data.
func (e *env) secret(name string, data map[string]string) {
	e.t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: trustNamespace, Name: name}, StringData: data}
	if err := e.c.Create(e.t.Context(), s); err != nil {
		e.t.Fatal(err)
	}
}

// bundle creates a Bundle.
func (e *env) bundle(name string, spec trustv1alpha1.BundleSpec) {
	e.t.Helper()
	b := &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	if err := e.c.Create(e.t.Context(), b); err != nil {
		e.t.Fatal(err)
	}
}

// patch changes the Bundle name.
func (e *env) patch(name string, change func(*trustv1alpha1.Bundle)) {
	e.t.Helper()
	b := &trustv1alpha1.Bundle{}
	if err := e.c.Get(e.t.Context(), client.ObjectKey{Name: name}, b); err != nil {
		e.t.Fatal(err)
	}
	base := b.DeepCopy()
	change(b)
	if err := e.c.Patch(e.t.Context(), b, client.MergeFrom(base)); err != nil {
		e.t.Fatal(err)
	}
}

// waitSynced waits until the Bundle name has Synced with status and
// reason, and Ready with the same status, for its generation, and returns
// it.
func (e *env) waitSynced(name string, status metav1.ConditionStatus, reason conditions.Reason) *trustv1alpha1.Bundle {
	e.t.Helper()
	b := &trustv1alpha1.Bundle{}
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		if err := e.c.Get(ctx, client.ObjectKey{Name: name}, b); err != nil {
			return err
		}
		s := conditions.Find(b.Status.Conditions, trustv1alpha1.ConditionSynced)
		r := conditions.Find(b.Status.Conditions, conditions.TypeReady)
		switch {
		case s == nil || r == nil:
			return fmt.Errorf("conditions %v", b.Status.Conditions)
		case s.ObservedGeneration != b.Generation || s.Status != status || s.Reason != string(reason):
			return fmt.Errorf("Synced %s %s (%s) for generation %d of %d, want %s %s", s.Status, s.Reason, s.Message, s.ObservedGeneration, b.Generation, status, reason)
		case r.Status != status:
			return fmt.Errorf("Ready %s %s (%s), want %s", r.Status, r.Reason, r.Message, status)
		}
		return nil
	}, bosuntest.Timeout(timeout))
	return b
}

// waitTargets waits until exactly the namespaces in want hold the target
// ConfigMap of the Bundle name with data under key, and returns them.
func (e *env) waitTargets(name, key, data string, want ...string) map[string]corev1.ConfigMap {
	e.t.Helper()
	out := map[string]corev1.ConfigMap{}
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		list := &corev1.ConfigMapList{}
		if err := e.c.List(ctx, list, client.MatchingLabels{trustv1alpha1.LabelBundle: name}); err != nil {
			return err
		}
		clear(out)
		for _, cm := range list.Items {
			if cm.DeletionTimestamp.IsZero() {
				out[cm.Namespace] = cm
			}
		}
		if len(out) != len(want) {
			return fmt.Errorf("targets in %d namespaces, want %v", len(out), want)
		}
		for _, ns := range want {
			cm, ok := out[ns]
			if !ok {
				return fmt.Errorf("no target in %s", ns)
			}
			if cm.Data[key] != data {
				return fmt.Errorf("the target in %s holds %q under %q, want the bundle", ns, cm.Data[key], key)
			}
		}
		return nil
	}, bosuntest.Timeout(timeout))
	return out
}

// quiet settles the Bundle name with a pass, then checks that two more
// passes write nothing; what names the Bundle's state in the error.
func (e *env) quiet(name, what string) {
	e.t.Helper()
	key := &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: name}}
	e.passes.Touch(e.t, e.c, key, "settled")
	e.writes.Reset()
	e.passes.Touch(e.t, e.c, key, "quiet-1")
	e.passes.Touch(e.t, e.c, key, "quiet-2")
	if n := e.writes.Total(); n != 0 {
		e.t.Errorf("%d writes by passes over %s, want 0: %v", n, what, e.writes.Writes())
	}
}

// allNamespaces lists every namespace, by name.
func (e *env) allNamespaces() []string {
	e.t.Helper()
	list := &corev1.NamespaceList{}
	if err := e.c.List(e.t.Context(), list); err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, ns := range list.Items {
		out = append(out, ns.Name)
	}
	return out
}

// passLog records the controller's passes for Touch, and those that
// failed.
type passLog struct {
	bosuntest.ReconcileCounter
	mu sync.Mutex
	// failed lists, by object, the errors of the passes that failed:
	// controller-runtime runs them again on its own, with backoff.
	failed map[client.ObjectKey][]string
}

// ObservePass implements bosun.PassObserver.
func (l *passLog) ObservePass(_ context.Context, r bosun.PassReport) {
	l.Record(bosuntest.ReconcileCall{Request: reconcile.Request{NamespacedName: r.Object}, Start: r.Start, Duration: r.Duration})
	if r.Error == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed == nil {
		l.failed = map[client.ObjectKey][]string{}
	}
	l.failed[r.Object] = append(l.failed[r.Object], r.Error)
}

// failedPasses are the errors of the passes over key that failed.
func (l *passLog) failedPasses(key client.ObjectKey) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.failed[key])
}

// bundleOf is the bundle certs make, computed apart from the controller.
func bundleOf(t *testing.T, certs ...testCert) string {
	t.Helper()
	p := newCertPool(false, false)
	for _, c := range certs {
		if err := p.addPEM([]byte(c.pem)); err != nil {
			t.Fatal(err)
		}
	}
	return p.pem()
}

// TestBundleReachesEveryNamespace: a Bundle of a ConfigMap source and an
// inline one writes the same bundle (each certificate once) into a
// ConfigMap named after it in every namespace, with the template's labels
// and annotations, the bundle label, the hash annotation and the Bundle
// as controller; Synced and Ready are True, with an event. A new
// namespace gets its target, a changed source reaches every target, a
// target edited or deleted by someone else is put back, and a converged
// Bundle costs no write.
func TestBundleReachesEveryNamespace(t *testing.T) {
	e := start(t, Options{}, false)
	a, b, c := newTestCert(t, "a", false, time.Time{}), newTestCert(t, "b", false, time.Time{}), newTestCert(t, "c", false, time.Time{})
	e.source("corp-ca", map[string]string{"ca.crt": a.pem + b.pem}, nil)
	e.namespace("team-a", nil)
	e.bundle("corp", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{
			{ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Name: "corp-ca", Key: "ca.crt"}},
			{InLine: b.pem},
		},
		Target: trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{
			Key:      "bundle.pem",
			Metadata: trustv1alpha1.TargetMetadata{Labels: map[string]string{"team": "x"}, Annotations: map[string]string{"note": "y"}},
		}},
	})
	bundle := e.waitSynced("corp", metav1.ConditionTrue, ReasonSynced)
	want := bundleOf(t, a, b)
	targets := e.waitTargets("corp", "bundle.pem", want, e.allNamespaces()...)
	cm := targets["team-a"]
	if cm.Labels["team"] != "x" || cm.Annotations["note"] != "y" || cm.Annotations[trustv1alpha1.AnnotationHash] == "" || !metav1.IsControlledBy(&cm, bundle) {
		t.Errorf("the target's labels %v, annotations %v, owners %v: want the template's, the bundle label, the hash and the Bundle as controller", cm.Labels, cm.Annotations, cm.OwnerReferences)
	}
	e.waitEvent("corp", string(ReasonSynced))

	// A converged Bundle: passes write nothing.
	e.quiet("corp", "a converged Bundle")

	// A new namespace, a changed source.
	e.namespace("team-b", nil)
	e.waitTargets("corp", "bundle.pem", want, e.allNamespaces()...)
	e.source("corp-ca", map[string]string{"ca.crt": c.pem}, nil)
	want = bundleOf(t, b, c)
	e.waitTargets("corp", "bundle.pem", want, e.allNamespaces()...)

	// Edited, then deleted, by someone else: put back.
	edited := &corev1.ConfigMap{}
	if err := e.c.Get(t.Context(), client.ObjectKey{Namespace: "team-a", Name: "corp"}, edited); err != nil {
		t.Fatal(err)
	}
	edited.Data["bundle.pem"] = "tampered"
	if err := e.c.Update(t.Context(), edited); err != nil && !apierrors.IsConflict(err) {
		t.Fatal(err)
	}
	e.waitTargets("corp", "bundle.pem", want, e.allNamespaces()...)
	if err := e.c.Delete(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "corp"}}); err != nil {
		t.Fatal(err)
	}
	e.waitTargets("corp", "bundle.pem", want, e.allNamespaces()...)
}

// TestNamespaceSelectorAndKey: only the selected namespaces hold a target;
// a namespace relabelled in gets one and relabelled out loses it; a new
// target key leaves no data under the old one.
func TestNamespaceSelectorAndKey(t *testing.T) {
	e := start(t, Options{}, false)
	a := newTestCert(t, "a", false, time.Time{})
	e.namespace("in", map[string]string{"trust": "yes"})
	e.namespace("out", nil)
	e.bundle("sel", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{InLine: a.pem}},
		Target: trustv1alpha1.BundleTarget{
			ConfigMap:         &trustv1alpha1.TargetTemplate{Key: "ca.pem"},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"trust": "yes"}},
		},
	})
	b := e.waitSynced("sel", metav1.ConditionTrue, ReasonSynced)
	if msg := conditions.Find(b.Status.Conditions, trustv1alpha1.ConditionSynced).Message; !strings.Contains(msg, "trust=yes") {
		t.Errorf("Synced says %q, want the selector named", msg)
	}
	want := bundleOf(t, a)
	e.waitTargets("sel", "ca.pem", want, "in")

	relabel := func(name string, lbls map[string]string) {
		ns := &corev1.Namespace{}
		if err := e.c.Get(t.Context(), client.ObjectKey{Name: name}, ns); err != nil {
			t.Fatal(err)
		}
		ns.Labels = lbls
		if err := e.c.Update(t.Context(), ns); err != nil {
			t.Fatal(err)
		}
	}
	relabel("out", map[string]string{"trust": "yes"})
	e.waitTargets("sel", "ca.pem", want, "in", "out")
	relabel("in", nil)
	e.waitTargets("sel", "ca.pem", want, "out")

	e.patch("sel", func(b *trustv1alpha1.Bundle) { b.Spec.Target.ConfigMap.Key = "new.pem" })
	targets := e.waitTargets("sel", "new.pem", want, "out")
	if _, stale := targets["out"].Data["ca.pem"]; stale {
		t.Error("the target still holds the old key ca.pem")
	}
}

// TestSourceErrors: a missing source sets Synced False (SourceNotFound)
// and a source of invalid data False (SourceBuildError), each naming the
// source, with a Warning event; once fixed, the Bundle syncs.
func TestSourceErrors(t *testing.T) {
	e := start(t, Options{}, false)
	a := newTestCert(t, "a", false, time.Time{})
	e.bundle("broken", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Name: "later", Key: "ca.crt"}}},
		Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}},
	})
	b := e.waitSynced("broken", metav1.ConditionFalse, ReasonSourceNotFound)
	if msg := conditions.Find(b.Status.Conditions, trustv1alpha1.ConditionSynced).Message; !strings.Contains(msg, "ConfigMap cert-manager/later") {
		t.Errorf("Synced says %q, want the missing ConfigMap named", msg)
	}
	e.waitEvent("broken", string(ReasonSourceNotFound))

	e.source("later", map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"}, nil)
	b = e.waitSynced("broken", metav1.ConditionFalse, ReasonSourceBuildError)
	if msg := conditions.Find(b.Status.Conditions, trustv1alpha1.ConditionSynced).Message; !strings.Contains(msg, `ConfigMap cert-manager/later, key "ca.crt"`) {
		t.Errorf("Synced says %q, want the key named", msg)
	}

	e.source("later", map[string]string{"ca.crt": a.pem}, nil)
	e.waitSynced("broken", metav1.ConditionTrue, ReasonSynced)
	e.waitTargets("broken", "ca.pem", bundleOf(t, a), e.allNamespaces()...)
}

// TestDefaultCAsAndFormats: the default CA package joins the bundle and
// is named in status.defaultCAVersion; the JKS and PKCS#12 encodings are
// written beside the PEM and decode to its certificates; a Bundle with a
// Secret target is not synced while Secret targets are disabled, and no
// Secret is written.
func TestDefaultCAsAndFormats(t *testing.T) {
	root, extra := newTestCert(t, "root", false, time.Time{}), newTestCert(t, "extra", false, time.Time{})
	pkg := &DefaultPackage{Name: "test-package", Version: "1", Bundle: root.pem}
	e := start(t, Options{DefaultPackage: pkg}, false)
	e.bundle("formats", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{UseDefaultCAs: new(true)}, {InLine: extra.pem}},
		Target: trustv1alpha1.BundleTarget{
			ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"},
			AdditionalFormats: &trustv1alpha1.AdditionalFormats{
				JKS:    &trustv1alpha1.JKS{KeySelector: trustv1alpha1.KeySelector{Key: "ca.jks"}},
				PKCS12: &trustv1alpha1.PKCS12{KeySelector: trustv1alpha1.KeySelector{Key: "ca.p12"}, Profile: trustv1alpha1.Modern2023PKCS12Profile},
			},
		},
	})
	b := e.waitSynced("formats", metav1.ConditionTrue, ReasonSynced)
	if b.Status.DefaultCAPackageVersion != pkg.versionID() {
		t.Errorf("status.defaultCAVersion %q, want %q", b.Status.DefaultCAPackageVersion, pkg.versionID())
	}
	targets := e.waitTargets("formats", "ca.pem", bundleOf(t, root, extra), e.allNamespaces()...)
	cm := targets[trustNamespace]
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(cm.BinaryData["ca.jks"]), []byte(trustv1alpha1.DefaultJKSPassword)); err != nil || len(ks.Aliases()) != 2 {
		t.Errorf("the JKS target: %v, %d entries, want 2", err, len(ks.Aliases()))
	}
	if certs, err := pkcs12.DecodeTrustStore(cm.BinaryData["ca.p12"], ""); err != nil || len(certs) != 2 {
		t.Errorf("the PKCS#12 target: %v, %d certificates, want 2", err, len(certs))
	}

	e.bundle("secret", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{InLine: extra.pem}},
		Target:  trustv1alpha1.BundleTarget{Secret: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}},
	})
	e.waitSynced("secret", metav1.ConditionFalse, ReasonSecretTargetsDisabled)
	e.waitSecretTargets("secret", "ca.pem", "")
}

// TestSecretTargets: with Secret targets enabled, a Bundle's Secret
// targets hold the bundle and the additional formats in their data, in
// every namespace, beside its ConfigMaps; a Secret of the name made by
// someone else is taken over and its other keys kept; a target's data
// changed by someone else is put back; the Secret target removed from the
// spec takes its Secrets and leaves the ConfigMaps.
func TestSecretTargets(t *testing.T) {
	e := start(t, Options{SecretTargetsEnabled: true}, false)
	a := newTestCert(t, "a", false, time.Time{})
	e.namespace("apps", nil)
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "both"}, StringData: map[string]string{"theirs": "kept"}}
	if err := e.c.Create(t.Context(), foreign); err != nil {
		t.Fatal(err)
	}
	e.bundle("both", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{InLine: a.pem}},
		Target: trustv1alpha1.BundleTarget{
			ConfigMap:         &trustv1alpha1.TargetTemplate{Key: "ca.pem"},
			Secret:            &trustv1alpha1.TargetTemplate{Key: "ca.crt", Metadata: trustv1alpha1.TargetMetadata{Labels: map[string]string{"team": "platform"}}},
			AdditionalFormats: &trustv1alpha1.AdditionalFormats{JKS: &trustv1alpha1.JKS{KeySelector: trustv1alpha1.KeySelector{Key: "ca.jks"}}},
		},
	})
	e.waitSynced("both", metav1.ConditionTrue, ReasonSynced)
	e.waitTargets("both", "ca.pem", bundleOf(t, a), e.allNamespaces()...)
	secrets := e.waitSecretTargets("both", "ca.crt", bundleOf(t, a), e.allNamespaces()...)
	for ns, s := range secrets {
		ks := keystore.New()
		if err := ks.Load(bytes.NewReader(s.Data["ca.jks"]), []byte(trustv1alpha1.DefaultJKSPassword)); err != nil || len(ks.Aliases()) != 1 {
			t.Errorf("the JKS of the Secret target in %s: %v, %d entries, want 1", ns, err, len(ks.Aliases()))
		}
		if s.Labels["team"] != "platform" || s.Type != corev1.SecretTypeOpaque {
			t.Errorf("the Secret target in %s: labels %v, type %s, want the template's label and Opaque", ns, s.Labels, s.Type)
		}
	}
	if got := string(secrets["apps"].Data["theirs"]); got != "kept" {
		t.Errorf("the Secret taken over lost its other key: %q", got)
	}

	edited := secrets["apps"]
	edited.Data["ca.crt"] = []byte("changed by hand")
	if err := e.c.Update(t.Context(), &edited); err != nil {
		t.Fatal(err)
	}
	e.waitSecretTargets("both", "ca.crt", bundleOf(t, a), e.allNamespaces()...)

	e.patch("both", func(b *trustv1alpha1.Bundle) { b.Spec.Target.Secret = nil })
	e.waitSecretTargets("both", "ca.crt", "")
	e.waitTargets("both", "ca.pem", bundleOf(t, a), e.allNamespaces()...)
}

// waitSecretTargets waits until the Secret targets of the Bundle name are
// in the namespaces want only, each holding data under key, and returns
// them by namespace.
func (e *env) waitSecretTargets(name, key, data string, want ...string) map[string]corev1.Secret {
	e.t.Helper()
	out := map[string]corev1.Secret{}
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		list := &corev1.SecretList{}
		if err := e.c.List(ctx, list, client.MatchingLabels{trustv1alpha1.LabelBundle: name}); err != nil {
			return err
		}
		clear(out)
		for _, s := range list.Items {
			if s.DeletionTimestamp.IsZero() {
				out[s.Namespace] = s
			}
		}
		if len(out) != len(want) {
			return fmt.Errorf("Secret targets in %d namespaces, want %v", len(out), want)
		}
		for _, ns := range want {
			s, ok := out[ns]
			if !ok {
				return fmt.Errorf("no Secret target in %s", ns)
			}
			if string(s.Data[key]) != data {
				return fmt.Errorf("the Secret target in %s holds %q under %q, want the bundle", ns, s.Data[key], key)
			}
		}
		return nil
	}, bosuntest.Timeout(timeout))
	return out
}

// TestDeletedBundleTakesItsTargets: the garbage collector removes the
// targets of a deleted Bundle.
func TestDeletedBundleTakesItsTargets(t *testing.T) {
	e := start(t, Options{}, true)
	a := newTestCert(t, "a", false, time.Time{})
	e.bundle("gone", trustv1alpha1.BundleSpec{
		Sources: []trustv1alpha1.BundleSource{{InLine: a.pem}},
		Target:  trustv1alpha1.BundleTarget{ConfigMap: &trustv1alpha1.TargetTemplate{Key: "ca.pem"}},
	})
	e.waitSynced("gone", metav1.ConditionTrue, ReasonSynced)
	e.waitTargets("gone", "ca.pem", bundleOf(t, a), e.allNamespaces()...)
	if err := e.c.Delete(t.Context(), &trustv1alpha1.Bundle{ObjectMeta: metav1.ObjectMeta{Name: "gone"}}); err != nil {
		t.Fatal(err)
	}
	e.waitTargets("gone", "ca.pem", "")
}

// waitEvent waits for an event of reason about the Bundle name.
func (e *env) waitEvent(name, reason string) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		list := &eventsv1.EventList{}
		if err := e.c.List(ctx, list); err != nil {
			return err
		}
		for _, ev := range list.Items {
			if ev.Regarding.Kind == "Bundle" && ev.Regarding.Name == name && ev.Reason == reason {
				return nil
			}
		}
		return errors.New("no event " + reason + " about Bundle " + name)
	}, bosuntest.Timeout(timeout))
}
