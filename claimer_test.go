package bosun_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// annotationID is the identifier the test Claimer computes and keeps.
const annotationID = "test.bosun.dev/id"

// ownerClaim is a Claimer that requires a ConfigMap "owner" in the
// object's namespace and records its UID on the object as an identifier.
type ownerClaim struct {
	claims atomic.Int32
	// sawAtDo is the identifier Do saw on its first call.
	sawAtDo atomic.Value
}

func (o *ownerClaim) Name() string { return "owner" }

func (o *ownerClaim) Claim(ctx context.Context, req *bosun.Pass[*testapi.Widget]) error {
	o.claims.Add(1)
	cm := &corev1.ConfigMap{}
	if err := req.APIReader.Get(ctx, client.ObjectKey{Namespace: req.Object.Namespace, Name: "owner"}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return conditions.Warningf("OwnerMissing", "ConfigMap owner does not exist yet")
		}
		return err
	}
	ann := req.Object.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[annotationID] = string(cm.UID)
	req.Object.SetAnnotations(ann)
	return nil
}

func (o *ownerClaim) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	o.sawAtDo.CompareAndSwap(nil, req.Object.GetAnnotations()[annotationID])
	return ctrl.Result{}, nil
}

// TestClaimerRunsBeforeTheClaim: a Claimer's precondition holds back the
// claim and every Do, with its error in Ready; once it holds, what the
// Claimer set is stored in the same write as the finalizer, Do sees it,
// and the Claimer does not run again.
func TestClaimerRunsBeforeTheClaim(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j := newJournal()
	claim := &ownerClaim{}
	writes := &bosuntest.WriteCounter{}
	r := &bosun.Reconciler[*testapi.Widget]{Name: "claimer", Finalizer: testFinalizer, Steps: []bosun.Step[*testapi.Widget]{claim, &divide{j: j}}}
	f.run(r, runOptions{client: writes.Wrap})
	f.create("w", 6, 3, nil)

	w := f.waitReady("w", metav1.ConditionFalse, "OwnerMissing")
	if controllerutil.ContainsFinalizer(w, testFinalizer) {
		t.Error("the finalizer was committed although the Claimer failed")
	}
	if n := j.count(j.do, "w"); n != 0 {
		t.Errorf("Do ran %d times before the claim", n)
	}
	for op, n := range widgetWrites(writes) {
		if op != "patch status Widget" {
			t.Errorf("%d writes %q before the claim, want only status", n, op)
		}
	}

	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "owner"}}
	if err := f.c.Create(t.Context(), owner); err != nil {
		t.Fatal(err)
	}
	// The error is not terminal: backoff brings the claim back.
	w = f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	if !controllerutil.ContainsFinalizer(w, testFinalizer) || w.Annotations[annotationID] != string(owner.UID) {
		t.Errorf("claimed object has finalizers %v and annotations %v, want %s and %s=%s", w.Finalizers, w.Annotations, testFinalizer, annotationID, owner.UID)
	}
	if got := claim.sawAtDo.Load(); got != string(owner.UID) {
		t.Errorf("Do first saw identifier %v, want %s", got, owner.UID)
	}
	if n := writes.Counts()["patch Widget"]; n != 1 {
		t.Errorf("%d writes of the Widget's metadata, want 1 (finalizer and identifier together)", n)
	}

	claims := claim.claims.Load()
	before := j.count(j.do, "w")
	f.touch("w", "again")
	bosuntest.Eventually(t, func(context.Context) error {
		if n := j.count(j.do, "w"); n <= before {
			return errors.New("not reconciled again yet")
		}
		return nil
	})
	if n := claim.claims.Load(); n != claims {
		t.Errorf("Claim ran %d more times on a claimed object", n-claims)
	}
}

func TestClaimerNeedsFinalizer(t *testing.T) {
	r := &bosun.Reconciler[*testapi.Widget]{Name: "claimer", Client: fakeClient(t, nil), Steps: []bosun.Step[*testapi.Widget]{&ownerClaim{}}}
	err := r.Validate()
	want := `bosun: reconciler "claimer": invalid reconciler configuration: Finalizer is empty but step "owner" claims`
	if err == nil || !errors.Is(err, bosun.ErrInvalidConfig) || err.Error() != want {
		t.Errorf("Validate() = %v, want %q", err, want)
	}
}

// TestClaimerPanicIsReported: a panicking Claimer is recovered, reported in
// Ready, and the claim is not committed.
func TestClaimerPanicIsReported(t *testing.T) {
	c := fakeClient(t, nil, fakeWidget("w", nil, false, nil))
	panicky := bosun.NewStep[*testapi.Widget]("panicky", nil)
	r := &bosun.Reconciler[*testapi.Widget]{Name: "claimer", Client: c, Finalizer: testFinalizer,
		Steps: []bosun.Step[*testapi.Widget]{claimFunc{step: panicky, claim: func() error { panic("boom") }}}}
	_, w, err := reconcileWidget(t, r, c, "w")
	if err == nil {
		t.Fatal("no error from a panicking Claimer")
	}
	if len(w.Finalizers) != 0 || !strings.HasPrefix(readyOf(w), "False/Panic: ") {
		t.Errorf("finalizers %v and Ready %q, want none and False/Panic", w.Finalizers, readyOf(w))
	}
}

// claimFunc is a step whose Claim calls claim.
type claimFunc struct {
	step  bosun.StepFunc[*testapi.Widget]
	claim func() error
}

func (c claimFunc) Name() string { return c.step.Name() }
func (c claimFunc) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}
func (c claimFunc) Claim(context.Context, *bosun.Pass[*testapi.Widget]) error { return c.claim() }
