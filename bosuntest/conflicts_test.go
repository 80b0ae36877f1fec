package bosuntest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
)

// updateMany updates a new ConfigMap n times through c and returns which of
// the updates conflicted.
func updateMany(t *testing.T, cp client.Client, c client.Client, ns, name string, n int) []bool {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := cp.Create(t.Context(), cm); err != nil {
		t.Fatalf("creating ConfigMap: %v", err)
	}
	conflicted := make([]bool, n)
	for i := range n {
		cm.Data = map[string]string{"i": fmt.Sprint(i)}
		err := c.Update(t.Context(), cm)
		switch {
		case err == nil:
		case bosuntest.IsInjectedConflict(err):
			conflicted[i] = true
		default:
			t.Fatalf("update %d: %v", i, err)
		}
	}
	return conflicted
}

func TestConflictInjectorIsDeterministic(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	const n = 40
	run := func(name string, seed uint64) []bool {
		f := &bosuntest.ConflictInjector{Fraction: 0.5, Seed: seed}
		got := updateMany(t, cp.Client, f.Wrap(cp.Client), ns, name, n)
		hits := 0
		for _, c := range got {
			if c {
				hits++
			}
		}
		if f.Injected() != hits || f.Matched() != n {
			t.Errorf("seed %d: Injected() = %d, Matched() = %d; want %d, %d", seed, f.Injected(), f.Matched(), hits, n)
		}
		// Half of 40 writes, give or take what a fair coin does.
		if hits < 8 || hits > 32 {
			t.Errorf("seed %d: %d of %d writes conflicted with Fraction 0.5", seed, hits, n)
		}
		return got
	}
	first, again, other := run("first", 7), run("again", 7), run("other", 8)
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("the same seed gave other conflicts (-first +again):\n%s", diff)
	}
	if cmp.Equal(first, other) {
		t.Errorf("seeds 7 and 8 gave the same conflicts: %v", first)
	}
}

func TestConflictInjectorReset(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	f := &bosuntest.ConflictInjector{Fraction: 0.5, Seed: 3}
	c := f.Wrap(cp.Client)
	before := updateMany(t, cp.Client, c, ns, "before", 20)
	f.Reset()
	if f.Injected() != 0 || f.Matched() != 0 || len(f.InjectedWrites()) != 0 {
		t.Fatalf("after Reset: Injected() = %d, Matched() = %d, InjectedWrites() = %v; want nothing",
			f.Injected(), f.Matched(), f.InjectedWrites())
	}
	after := updateMany(t, cp.Client, c, ns, "after", 20)
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("Reset did not restart the sequence (-before +after):\n%s", diff)
	}
}

func TestConflictInjectorFilters(t *testing.T) {
	cp := shared.ControlPlane(t)
	// ops are the writes each case makes, in order, on a ConfigMap "cm" and
	// a Pod "pod" created beforehand.
	type op struct {
		name string
		do   func(ctx context.Context, c client.Client, cm *corev1.ConfigMap, pod *corev1.Pod) error
	}
	updateCM := op{"update ConfigMap", func(ctx context.Context, c client.Client, cm *corev1.ConfigMap, _ *corev1.Pod) error {
		return c.Update(ctx, cm)
	}}
	patchCM := op{"patch ConfigMap", func(ctx context.Context, c client.Client, cm *corev1.ConfigMap, _ *corev1.Pod) error {
		return c.Patch(ctx, cm, client.RawPatch("application/merge-patch+json", []byte(`{"data":{"p":"1"}}`)))
	}}
	patchPod := op{"patch Pod", func(ctx context.Context, c client.Client, _ *corev1.ConfigMap, pod *corev1.Pod) error {
		return c.Patch(ctx, pod, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"p":"1"}}}`)))
	}}
	patchPodStatus := op{"patch status Pod", func(ctx context.Context, c client.Client, _ *corev1.ConfigMap, pod *corev1.Pod) error {
		return c.Status().Patch(ctx, pod, client.RawPatch("application/merge-patch+json", []byte(`{"status":{"message":"p"}}`)))
	}}
	createCM := op{"create ConfigMap", func(ctx context.Context, c client.Client, cm *corev1.ConfigMap, _ *corev1.Pod) error {
		return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cm.Namespace, GenerateName: "x-"}})
	}}
	deleteCM := op{"delete ConfigMap", func(ctx context.Context, c client.Client, cm *corev1.ConfigMap, _ *corev1.Pod) error {
		return c.Delete(ctx, cm)
	}}

	tests := []struct {
		name         string
		injector     *bosuntest.ConflictInjector
		ops          []op
		wantConflict []bool
		wantMatched  int
	}{
		{
			name:         "every write",
			injector:     &bosuntest.ConflictInjector{Fraction: 1},
			ops:          []op{patchCM, patchPod, patchPodStatus, deleteCM},
			wantConflict: []bool{true, true, true, true},
			wantMatched:  4,
		},
		{
			name:         "no fraction",
			injector:     &bosuntest.ConflictInjector{},
			ops:          []op{patchCM, patchPodStatus},
			wantConflict: []bool{false, false},
			wantMatched:  2,
		},
		{
			name:         "status patches only",
			injector:     &bosuntest.ConflictInjector{Fraction: 1, Verbs: []string{"patch status"}},
			ops:          []op{patchCM, patchPod, patchPodStatus, updateCM},
			wantConflict: []bool{false, false, true, false},
			wantMatched:  1,
		},
		{
			name:         "patches of Pods only",
			injector:     &bosuntest.ConflictInjector{Fraction: 1, Verbs: []string{"patch", "patch status"}, Kinds: []string{"Pod"}},
			ops:          []op{patchCM, patchPod, patchPodStatus, updateCM},
			wantConflict: []bool{false, true, true, false},
			wantMatched:  2,
		},
		{
			name:         "updates and deletes of ConfigMaps",
			injector:     &bosuntest.ConflictInjector{Fraction: 1, Verbs: []string{"update", "delete"}, Kinds: []string{"ConfigMap"}},
			ops:          []op{createCM, patchCM, updateCM, patchPodStatus, deleteCM},
			wantConflict: []bool{false, false, true, false, true},
			wantMatched:  2,
		},
		{
			name:         "limit",
			injector:     &bosuntest.ConflictInjector{Fraction: 1, Limit: 2},
			ops:          []op{patchCM, patchCM, patchCM, patchPod},
			wantConflict: []bool{true, true, false, false},
			wantMatched:  4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := bosuntest.Namespace(t, cp.Client)
			ctx := t.Context()
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}}
			pod := newPod(ns, "pod")
			for _, obj := range []client.Object{cm, pod} {
				if err := cp.Client.Create(ctx, obj); err != nil {
					t.Fatalf("creating %s: %v", obj.GetName(), err)
				}
			}
			c := tt.injector.Wrap(cp.Client)
			var got []bool
			var wantInjected []string
			for i, op := range tt.ops {
				// Writes work on fresh copies so that a successful write
				// does not make the next one stale.
				if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil && !apierrors.IsNotFound(err) {
					t.Fatalf("refreshing ConfigMap: %v", err)
				}
				err := op.do(ctx, c, cm, pod)
				if err != nil && !bosuntest.IsInjectedConflict(err) {
					t.Fatalf("%s (op %d): %v", op.name, i, err)
				}
				got = append(got, err != nil)
				if err != nil {
					wantInjected = append(wantInjected, op.name)
				}
			}
			if diff := cmp.Diff(tt.wantConflict, got); diff != "" {
				t.Errorf("conflicts per write (-want +got):\n%s", diff)
			}
			var injected []string
			for _, w := range tt.injector.InjectedWrites() {
				injected = append(injected, w.Op())
			}
			if diff := cmp.Diff(wantInjected, injected); diff != "" {
				t.Errorf("InjectedWrites() (-want +got):\n%s", diff)
			}
			if got := tt.injector.Matched(); got != tt.wantMatched {
				t.Errorf("Matched() = %d, want %d", got, tt.wantMatched)
			}
		})
	}
}

func TestInjectedConflictLooksReal(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	ctx := t.Context()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm"}, Data: map[string]string{"v": "old"}}
	if err := cp.Client.Create(ctx, cm); err != nil {
		t.Fatalf("creating ConfigMap: %v", err)
	}
	stale := cm.DeepCopy()

	// A real conflict: an update from a stale copy.
	cm.Data["v"] = "new"
	if err := cp.Client.Update(ctx, cm); err != nil {
		t.Fatalf("updating ConfigMap: %v", err)
	}
	stale.Data["v"] = "stale"
	real := cp.Client.Update(ctx, stale)
	if !apierrors.IsConflict(real) {
		t.Fatalf("update from a stale copy: %v, want a conflict", real)
	}
	if bosuntest.IsInjectedConflict(real) {
		t.Errorf("IsInjectedConflict(%v) = true for the API server's own conflict", real)
	}

	// An injected one: same status and details, and nothing written.
	f := &bosuntest.ConflictInjector{Fraction: 1}
	cm.Data["v"] = "injected"
	injected := f.Wrap(cp.Client).Update(ctx, cm)
	if !apierrors.IsConflict(injected) || !bosuntest.IsInjectedConflict(injected) {
		t.Fatalf("update through the injector: %v, want an injected conflict", injected)
	}
	if !bosuntest.IsInjectedConflict(fmt.Errorf("saving: %w", injected)) {
		t.Error("IsInjectedConflict does not see through wrapping")
	}
	var realStatus, injectedStatus *apierrors.StatusError
	if !errors.As(real, &realStatus) || !errors.As(injected, &injectedStatus) {
		t.Fatalf("errors are not *StatusError: %T, %T", real, injected)
	}
	pick := func(s metav1.Status) any {
		return []any{s.Status, s.Code, s.Reason, s.Details.Group, s.Details.Kind, s.Details.Name}
	}
	if diff := cmp.Diff(pick(realStatus.ErrStatus), pick(injectedStatus.ErrStatus)); diff != "" {
		t.Errorf("injected conflict differs from the API server's (-real +injected):\n%s", diff)
	}
	var got corev1.ConfigMap
	if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
		t.Fatalf("getting ConfigMap: %v", err)
	}
	if got.Data["v"] != "new" {
		t.Errorf("ConfigMap value = %q after an injected conflict, want the value before it, %q", got.Data["v"], "new")
	}
	if bosuntest.IsInjectedConflict(nil) || bosuntest.IsInjectedConflict(errors.New(strings.Repeat("conflict ", 3))) {
		t.Error("IsInjectedConflict accepted an error that is no conflict")
	}
}

// TestConflictInjectorWithController runs a controller whose writes
// sometimes conflict: it gets there in the end, its errors are logged, and
// the log recorder sees them.
func TestConflictInjectorWithController(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	injector := &bosuntest.ConflictInjector{Fraction: 0.6, Seed: 1, Verbs: []string{"create", "update"}, Kinds: []string{"ConfigMap"}}
	var writes bosuntest.WriteCounter
	var logs bosuntest.LogRecorder
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		mgr = bosuntest.ManagerWithClient(mgr, writes.Wrap(injector.Wrap(mgr.GetClient())))
		mgr = bosuntest.ManagerWithLogger(mgr, logs.Wrap(mgr.GetLogger()))
		return setupCopier(ns)(mgr)
	})
	for i := range 5 {
		src := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("src%d", i), Labels: map[string]string{"bosuntest/copy": "yes"}},
			Data:       map[string]string{"value": fmt.Sprint(i)},
		}
		if err := cp.Client.Create(t.Context(), src); err != nil {
			t.Fatalf("creating source ConfigMap: %v", err)
		}
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		for i := range 5 {
			if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("src%d-copy", i)}, &corev1.ConfigMap{}); err != nil {
				return err
			}
		}
		return nil
	})

	if injector.Injected() == 0 {
		t.Fatal("no conflict was injected")
	}
	t.Logf("%d of %d matching writes conflicted", injector.Injected(), injector.Matched())
	// Every injected conflict is a write the copier had to make again.
	if got, want := writes.Counts()["create ConfigMap"], 5+injector.Injected(); got != want {
		t.Errorf("copier made %d creates, want 5 plus %d conflicts", got, injector.Injected())
	}
	// The copier returns its conflicts, so controller-runtime logs each one
	// as an error, under the controller's name and with the object.
	var conflicts int
	for _, e := range logs.Errors() {
		if !bosuntest.IsInjectedConflict(e.Err) {
			t.Errorf("unexpected error line: %s", e)
			continue
		}
		conflicts++
		if v, _ := e.Value("controller"); v != "copier" {
			t.Errorf("error line without the controller: %s", e)
		}
	}
	if conflicts != injector.Injected() {
		t.Errorf("%d conflicts logged, want the %d injected", conflicts, injector.Injected())
	}
}
