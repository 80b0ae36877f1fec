package hello

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
)

// published checks that the Greeting at key is Ready for its current
// generation with status.message want, and that its ConfigMap holds want and
// is controlled by it. It returns the Greeting and the ConfigMap.
func published(ctx context.Context, c client.Client, key client.ObjectKey, want string) (*hellov1.Greeting, *corev1.ConfigMap, error) {
	g := &hellov1.Greeting{}
	if err := c.Get(ctx, key, g); err != nil {
		return nil, nil, err
	}
	ready := meta.FindStatusCondition(g.Status.Conditions, hellov1.ConditionReady)
	switch {
	case g.Status.ObservedGeneration != g.Generation:
		return nil, nil, fmt.Errorf("observedGeneration %d, generation %d", g.Status.ObservedGeneration, g.Generation)
	case ready == nil:
		return nil, nil, errors.New("no Ready condition")
	case ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != g.Generation:
		return nil, nil, fmt.Errorf("Ready condition %+v at generation %d", *ready, g.Generation)
	case g.Status.Message != want:
		return nil, nil, fmt.Errorf("status.message %q, want %q", g.Status.Message, want)
	}
	name := g.Spec.ConfigMapName
	if name == "" {
		name = g.Name
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: name}, cm); err != nil {
		return nil, nil, err
	}
	if got := cm.Data[hellov1.ConfigMapKey]; got != want {
		return nil, nil, fmt.Errorf("configmap holds %q, want %q", got, want)
	}
	if !metav1.IsControlledBy(cm, g) {
		return nil, nil, fmt.Errorf("configmap owners %+v do not include greeting %s as controller", cm.OwnerReferences, g.UID)
	}
	return g, cm, nil
}

// waitPublished waits until published succeeds.
func waitPublished(t *testing.T, c client.Client, key client.ObjectKey, want string) (*hellov1.Greeting, *corev1.ConfigMap) {
	t.Helper()
	var g *hellov1.Greeting
	var cm *corev1.ConfigMap
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var err error
		g, cm, err = published(ctx, c, key, want)
		return err
	})
	return g, cm
}

func TestGreetingLifecycle(t *testing.T) {
	cp := runController(t)
	ctx := t.Context()
	ns := bosuntest.Namespace(t, cp.Client)
	key := client.ObjectKey{Namespace: ns, Name: "world"}

	// Create: the API server fills in the default template, the controller
	// adds its finalizer, writes the ConfigMap and reports Ready.
	g := &hellov1.Greeting{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}, Spec: hellov1.GreetingSpec{Name: "World"}}
	if err := cp.Client.Create(ctx, g); err != nil {
		t.Fatalf("create greeting: %v", err)
	}
	if g.Spec.Template != hellov1.DefaultTemplate {
		t.Errorf("defaulted template = %q, want %q", g.Spec.Template, hellov1.DefaultTemplate)
	}
	g, _ = waitPublished(t, cp.Client, key, "Hello, World!")
	if !controllerutil.ContainsFinalizer(g, Finalizer) {
		t.Errorf("finalizers = %v, want %s", g.Finalizers, Finalizer)
	}
	firstGen := g.Generation

	// Update: a new name is a new generation; the ConfigMap and the status
	// follow it.
	base := g.DeepCopy()
	g.Spec.Name = "Gopher"
	if err := cp.Client.Patch(ctx, g, client.MergeFrom(base)); err != nil {
		t.Fatalf("patch greeting: %v", err)
	}
	if g.Generation != firstGen+1 {
		t.Errorf("generation after spec change = %d, want %d", g.Generation, firstGen+1)
	}
	g, _ = waitPublished(t, cp.Client, key, "Hello, Gopher!")
	if g.Status.ObservedGeneration != firstGen+1 {
		t.Errorf("observedGeneration = %d, want %d", g.Status.ObservedGeneration, firstGen+1)
	}

	// Delete: the controller removes the ConfigMap itself (no garbage
	// collector runs here) and then releases the Greeting.
	if err := cp.Client.Delete(ctx, g); err != nil {
		t.Fatalf("delete greeting: %v", err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := cp.Client.Get(ctx, key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("get configmap: %w, want NotFound", err)
		}
		if err := cp.Client.Get(ctx, key, &hellov1.Greeting{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("get greeting: %w, want NotFound", err)
		}
		return nil
	})
}

// configMapHidingClient is a client whose Gets of ConfigMaps answer Not
// Found while hide is set: a cache that has not yet seen a ConfigMap made
// moments ago.
type configMapHidingClient struct {
	client.Client
	hide *atomic.Bool
}

// Get reads through the wrapped client, but answers Not Found for a
// ConfigMap while hide is set.
func (c configMapHidingClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.ConfigMap); ok && c.hide.Load() {
		return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// runHidingConfigMaps runs the controller with a client that, while the
// returned switch is on, reads no ConfigMap, as a cache behind would.
func runHidingConfigMaps(t *testing.T, cp *controlplane.ControlPlane) *atomic.Bool {
	t.Helper()
	hide := &atomic.Bool{}
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		r := NewReconciler()
		r.Client = configMapHidingClient{Client: mgr.GetClient(), hide: hide}
		return bosun.ControllerManagedBy[*hellov1.Greeting](mgr).Complete(r)
	})
	return hide
}

// TestDeleteWithLaggingCache deletes a Greeting while the controller's
// cache does not show its ConfigMap, as when the Greeting is deleted right
// after the ConfigMap was made. The controller must not take the cache's
// word that the ConfigMap is gone: it deletes it before it lets the
// Greeting go, so that nothing is left (no garbage collector runs here).
func TestDeleteWithLaggingCache(t *testing.T) {
	cp := shared.ControlPlane(t)
	hide := runHidingConfigMaps(t, cp)
	ctx := t.Context()
	ns := bosuntest.Namespace(t, cp.Client)
	key := client.ObjectKey{Namespace: ns, Name: "brief"}
	g := &hellov1.Greeting{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}, Spec: hellov1.GreetingSpec{Name: "Brief"}}
	if err := cp.Client.Create(ctx, g); err != nil {
		t.Fatalf("create greeting: %v", err)
	}
	g, _ = waitPublished(t, cp.Client, key, "Hello, Brief!")

	hide.Store(true)
	if err := cp.Client.Delete(ctx, g); err != nil {
		t.Fatalf("delete greeting: %v", err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := cp.Client.Get(ctx, key, &hellov1.Greeting{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("get greeting: %w, want NotFound", err)
		}
		return nil
	})
	if err := cp.Client.Get(ctx, key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Greeting is gone and its ConfigMap left (get configmap: %v)", err)
	}
}

// TestCreateWithLaggingCache runs the controller while its cache shows no
// ConfigMap at all, as when a ConfigMap was made moments ago. A Greeting
// whose ConfigMap exists must keep that one and follow a change of its
// spec in it; a Greeting whose ConfigMap name is held by a ConfigMap of
// someone else must say so in Published and Ready, and leave that
// ConfigMap as it is.
func TestCreateWithLaggingCache(t *testing.T) {
	cp := shared.ControlPlane(t)
	hide := runHidingConfigMaps(t, cp)
	ctx := t.Context()
	ns := bosuntest.Namespace(t, cp.Client)

	key := client.ObjectKey{Namespace: ns, Name: "mine"}
	g := &hellov1.Greeting{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}, Spec: hellov1.GreetingSpec{Name: "Mine"}}
	if err := cp.Client.Create(ctx, g); err != nil {
		t.Fatalf("create greeting: %v", err)
	}
	g, first := waitPublished(t, cp.Client, key, "Hello, Mine!")
	hide.Store(true)
	base := g.DeepCopy()
	g.Spec.Name = "Mine again"
	if err := cp.Client.Patch(ctx, g, client.MergeFrom(base)); err != nil {
		t.Fatalf("patch greeting: %v", err)
	}
	if _, cm := waitPublished(t, cp.Client, key, "Hello, Mine again!"); cm.UID != first.UID {
		t.Errorf("configmap %s made again (uid %s, was %s)", cm.Name, cm.UID, first.UID)
	}

	theirs := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "taken"},
		Data:       map[string]string{hellov1.ConfigMapKey: "theirs"},
	}
	if err := cp.Client.Create(ctx, theirs); err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	taken := &hellov1.Greeting{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late"},
		Spec:       hellov1.GreetingSpec{Name: "Late", ConfigMapName: theirs.Name},
	}
	if err := cp.Client.Create(ctx, taken); err != nil {
		t.Fatalf("create greeting: %v", err)
	}
	want := `configmap "taken" exists and is not controlled by this greeting`
	bosuntest.Eventually(t, func(ctx context.Context) error {
		g := &hellov1.Greeting{}
		if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(taken), g); err != nil {
			return err
		}
		for _, typ := range []string{hellov1.ConditionPublished, hellov1.ConditionReady} {
			c := meta.FindStatusCondition(g.Status.Conditions, typ)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(hellov1.ReasonConfigMapNotOwned) || c.Message != want {
				return fmt.Errorf("%s condition %+v, want False, %s, %q", typ, c, hellov1.ReasonConfigMapNotOwned, want)
			}
		}
		return nil
	})
	after := &corev1.ConfigMap{}
	if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(theirs), after); err != nil {
		t.Fatalf("get configmap: %v", err)
	}
	if after.ResourceVersion != theirs.ResourceVersion || len(after.OwnerReferences) > 0 {
		t.Errorf("configmap of someone else changed: resourceVersion %s (was %s), owners %v", after.ResourceVersion, theirs.ResourceVersion, after.OwnerReferences)
	}
}

// TestConfigMapRepaired checks that the controller watches the ConfigMaps it
// controls: an edited one is put back, a deleted one is created again.
func TestConfigMapRepaired(t *testing.T) {
	cp := runController(t)
	ctx := t.Context()
	ns := bosuntest.Namespace(t, cp.Client)
	key := client.ObjectKey{Namespace: ns, Name: "crew"}
	g := &hellov1.Greeting{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name},
		Spec:       hellov1.GreetingSpec{Name: "crew", Template: "Ahoy, %s!", ConfigMapName: "crew-greeting"},
	}
	if err := cp.Client.Create(ctx, g); err != nil {
		t.Fatalf("create greeting: %v", err)
	}
	_, cm := waitPublished(t, cp.Client, key, "Ahoy, crew!")
	if cm.Name != "crew-greeting" {
		t.Errorf("configmap name = %q, want crew-greeting", cm.Name)
	}

	cm.Data[hellov1.ConfigMapKey] = "tampered"
	if err := cp.Client.Update(ctx, cm); err != nil {
		t.Fatalf("update configmap: %v", err)
	}
	_, cm = waitPublished(t, cp.Client, key, "Ahoy, crew!")

	if err := cp.Client.Delete(ctx, cm); err != nil {
		t.Fatalf("delete configmap: %v", err)
	}
	_, again := waitPublished(t, cp.Client, key, "Ahoy, crew!")
	if again.UID == cm.UID {
		t.Error("configmap was not created again")
	}
}

// TestGreetingValidation checks that the API server rejects bad Greetings
// with a message that names the field and the rule.
func TestGreetingValidation(t *testing.T) {
	cp := shared.ControlPlane(t)
	ctx := t.Context()
	ns := bosuntest.Namespace(t, cp.Client)
	const templateMsg = "template must contain exactly one %s; write %% for a literal percent sign"
	tests := []struct {
		name      string
		spec      hellov1.GreetingSpec
		wantField string
		wantMsg   string
	}{
		{name: "no-verb", spec: hellov1.GreetingSpec{Name: "x", Template: "Hello"}, wantField: "spec.template", wantMsg: templateMsg},
		{name: "two-verbs", spec: hellov1.GreetingSpec{Name: "x", Template: "%s and %s"}, wantField: "spec.template", wantMsg: templateMsg},
		{name: "other-verb", spec: hellov1.GreetingSpec{Name: "x", Template: "%d"}, wantField: "spec.template", wantMsg: templateMsg},
		{name: "lone-percent", spec: hellov1.GreetingSpec{Name: "x", Template: "100% %s"}, wantField: "spec.template", wantMsg: templateMsg},
		{name: "empty-name", spec: hellov1.GreetingSpec{Name: ""}, wantField: "spec.name", wantMsg: "should be at least 1 chars long"},
		{name: "bad-configmap-name", spec: hellov1.GreetingSpec{Name: "x", ConfigMapName: "Not_A_Name"}, wantField: "spec.configMapName", wantMsg: "should match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &hellov1.Greeting{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tt.name}, Spec: tt.spec}
			err := cp.Client.Create(ctx, g)
			checkInvalid(t, err, tt.wantField, tt.wantMsg)
		})
	}

	// Accepted: the same rule allows escaped percent signs.
	ok := &hellov1.Greeting{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "escaped"},
		Spec:       hellov1.GreetingSpec{Name: "x", Template: "100%% %s", ConfigMapName: "first"},
	}
	if err := cp.Client.Create(ctx, ok); err != nil {
		t.Fatalf("create greeting with escaped percent: %v", err)
	}

	// configMapName cannot change, nor be added or removed later. The merge
	// patches carry no resourceVersion, so only validation can refuse them.
	for _, name := range []string{"second", ""} {
		changed := ok.DeepCopy()
		changed.Spec.ConfigMapName = name
		err := cp.Client.Patch(ctx, changed, client.MergeFrom(ok))
		checkInvalid(t, err, "spec.configMapName", "configMapName is immutable")
	}
	plain := &hellov1.Greeting{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "plain"}, Spec: hellov1.GreetingSpec{Name: "x"}}
	if err := cp.Client.Create(ctx, plain); err != nil {
		t.Fatalf("create greeting: %v", err)
	}
	added := plain.DeepCopy()
	added.Spec.ConfigMapName = "added"
	checkInvalid(t, cp.Client.Patch(ctx, added, client.MergeFrom(plain)), "spec.configMapName", "configMapName is immutable")
}

// checkInvalid checks that err is an Invalid error with a cause on field
// whose message contains msg.
func checkInvalid(t *testing.T, err error, field, msg string) {
	t.Helper()
	if !apierrors.IsInvalid(err) {
		t.Fatalf("error = %v, want Invalid", err)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		t.Fatalf("error %v carries no details", err)
	}
	var causes []string
	for _, c := range status.Status().Details.Causes {
		causes = append(causes, c.Field+": "+c.Message)
		if c.Field == field && strings.Contains(c.Message, msg) {
			return
		}
	}
	t.Errorf("error causes %q, want one on %s containing %q", causes, field, msg)
}

// TestConvergedReconcileMakesNoWrites checks that reconciling a Greeting that
// is already converged writes nothing.
//
// Watching the running controller cannot show this soundly: after an event
// there is no signal that its reconcile has run, so "no new resourceVersion
// yet" proves nothing. Instead the test runs the reconcile itself, once the
// controller has made the Greeting Ready, with a second reconciler from
// NewReconciler whose client reads straight from the API server (no cache
// that could lag behind) and counts every write. That reconcile must return a zero result,
// make no write, and leave the resourceVersions of the Greeting and its
// ConfigMap as they were, which would also catch a write by the running
// controller in the meantime.
func TestConvergedReconcileMakesNoWrites(t *testing.T) {
	cp := runController(t)
	ctx := t.Context()
	ns := bosuntest.Namespace(t, cp.Client)
	key := client.ObjectKey{Namespace: ns, Name: "still"}
	g := &hellov1.Greeting{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}, Spec: hellov1.GreetingSpec{Name: "still water"}}
	if err := cp.Client.Create(ctx, g); err != nil {
		t.Fatalf("create greeting: %v", err)
	}
	before, beforeCM := waitPublished(t, cp.Client, key, "Hello, still water!")

	direct, err := client.NewWithWatch(cp.Config, client.Options{Scheme: cp.Scheme})
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	writes := &bosuntest.WriteCounter{}
	r := NewReconciler()
	r.Client, r.APIReader = writes.Wrap(direct), direct
	for pass := 1; pass <= 2; pass++ {
		res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key})
		if err != nil || res != (ctrl.Result{}) {
			t.Fatalf("pass %d: Reconcile = %+v, %v; want a zero result and no error", pass, res, err)
		}
		if w := writes.Writes(); len(w) > 0 {
			t.Errorf("pass %d: writes %v, want none", pass, w)
		}
		writes.Reset()
	}

	after, afterCM, err := published(ctx, cp.Client, key, "Hello, still water!")
	if err != nil {
		t.Fatalf("after reconcile: %v", err)
	}
	got := []string{after.ResourceVersion, afterCM.ResourceVersion}
	want := []string{before.ResourceVersion, beforeCM.ResourceVersion}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resourceVersions of greeting and configmap (-want +got):\n%s", diff)
	}
}

// TestSamples creates the demo's samples and waits, as the demo does, until
// each is Ready with observedGeneration equal to its generation.
func TestSamplesBecomeReady(t *testing.T) {
	cp := runController(t)
	ctx := t.Context()
	ns := bosuntest.Namespace(t, cp.Client)
	for _, obj := range Samples(ns) {
		if err := cp.Client.Create(ctx, obj); err != nil {
			t.Fatalf("create sample %s: %v", obj.GetName(), err)
		}
	}
	for _, obj := range Samples(ns) {
		g := obj.(*hellov1.Greeting)
		want, err := Render(g.Spec)
		if err != nil {
			t.Fatalf("sample %s: %v", g.Name, err)
		}
		waitPublished(t, cp.Client, client.ObjectKeyFromObject(g), want)
	}
}
