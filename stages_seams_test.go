package bosun_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestSeamReviewClaimCommitAndSaveOfASettledPassStartNoPass: the three
// writes one pass can make, the claim's (the finalizer), a step's
// (Pass.Commit) and the save's (the status), go through the pass's one
// save stage, and the events of all three start no pass once the pass
// settles: a Widget takes one pass to become Ready, and one more for a
// user's change.
func TestSeamReviewClaimCommitAndSaveOfASettledPassStartNoPass(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	log := &passLog{}
	j := newJournal()
	mark := bosun.NewStep("mark", func(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		if req.Object.Annotations[markAnnotation] != "" {
			return ctrl.Result{}, nil
		}
		metav1.SetMetaDataAnnotation(&req.Object.ObjectMeta, markAnnotation, "set")
		return ctrl.Result{}, req.Commit(ctx)
	})
	r := &bosun.Reconciler[*testapi.Widget]{
		Name:      "seam-stage-writes",
		Finalizer: testFinalizer,
		Steps:     []bosun.Step[*testapi.Widget]{mark, &divide{j: j}, &output{j: j}},
		Options:   bosun.Options{Observers: []bosun.PassObserver{log}},
	}
	f.run(r, runOptions{})
	const n = 5
	for i := range n {
		f.create("w"+strconv.Itoa(i), int64(10*i), 5, nil)
	}
	for i := range n {
		w := f.waitReady("w"+strconv.Itoa(i), metav1.ConditionTrue, conditions.ReasonSucceeded)
		if w.Annotations[markAnnotation] != "set" || len(w.Finalizers) != 1 {
			t.Errorf("%s: annotations %v, finalizers %v; want the mark and the finalizer", w.Name, w.Annotations, w.Finalizers)
		}
	}
	// The watch hands the events of one object in order: by the pass of
	// the touch, the events of the first pass's writes have come.
	for i := range n {
		f.touch("w"+strconv.Itoa(i), "1")
	}
	want := []string{"Watch Create", "Watch Update"}
	for i := range n {
		name := "w" + strconv.Itoa(i)
		waitPasses(t, log, name, len(want))
		if diff := cmp.Diff(want, log.triggers(name)); diff != "" {
			t.Errorf("%s: passes (-want +got): the event of one of the first pass's writes started a pass\n%s", name, diff)
		}
	}
}
