package explain

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
)

// now is the time the rendering tests measure ages from.
var now = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

// before returns the time d before now.
func before(d time.Duration) time.Time { return now.Add(-d) }

// cond returns a condition that changed d before now.
func cond(typ string, status metav1.ConditionStatus, reason, message string, d time.Duration) *metav1.Condition {
	return &metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(before(d))}
}

// lines joins lines, each ended by a newline.
func lines(l ...string) string { return strings.Join(l, "\n") + "\n" }

func TestWrite(t *testing.T) {
	base := func() Report {
		return Report{
			Kind: "Simple", Resource: "simples.simple.bosun.dev", Namespace: "demo", Name: "div",
			Generation: 2, ObservedGeneration: 2,
			Policy: Policy{Value: "manage", Source: PolicyFromDefault, Namespace: "demo"},
		}
	}
	defaultPolicy := "Reconcile policy: manage, the default (no bosun.dev/reconcile-policy on the object or on namespace demo)."
	tests := []struct {
		name   string
		report func(r *Report)
		want   string
	}{
		{
			name: "ready",
			report: func(r *Report) {
				r.Ready = cond("Ready", metav1.ConditionTrue, "Succeeded", "", 5*time.Minute)
			},
			want: lines(
				"Simple demo/div: Ready",
				"  Ready: True (Succeeded) for 5m",
				"  Generation 2: the status describes it.",
				defaultPolicy,
			),
		},
		{
			name: "a failing step, worst conditions first, with kstatus",
			report: func(r *Report) {
				r.Ready = cond("Ready", metav1.ConditionFalse, "ZeroDivisor", "spec.divisor is zero;\nset it to another number", 12*time.Second)
				r.Stalled = cond("Stalled", metav1.ConditionTrue, "ZeroDivisor", "spec.divisor is zero", 12*time.Second)
				r.Failing = []metav1.Condition{
					*cond("DivisorValid", metav1.ConditionFalse, "ZeroDivisor", "spec.divisor is zero", 12*time.Second),
					*cond("ResultWritten", metav1.ConditionUnknown, "Initializing", "not reported yet", 90*time.Second),
				}
				r.Failing[1].ObservedGeneration = 1
			},
			want: lines(
				"Simple demo/div: not Ready",
				"  Ready: False (ZeroDivisor) for 12s: spec.divisor is zero; set it to another number",
				"  Generation 2: the status describes it.",
				"  Stalled: True (ZeroDivisor) for 12s: spec.divisor is zero",
				"Failing conditions, worst first:",
				"  DivisorValid: False (ZeroDivisor) for 12s: spec.divisor is zero",
				"  ResultWritten: Unknown (Initializing) for 90s, of generation 1: not reported yet",
				defaultPolicy,
			),
		},
		{
			name: "the build that last reconciled it, after kstatus",
			report: func(r *Report) {
				r.Ready = cond("Ready", metav1.ConditionFalse, "Progressing", "waiting for the database", 30*time.Second)
				r.Reconciling = cond("Reconciling", metav1.ConditionTrue, "Progressing", "waiting for the database", 30*time.Second)
				r.ReconciledBy = "widget=v1.4.2"
			},
			want: lines(
				"Simple demo/div: not Ready",
				"  Ready: False (Progressing) for 30s: waiting for the database",
				"  Generation 2: the status describes it.",
				"  Reconciling: True (Progressing) for 30s: waiting for the database",
				"  Last reconciled by (controller=build): widget=v1.4.2 (bosun.dev/reconciled-by).",
				defaultPolicy,
			),
		},
		{
			name: "Ready True for an older generation",
			report: func(r *Report) {
				r.Generation = 3
				r.Ready = cond("Ready", metav1.ConditionTrue, "Succeeded", "", time.Hour)
				r.Ready.ObservedGeneration = 2
			},
			want: lines(
				"Simple demo/div: not Ready",
				"  Ready: True (Succeeded) for 60m",
				"  Generation 3: the status describes generation 2; the operator has not caught up with the latest change.",
				defaultPolicy,
			),
		},
		{
			name: "no Ready condition, no observed generation",
			report: func(r *Report) {
				r.ObservedGeneration = 0
			},
			want: lines(
				"Simple demo/div: not Ready",
				"  No Ready condition: the operator has not reconciled the object yet, or does not run.",
				"  Generation 2: the status does not say which generation it describes.",
				defaultPolicy,
			),
		},
		{
			name: "deletion blocked, with the way out",
			report: func(r *Report) {
				r.Kind, r.Resource, r.Name = "Widget", "widgets.test.bosun.dev", "w"
				r.Ready = cond("Ready", metav1.ConditionFalse, "ExternalRefused", "the external system refuses the delete", 3*time.Minute)
				r.Deletion = &Deletion{
					Requested:  before(5 * time.Minute),
					Finalizers: []string{"test.bosun.dev/cleanup", "example.com/other"},
					Blocked:    cond("DeletionBlocked", metav1.ConditionTrue, "ExternalRefused", `step "refusingCleanup" failed`, 2*time.Minute),
				}
			},
			want: lines(
				"Widget demo/w: not Ready, being deleted",
				"  Ready: False (ExternalRefused) for 3m: the external system refuses the delete",
				"  Generation 2: the status describes it.",
				"Deletion asked 5m ago (2026-03-04T11:55:00Z); finalizers: test.bosun.dev/cleanup, example.com/other",
				`  DeletionBlocked: True (ExternalRefused) for 2m: step "refusingCleanup" failed`,
				"  The engine keeps retrying and never releases its finalizer on its own. Once what blocks is understood, release it on purpose:",
				"    kubectl annotate widgets.test.bosun.dev w -n demo bosun.dev/release-finalizer=true     # clean up once more, then release whatever the outcome",
				"    kubectl annotate widgets.test.bosun.dev w -n demo bosun.dev/release-finalizer=orphan   # release without cleanup, leaving what it would delete",
				defaultPolicy,
			),
		},
		{
			name: "deletion held by the mass-deletion breaker",
			report: func(r *Report) {
				r.Kind, r.Resource, r.Name = "Widget", "widgets.test.bosun.dev", "w"
				r.Ready = cond("Ready", metav1.ConditionFalse, "DeletionHeld", "the cleanup is held", time.Minute)
				r.Deletion = &Deletion{
					Requested:  before(time.Minute),
					Finalizers: []string{"test.bosun.dev/cleanup"},
					Blocked:    cond("DeletionBlocked", metav1.ConditionTrue, "DeletionHeld", "the cleanup is held", time.Minute),
				}
			},
			want: lines(
				"Widget demo/w: not Ready, being deleted",
				"  Ready: False (DeletionHeld) for 60s: the cleanup is held",
				"  Generation 2: the status describes it.",
				"Deletion asked 60s ago (2026-03-04T11:59:00Z); finalizers: test.bosun.dev/cleanup",
				"  DeletionBlocked: True (DeletionHeld) for 60s: the cleanup is held",
				"  The mass-deletion breaker holds the cleanup: nothing is deleted until it is let go on. If the deletion is meant:",
				"    kubectl annotate widgets.test.bosun.dev w -n demo bosun.dev/allow-mass-deletion=true   # let the cleanup go on (or run the operator with --allow-mass-deletion)",
				"    kubectl annotate widgets.test.bosun.dev w -n demo bosun.dev/release-finalizer=orphan   # release without cleanup, keeping what it would delete",
				defaultPolicy,
			),
		},
		{
			name: "deletion released, of a cluster-scoped object",
			report: func(r *Report) {
				r.Kind, r.Resource, r.Namespace, r.Name = "Bucket", "buckets.storage.example.com", "", "logs"
				r.Policy = Policy{Value: "manage", Source: PolicyFromDefault}
				r.Ready = cond("Ready", metav1.ConditionFalse, "DeleteFailed", "", time.Minute)
				r.Deletion = &Deletion{
					Requested: before(2 * time.Hour),
					Blocked:   cond("DeletionBlocked", metav1.ConditionTrue, "DeleteFailed", "", time.Hour),
					Release:   "orphan",
				}
			},
			want: lines(
				"Bucket logs: not Ready, being deleted",
				"  Ready: False (DeleteFailed) for 60s",
				"  Generation 2: the status describes it.",
				"Deletion asked 120m ago (2026-03-04T10:00:00Z); finalizers: none",
				"  DeletionBlocked: True (DeleteFailed) for 60m",
				"  bosun.dev/release-finalizer=orphan is set: the engine acts on it at its next pass.",
				"Reconcile policy: manage, the default (no bosun.dev/reconcile-policy on the object).",
			),
		},
		{
			name: "paused by the namespace",
			report: func(r *Report) {
				r.Ready = cond("Ready", metav1.ConditionFalse, "ReconcilePaused", `reconcile policy "skip"`, time.Minute)
				r.Policy = Policy{Value: "skip", Source: PolicyFromNamespace, Namespace: "demo"}
			},
			want: lines(
				"Simple demo/div: not Ready",
				`  Ready: False (ReconcilePaused) for 60s: reconcile policy "skip"`,
				"  Generation 2: the status describes it.",
				"Reconcile policy: skip, from namespace demo (bosun.dev/reconcile-policy).",
				"  The object is paused: the operator only observes it and writes nothing but its status.",
			),
		},
		{
			name: "policies set on the object",
			report: func(r *Report) {
				r.Ready = cond("Ready", metav1.ConditionTrue, "Succeeded", "", time.Minute)
				r.Policy = Policy{Value: "Detach-On-Delete", Source: PolicyFromObject, Namespace: "demo"}
			},
			want: lines(
				"Simple demo/div: Ready",
				"  Ready: True (Succeeded) for 60s",
				"  Generation 2: the status describes it.",
				"Reconcile policy: Detach-On-Delete, set on the object (bosun.dev/reconcile-policy).",
				"  When the object is deleted, it is let go without cleanup: what the steps made stays.",
			),
		},
		{
			name: "unknown policy",
			report: func(r *Report) {
				r.Ready = cond("Ready", metav1.ConditionFalse, "InvalidPolicy", "", time.Minute)
				r.Policy = Policy{Value: "sometimes", Source: PolicyFromObject, Namespace: "demo"}
			},
			want: lines(
				"Simple demo/div: not Ready",
				"  Ready: False (InvalidPolicy) for 60s",
				"  Generation 2: the status describes it.",
				"Reconcile policy: sometimes, set on the object (bosun.dev/reconcile-policy).",
				`  "sometimes" is not a reconcile policy (manage, skip or detach-on-delete): the engine reports it in Ready and does nothing else until it is fixed.`,
			),
		},
		{
			name: "children not ready",
			report: func(r *Report) {
				r.Kind, r.Name = "Memcached", "cache"
				r.Ready = cond("Ready", metav1.ConditionFalse, "NotReady", "waiting for 2 of 2 pods to be ready", 30*time.Second)
				r.Children = Children{Found: 4, NotReady: []Child{
					{Kind: "Deployment", Namespace: "demo", Name: "cache", Status: "0/2 replicas ready", Pods: "pods: 2 Pending; cache-x: not scheduled yet"},
					{Kind: "Job", Namespace: "batch", Name: "warm", Status: "failed (BackoffLimitExceeded): Job has reached the specified backoff limit"},
				}}
			},
			want: lines(
				"Memcached demo/cache: not Ready",
				"  Ready: False (NotReady) for 30s: waiting for 2 of 2 pods to be ready",
				"  Generation 2: the status describes it.",
				defaultPolicy,
				"Children not ready (2 of 4):",
				"  Deployment cache: 0/2 replicas ready",
				"    pods: 2 Pending; cache-x: not scheduled yet",
				"  Job batch/warm: failed (BackoffLimitExceeded): Job has reached the specified backoff limit",
			),
		},
		{
			name: "children all ready",
			report: func(r *Report) {
				r.Ready = cond("Ready", metav1.ConditionTrue, "Succeeded", "", time.Minute)
				r.Children = Children{Found: 2}
			},
			want: lines(
				"Simple demo/div: Ready",
				"  Ready: True (Succeeded) for 60s",
				"  Generation 2: the status describes it.",
				defaultPolicy,
				"Children: 2, all ready.",
			),
		},
		{
			name: "external resource",
			report: func(r *Report) {
				r.Kind, r.Name = "Database", "shop"
				r.Ready = cond("Ready", metav1.ConditionFalse, "CreateIncomplete", "a create may have leaked", 4*time.Minute)
				r.External = &External{
					Name:          "demo.shop",
					Synced:        cond("Synced", metav1.ConditionFalse, "CreateIncomplete", "a create may have leaked", 4*time.Minute),
					Available:     cond("Available", metav1.ConditionFalse, "Creating", "", 5*time.Minute),
					CreatePending: before(5 * time.Minute),
				}
			},
			want: lines(
				"Database demo/shop: not Ready",
				"  Ready: False (CreateIncomplete) for 4m: a create may have leaked",
				"  Generation 2: the status describes it.",
				defaultPolicy,
				"External resource: demo.shop (bosun.dev/external-name).",
				"  Synced: False (CreateIncomplete) for 4m: a create may have leaked",
				"  Available: False (Creating) for 5m",
				"  A create started 5m ago and its outcome is not recorded yet (bosun.dev/external-create-pending).",
			),
		},
		{
			name: "external resource without a name yet",
			report: func(r *Report) {
				r.Kind, r.Name = "Database", "shop"
				r.Ready = cond("Ready", metav1.ConditionFalse, "ConnectFailed", "", time.Minute)
				r.External = &External{Synced: cond("Synced", metav1.ConditionFalse, "ConnectFailed", "dial tcp: refused", time.Minute)}
			},
			want: lines(
				"Database demo/shop: not Ready",
				"  Ready: False (ConnectFailed) for 60s",
				"  Generation 2: the status describes it.",
				defaultPolicy,
				"External resource: no name recorded yet (bosun.dev/external-name).",
				"  Synced: False (ConnectFailed) for 60s: dial tcp: refused",
			),
		},
		{
			name: "events and notes",
			report: func(r *Report) {
				r.Ready = cond("Ready", metav1.ConditionFalse, "ReconcileError", "boom", time.Minute)
				r.Events = []Event{
					{Type: "Warning", Reason: "ApplyFailed", Note: "applying Service demo/web:\nforbidden", Time: before(10 * time.Second), Count: 4},
					{Type: "Normal", Reason: "Claimed", Note: "claimed", Time: before(time.Hour), Count: 1},
				}
				r.Notes = []string{"cannot list jobs.batch to find the children: forbidden"}
			},
			want: lines(
				"Simple demo/div: not Ready",
				"  Ready: False (ReconcileError) for 60s: boom",
				"  Generation 2: the status describes it.",
				defaultPolicy,
				"Events, warnings first, newest first:",
				"  Warning ApplyFailed 10s ago (4 times): applying Service demo/web: forbidden",
				"  Normal Claimed 60m ago: claimed",
				"Note: cannot list jobs.batch to find the children: forbidden",
			),
		},
		{
			name: "debug page passes",
			report: func(r *Report) {
				r.Ready = cond("Ready", metav1.ConditionFalse, "ReconcileError", "", time.Minute)
				start := before(3 * time.Second)
				r.Debug = &Debug{URL: "http://127.0.0.1:8080/debug/bosun/", Reconcilers: []ReconcilerPasses{
					{Name: "simple", Passes: []bosun.PassReport{
						{
							Trigger: bosun.Trigger{Kind: "Requeue"}, Start: start, Error: "divide: boom",
							Steps: []bosun.StepReport{
								{Name: "outer", Phase: "do", Start: start, Duration: 3 * time.Millisecond, Error: "divide: boom"},
								{Name: "divide", Phase: "do", Start: start.Add(time.Millisecond), Duration: time.Millisecond, Error: "divide: boom"},
							},
						},
						{
							Trigger: bosun.Trigger{Kind: "Watch", Event: "Update", Object: types.NamespacedName{Namespace: "demo", Name: "div"}, Source: "For"},
							Start:   before(time.Minute), Result: ctrl.Result{RequeueAfter: 30 * time.Second},
						},
						{
							Trigger: bosun.Trigger{Kind: "Resync"}, Start: before(2 * time.Minute), Result: ctrl.Result{RequeueAfter: time.Nanosecond},
							Steps: []bosun.StepReport{{Name: "check", Phase: "do", Start: before(2 * time.Minute), Error: "zero divisor: bosun: pass stopped"}},
						},
					}},
					{Name: "simple-shadow"},
				}}
			},
			want: lines(
				"Simple demo/div: not Ready",
				"  Ready: False (ReconcileError) for 60s",
				"  Generation 2: the status describes it.",
				defaultPolicy,
				"Debug page, reconciler simple, last passes, newest first:",
				"  3s ago, Requeue: error in step divide (do): divide: boom",
				"  60s ago, Watch Update demo/div (For): requeue after 30s",
				"  2m ago, Resync: requeue at once; step check (do) stopped the pass: zero divisor",
				"Debug page, reconciler simple-shadow: no pass over the object recorded.",
			),
		},
		{
			name: "debug page unreachable",
			report: func(r *Report) {
				r.Ready = cond("Ready", metav1.ConditionTrue, "Succeeded", "", time.Minute)
				r.Debug = &Debug{URL: "http://127.0.0.1:1/debug/bosun/", Err: "connect: connection refused"}
			},
			want: lines(
				"Simple demo/div: Ready",
				"  Ready: True (Succeeded) for 60s",
				"  Generation 2: the status describes it.",
				defaultPolicy,
				"Debug page: cannot read http://127.0.0.1:1/debug/bosun/: connect: connection refused",
			),
		},
		{
			name: "debug page without a reconciler of the kind",
			report: func(r *Report) {
				r.Ready = cond("Ready", metav1.ConditionTrue, "Succeeded", "", time.Minute)
				r.Debug = &Debug{URL: "http://127.0.0.1:8080/debug/bosun/", Listed: []string{"memcached", "site"}}
			},
			want: lines(
				"Simple demo/div: Ready",
				"  Ready: True (Succeeded) for 60s",
				"  Generation 2: the status describes it.",
				defaultPolicy,
				"Debug page: no reconciler of Simple on http://127.0.0.1:8080/debug/bosun/ (it lists: memcached, site).",
			),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base()
			tt.report(&r)
			var b strings.Builder
			if err := r.Write(&b, now); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("Write mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsReady(t *testing.T) {
	tests := []struct {
		name     string
		ready    *metav1.Condition
		gen, obs int64
		want     bool
	}{
		{"True, current", cond("Ready", metav1.ConditionTrue, "Succeeded", "", 0), 2, 2, true},
		{"True, generation not said", cond("Ready", metav1.ConditionTrue, "Succeeded", "", 0), 2, 0, true},
		{"True, older generation", cond("Ready", metav1.ConditionTrue, "Succeeded", "", 0), 3, 2, false},
		{"False", cond("Ready", metav1.ConditionFalse, "NotReady", "", 0), 2, 2, false},
		{"Unknown", cond("Ready", metav1.ConditionUnknown, "Initializing", "", 0), 2, 2, false},
		{"none", nil, 2, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Ready: tt.ready, Generation: tt.gen, ObservedGeneration: tt.obs}
			if got := r.IsReady(); got != tt.want {
				t.Errorf("IsReady() = %v, want %v", got, tt.want)
			}
		})
	}
}
