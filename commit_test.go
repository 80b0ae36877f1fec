package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// markAnnotation is the annotation the committing step persists mid-pass.
const markAnnotation = "test.bosun.dev/mark"

// TestCommitPersistsMidPass checks Request.Commit through the engine: a
// mark committed before a step fails is stored, the status the pass
// computed is written on top of it without a conflict, and a pass that
// finds the mark in place writes nothing more.
func TestCommitPersistsMidPass(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	writes := &bosuntest.WriteCounter{}
	var interfered bool
	mark := bosun.NewStep("mark", func(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		if req.Object.Annotations[markAnnotation] != "" {
			return ctrl.Result{}, nil
		}
		req.Object.Status.Result = 42 // status: kept, written at the end
		if req.Object.Spec.Value == 2 && !interfered {
			// Someone else changes the object after the pass read it.
			interfered = true
			other := req.Original.DeepCopy()
			other.Labels = map[string]string{"touched": "yes"}
			if err := f.c.Update(ctx, other); err != nil {
				return ctrl.Result{}, err
			}
			metav1.SetMetaDataAnnotation(&req.Object.ObjectMeta, markAnnotation, "set")
			err := req.Commit(ctx)
			if !apierrors.IsConflict(err) {
				return ctrl.Result{}, fmt.Errorf("commit over a newer version = %w, want a conflict", err)
			}
			if err := req.Reload(ctx); err != nil {
				return ctrl.Result{}, err
			}
			if req.Object.Labels["touched"] != "yes" || req.Object.Status.Result != 42 {
				return ctrl.Result{}, fmt.Errorf("after Reload: labels %v, result %d; want the other writer's label and this pass's status", req.Object.Labels, req.Object.Status.Result)
			}
		}
		metav1.SetMetaDataAnnotation(&req.Object.ObjectMeta, markAnnotation, "set")
		if err := req.Commit(ctx); err != nil {
			return ctrl.Result{}, err
		}
		if req.Original.Annotations[markAnnotation] != "set" || req.Object.ResourceVersion != req.Original.ResourceVersion {
			return ctrl.Result{}, errors.New("Commit did not advance the request's view")
		}
		return ctrl.Result{}, nil
	})
	fail := bosun.NewStep("fail", func(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		return ctrl.Result{}, conditions.Terminal("Broken", errors.New("broken after the mark"))
	})
	f.run(&bosun.Reconciler[*testapi.Widget]{Name: "commit", Steps: []bosun.Step[*testapi.Widget]{mark, fail}},
		runOptions{client: func(c client.Client) client.WithWatch { return writes.Wrap(c) }})

	for _, name := range []string{"plain", "raced"} {
		value := int64(1)
		if name == "raced" {
			value = 2
		}
		f.create(name, value, 1, nil)
		w := f.waitReady(name, metav1.ConditionFalse, "Broken")
		if w.Annotations[markAnnotation] != "set" || w.Status.Result != 42 {
			t.Errorf("%s: annotations %v, result %d; want the mark and 42", name, w.Annotations, w.Status.Result)
		}
	}
	if !interfered {
		t.Error("the raced Widget was never interfered with")
	}
	if err := f.c.Get(t.Context(), client.ObjectKey{Namespace: f.ns, Name: "raced"}, &testapi.Widget{}); err != nil {
		t.Fatal(err)
	}
	// One commit per Widget, and the raced Widget's first one, refused;
	// one status write each. Later passes find the mark and the status in
	// place, and write nothing.
	want := map[string]int{"patch Widget": 3, "patch status Widget": 2}
	if diff := cmp.Diff(want, writes.Counts()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}
