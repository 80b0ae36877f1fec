package faults_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/internal/testapi"
)

// waitFor waits for ch with a deadline.
func waitFor(t *testing.T, ch <-chan struct{}, d time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("%s did not happen within %s", what, d)
	}
}

// TestLeaderKilledMidCreate runs two replicas with leader election. The
// leader dies in the middle of an external create (the resource made, the
// answer lost); the other replica takes over once the lease expires and
// adopts the resource instead of making a second one.
func TestLeaderKilledMidCreate(t *testing.T) {
	cp := shared.ControlPlane(t)
	st := &store{}
	ns := bosuntest.Namespace(t, cp.Client)
	le := &faults.LeaderElection{ID: "faults-test", Namespace: ns}
	isCreate := func(c faults.Call) bool { return c.External && c.Verb == "create" }
	a := faults.Start(t, cp, faults.Options{Name: "replica-a", Namespace: ns, LeaderElection: le,
		Plan: faults.Plan{Crash: faults.CrashPoint{After: 1, During: true, Match: isCreate}}}, setup(st))
	waitFor(t, a.Elected(), 30*time.Second, "replica-a's election")
	b := faults.Start(t, cp, faults.Options{Name: "replica-b", Namespace: ns, LeaderElection: le}, setup(st))

	objs, err := createWidgets(3)(t.Context(), cp.Client, ns)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, a.Crashed(), 30*time.Second, "replica-a's crash in an external create")
	waitFor(t, b.Elected(), 30*time.Second, "replica-b's election")
	takeover := time.Since(a.CrashedAt())
	bosuntest.Eventually(t, func(ctx context.Context) error { return converged(st)(ctx, cp.Client, ns, objs) }, bosuntest.Timeout(time.Minute))
	if st.creates != 3 {
		t.Errorf("external creates: %d for 3 Widgets; want 3 (the lost create adopted)", st.creates)
	}
	if takeover > faults.DefaultLeaseDuration+5*time.Second {
		t.Errorf("takeover took %s; want about the lease duration (%s)", takeover, faults.DefaultLeaseDuration)
	}
	t.Logf("takeover after %s, lease duration %s", takeover, faults.DefaultLeaseDuration)
	for _, c := range b.Calls() {
		if c.External && c.Verb == "create" && c.Name == a.Calls()[len(a.Calls())-1].Name {
			t.Errorf("replica-b made the resource replica-a had made: %s", c)
		}
	}
}

// TestStaleReadsAndTimeTravel deletes a Widget and makes it again under
// the same name while the operator reads its cache five versions late:
// the new Widget's ConfigMap and external resource must survive the old
// one's ghost.
func TestStaleReadsAndTimeTravel(t *testing.T) {
	cp := shared.ControlPlane(t)
	st := &store{}
	ns := bosuntest.Namespace(t, cp.Client)
	plan := faults.Plan{Stale: faults.StaleReads{Lag: 5, MaxAge: 3 * time.Second}}
	p := faults.Start(t, cp, faults.Options{Namespace: ns, Plan: plan}, setup(st))

	objs, err := createWidgets(1)(t.Context(), cp.Client, ns)
	if err != nil {
		t.Fatal(err)
	}
	conv := func(ctx context.Context) error { return converged(st)(ctx, cp.Client, ns, objs) }
	bosuntest.Eventually(t, conv, bosuntest.Timeout(time.Minute))
	if err := cp.Client.Delete(t.Context(), objs[0]); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error { return cleaned(st)(ctx, cp.Client, ns, objs) }, bosuntest.Timeout(time.Minute))
	// The same name again, at once: the cache may still show the old
	// Widget, being deleted.
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: objs[0].GetName()}, Spec: testapi.WidgetSpec{Value: 9}}
	recreated := time.Now()
	if err := cp.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	objs = []client.Object{w}
	bosuntest.Eventually(t, conv, bosuntest.Timeout(time.Minute))

	cm := &corev1.ConfigMap{}
	if err := cp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: w.Name + "-part"}, cm); err != nil {
		t.Fatal(err)
	}
	// Let the lag run out, then look again: nothing of the new Widget's
	// was deleted on the strength of the old one.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if time.Since(lastChange(p)) < 2*plan.Stale.MaxAge {
			return fmt.Errorf("the operator is still writing")
		}
		return conv(ctx)
	}, bosuntest.Timeout(time.Minute))
	for _, c := range p.Calls() {
		if c.Verb == "delete" && (c.UID == cm.UID || c.UID == w.UID) {
			t.Errorf("deleted an object of the new Widget: %s", c)
		}
		if c.External && c.Verb == "delete" && c.Namespace == ns && c.At.After(recreated) {
			t.Errorf("deleted the new Widget's external resource: %s", c)
		}
	}
	// The kit reads whom a write wrote from its answer, status writes
	// included.
	for _, c := range p.Calls() {
		if c.Resource == "widgets/status" && c.TookEffect() && c.UID == "" {
			t.Errorf("a status write names no object: %s", c)
		}
	}
	if err := cp.Client.Get(t.Context(), client.ObjectKeyFromObject(cm), &corev1.ConfigMap{}); apierrors.IsNotFound(err) {
		t.Error("the new Widget's ConfigMap is gone")
	}
	if owners := st.ownedBy(); owners[string(w.UID)] != 1 {
		t.Errorf("external resources by owner: %v; want one for the new Widget %s", owners, w.UID)
	}
	if s := p.Stats(); s.StaleReads == 0 {
		t.Error("no read was stale: the test did not test anything")
	}
}

// lastChange is when the process last made a call.
func lastChange(p *faults.Process) time.Time {
	calls := p.Calls()
	if len(calls) == 0 {
		return time.Time{}
	}
	return calls[len(calls)-1].At
}
