package cronjob

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun/bosuntest/unit"
	cronjobv1 "github.com/bosunkit/bosun/examples/cronjob/api/v1"
	"github.com/bosunkit/bosun/flow"
)

// workflow is the static workflow of one reconcile, as the RFC behind the
// DSL draws it: the three actions of the document's manager, the run left
// out while the CronJob is suspended. Its actions are never run: they only
// name the nodes a flow.Trace marks.
func workflow(suspended bool) flow.Action {
	m := NewCronJobControllerManager(nil, nil, logr.Discard())
	return flow.Join(
		m.ListActiveJobsAndUpdateStatus(),
		m.CleanUpOldJobsExceedsHistoryLimits(),
		flow.If(!suspended, m.RunNextScheduledJob()),
	)
}

// TestReconcileTrace records, through the hooks of the generated steps,
// which actions one reconcile ran, and draws the run over the static
// workflow: a suspended CronJob lists and cleans up but never runs, and a
// Job the API server refuses fails the run after the other two actions
// succeeded.
func TestReconcileTrace(t *testing.T) {
	scheme := unit.Scheme(t, corev1.AddToScheme, batchv1.AddToScheme, AddToScheme)
	refuse := interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
		return apierrors.NewInternalError(fmt.Errorf("etcd is down"))
	}}
	tests := []struct {
		name        string
		object      *cronjobv1.CronJob
		interceptor interceptor.Funcs
		want        string // the Mermaid drawing of the run
	}{{
		name:   "suspended: the run is left out",
		object: cronJob(func(cj *cronjobv1.CronJob) { cj.Spec.Suspend = ptr.To(true) }),
		want: `flowchart TD
    n0{{"Join"}}
    n1["ListActiveJobsAndUpdateStatus (run 1: ok)"]
    n2["CleanUpOldJobsExceedsHistoryLimits (run 2: ok)"]
    subgraph s0 ["If false"]
        n3["RunNextScheduledJob"]
    end
    n4{{"Join end"}}
    n0 --> n1
    n1 --> n4
    n0 --> n2
    n2 --> n4
    n0 --> n3
    n3 --> n4
    classDef succeeded fill:#d4edda,stroke:#28a745
    classDef requeued fill:#fff3cd,stroke:#d39e00
    classDef exited fill:#e2e3e5,stroke:#6c757d
    classDef failed fill:#f8d7da,stroke:#dc3545
    classDef running fill:#cce5ff,stroke:#004085
    classDef notrun stroke-dasharray:5 5,color:#6c757d
    class n1,n2 succeeded
    class n3 notrun
`,
	}, {
		name:        "the API server refuses the Job: the run fails",
		object:      cronJob(),
		interceptor: refuse,
		want: `flowchart TD
    n0{{"Join"}}
    n1["ListActiveJobsAndUpdateStatus (run 1: ok)"]
    n2["CleanUpOldJobsExceedsHistoryLimits (run 2: ok)"]
    subgraph s0 ["If true"]
        n3["RunNextScheduledJob (run 3: error: create job c-1893495600: Internal error occurred: etcd is...)"]
    end
    n4{{"Join end"}}
    n0 --> n1
    n1 --> n4
    n0 --> n2
    n2 --> n4
    n0 --> n3
    n3 --> n4
    classDef succeeded fill:#d4edda,stroke:#28a745
    classDef requeued fill:#fff3cd,stroke:#d39e00
    classDef exited fill:#e2e3e5,stroke:#6c757d
    classDef failed fill:#f8d7da,stroke:#dc3545
    classDef running fill:#cce5ff,stroke:#004085
    classDef notrun stroke-dasharray:5 5,color:#6c757d
    class n1,n2 succeeded
    class n3 failed
`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trace := &flow.Trace{}
			r := NewReconciler(Options{Clock: clocktesting.NewFakePassiveClock(at(11, 20)), Hooks: []flow.Hook{trace}})
			unit.Reconcile(t, scheme, r, unit.Case[*cronjobv1.CronJob]{Name: tt.name, Object: tt.object, Interceptor: tt.interceptor})
			got := trace.Mermaid(workflow(ptr.Deref(tt.object.Spec.Suspend, false)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("the run drawn over the workflow (-want +got):\n%s", diff)
			}
		})
	}
}
