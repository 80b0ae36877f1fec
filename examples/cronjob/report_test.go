package cronjob

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest/unit"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
)

// TestReconcileReport records, with an observer of the reconciler's passes,
// which actions one reconcile ran, in which order and with which outcome
// (the steps of the report named after the document's actions; the
// composites around them are reported too): a suspended CronJob lists and
// cleans up but never runs, and a Job the API server refuses fails the run
// after the other two actions succeeded.
func TestReconcileReport(t *testing.T) {
	scheme := unit.Scheme(t, corev1.AddToScheme, batchv1.AddToScheme, AddToScheme)
	refuse := interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
		return apierrors.NewInternalError(fmt.Errorf("etcd is down"))
	}}
	tests := []struct {
		name        string
		object      *cronjobv1.CronJob
		interceptor interceptor.Funcs
		want        []string // the actions' steps of the report: name, phase, error
	}{{
		name:   "suspended: the run is left out",
		object: cronJob(func(cj *cronjobv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }),
		want: []string{
			`ListActiveJobsAndUpdateStatus do ""`,
			`CleanUpOldJobsExceedsHistoryLimits do ""`,
		},
	}, {
		name:        "the API server refuses the Job: the run fails",
		object:      cronJob(),
		interceptor: refuse,
		want: []string{
			`ListActiveJobsAndUpdateStatus do ""`,
			`CleanUpOldJobsExceedsHistoryLimits do ""`,
			`RunNextScheduledJob do "create job c-1893495600: Internal error occurred: etcd is down"`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reports []bosun.PassReport
			r := NewReconciler(Options{Clock: clocktesting.NewFakePassiveClock(at(11, 20))})
			r.Options.Observers = []bosun.PassObserver{bosun.PassObserverFunc(func(_ context.Context, report bosun.PassReport) {
				reports = append(reports, report)
			})}
			unit.Reconcile(t, scheme, r, unit.Case[*cronjobv1.CronJob]{Name: tt.name, Object: tt.object, Interceptor: tt.interceptor})
			if len(reports) != 1 {
				t.Fatalf("%d pass reports, want 1", len(reports))
			}
			actions := map[string]bool{
				CronJobControllerManagerListActiveJobsAndUpdateStatus:      true,
				CronJobControllerManagerCleanUpOldJobsExceedsHistoryLimits: true,
				CronJobControllerManagerRunNextScheduledJob:                true,
			}
			var got []string
			for _, s := range reports[0].Steps {
				if actions[s.Name] {
					got = append(got, fmt.Sprintf("%s %s %q", s.Name, s.Phase, s.Error))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("steps of the pass report (-want +got):\n%s", diff)
			}
		})
	}
}
