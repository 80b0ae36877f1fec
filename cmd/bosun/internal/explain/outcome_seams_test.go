package explain

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestPassOutcomeOfARetryThatRecovered: the explain line of a pass says
// how the pass ended. A step under bosun.Retry that failed once and then
// succeeded (or stopped the pass) left the pass without an error, and the
// line must not say the pass ended in that step's error.
func TestPassOutcomeOfARetryThatRecovered(t *testing.T) {
	stop := fmt.Errorf("input missing: %w", bosun.ErrStop)
	for _, tc := range []struct {
		name  string
		after error // what the second try returns
		want  string
	}{
		{"then succeeded", nil, "done"},
		{"then stopped", stop, "done; step flaky (do) stopped the pass: input missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			flaky := bosun.NewStep("flaky", func(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
				if n++; n == 1 {
					return ctrl.Result{}, errors.New("connection reset")
				}
				return ctrl.Result{}, tc.after
			})
			report := onePass(t, bosun.Retry(3, 0, bosun.Step[*testapi.Widget](flaky)))
			if report.Error != "" {
				t.Fatalf("the pass failed: %s", report.Error)
			}
			if got := passOutcome(report); got != tc.want {
				t.Errorf("passOutcome = %q, want %q (steps: %+v)", got, tc.want, report.Steps)
			}
		})
	}
}

// onePass runs one pass of a Widget through a reconciler with steps, on a
// fake client, and returns its report.
func onePass(t *testing.T, steps ...bosun.Step[*testapi.Widget]) bosun.PassReport {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := testapi.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	w := &testapi.Widget{}
	w.Namespace, w.Name = "ns", "w"
	cl := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&testapi.Widget{}).WithObjects(w).Build()
	var (
		mu      sync.Mutex
		reports []bosun.PassReport
	)
	r := &bosun.Reconciler[*testapi.Widget]{Name: "explained", Client: cl, Steps: steps}
	r.Options.Observers = []bosun.PassObserver{bosun.PassObserverFunc(func(_ context.Context, p bosun.PassReport) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, p)
	})}
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(w)}); err != nil {
		t.Logf("Reconcile: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 1 {
		t.Fatalf("%d pass reports, want 1", len(reports))
	}
	return reports[0]
}
