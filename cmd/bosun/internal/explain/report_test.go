package explain

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// object returns a Widget of generation 3 with the annotations and
// conditions given, as the dynamic client reads it.
func object(annotations map[string]string, conds ...map[string]any) *unstructured.Unstructured {
	u := customResource(3, conds...)
	u.SetNamespace("demo")
	u.SetAnnotations(annotations)
	return u
}

// condMap is a condition as the dynamic client reads it.
func condMap(typ, status, reason string, observed int64) map[string]any {
	return map[string]any{
		"type": typ, "status": status, "reason": reason, "message": typ + " says " + reason,
		"lastTransitionTime": "2026-03-04T11:59:00Z", "observedGeneration": observed,
	}
}

func TestFromObject(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 3, 4, 11, 59, 0, 0, time.UTC))
	c := func(typ, status, reason string, observed int64) *metav1.Condition {
		return &metav1.Condition{
			Type: typ, Status: metav1.ConditionStatus(status), Reason: reason, Message: typ + " says " + reason,
			LastTransitionTime: at, ObservedGeneration: observed,
		}
	}
	tests := []struct {
		name   string
		obj    func() *unstructured.Unstructured
		modify func(r *Report)
	}{
		{
			name: "Ready, kstatus, failing conditions worst first",
			obj: func() *unstructured.Unstructured {
				return object(nil,
					condMap("Ready", "False", "Broken", 3),
					condMap("Reconciling", "True", "Broken", 3),
					condMap("FirstStep", "Unknown", "Initializing", 3),
					condMap("SecondStep", "False", "Broken", 3),
					condMap("ThirdStep", "True", "Done", 3),
					condMap("FourthStep", "False", "Stale", 2),
				)
			},
			modify: func(r *Report) {
				r.ObservedGeneration = 3
				r.Ready, r.Reconciling = c("Ready", "False", "Broken", 3), c("Reconciling", "True", "Broken", 3)
				r.Failing = []metav1.Condition{*c("SecondStep", "False", "Broken", 3), *c("FourthStep", "False", "Stale", 2), *c("FirstStep", "Unknown", "Initializing", 3)}
			},
		},
		{
			name: "the build that last reconciled it",
			obj: func() *unstructured.Unstructured {
				return object(map[string]string{"bosun.dev/reconciled-by": "widget=v1.4.2"}, condMap("Ready", "True", "Succeeded", 3))
			},
			modify: func(r *Report) {
				r.ObservedGeneration = 3
				r.Ready = c("Ready", "True", "Succeeded", 3)
				r.ReconciledBy = "widget=v1.4.2"
			},
		},
		{
			name: "status.observedGeneration when Ready does not say",
			obj: func() *unstructured.Unstructured {
				u := object(nil, condMap("Ready", "True", "Succeeded", 0))
				_ = unstructured.SetNestedField(u.Object, int64(2), "status", "observedGeneration")
				return u
			},
			modify: func(r *Report) {
				r.ObservedGeneration = 2
				r.Ready = c("Ready", "True", "Succeeded", 0)
			},
		},
		{
			name: "deletion, blocked",
			obj: func() *unstructured.Unstructured {
				u := object(map[string]string{"bosun.dev/release-finalizer": "true"},
					condMap("Ready", "False", "ExternalRefused", 3),
					condMap("DeletionBlocked", "True", "ExternalRefused", 3),
				)
				u.SetDeletionTimestamp(&at)
				u.SetFinalizers([]string{"test.bosun.dev/cleanup"})
				return u
			},
			modify: func(r *Report) {
				r.ObservedGeneration = 3
				r.Ready = c("Ready", "False", "ExternalRefused", 3)
				r.Deletion = &Deletion{Requested: at.Time, Finalizers: []string{"test.bosun.dev/cleanup"}, Blocked: c("DeletionBlocked", "True", "ExternalRefused", 3), Release: "true"}
			},
		},
		{
			name: "external resource, its conditions under it, a create pending",
			obj: func() *unstructured.Unstructured {
				return object(map[string]string{
					"bosun.dev/external-name":             "demo.x",
					"bosun.dev/external-create-pending":   "2026-03-04T11:58:00.5Z",
					"bosun.dev/external-create-succeeded": "2026-03-04T11:50:00Z",
				},
					condMap("Ready", "False", "CreateIncomplete", 3),
					condMap("Synced", "False", "CreateIncomplete", 3),
					condMap("Available", "False", "Creating", 3),
				)
			},
			modify: func(r *Report) {
				r.ObservedGeneration = 3
				r.Ready = c("Ready", "False", "CreateIncomplete", 3)
				r.External = &External{
					Name: "demo.x", Synced: c("Synced", "False", "CreateIncomplete", 3), Available: c("Available", "False", "Creating", 3),
					CreatePending: time.Date(2026, 3, 4, 11, 58, 0, 5e8, time.UTC),
				}
			},
		},
		{
			name: "external resource, the create recorded",
			obj: func() *unstructured.Unstructured {
				return object(map[string]string{
					"bosun.dev/external-name":           "demo.x",
					"bosun.dev/external-create-pending": "2026-03-04T11:58:00Z",
					"bosun.dev/external-create-failed":  "2026-03-04T11:58:01Z",
				}, condMap("Synced", "False", "CreateFailed", 3))
			},
			modify: func(r *Report) {
				r.External = &External{Name: "demo.x", Synced: c("Synced", "False", "CreateFailed", 3)}
			},
		},
		{
			name: "Available without Synced is the object's own condition",
			obj: func() *unstructured.Unstructured {
				return object(nil, condMap("Available", "False", "Updating", 3))
			},
			modify: func(r *Report) {
				r.Failing = []metav1.Condition{*c("Available", "False", "Updating", 3)}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := &Report{Namespace: "demo", Name: "x", Generation: 3}
			tt.modify(want)
			got := &Report{}
			got.fromObject(tt.obj())
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("fromObject mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEvents(t *testing.T) {
	t0 := time.Date(2026, 3, 4, 11, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	// The same events as core/v1 shows them, whichever API recorded them.
	recorded := []corev1.Event{
		{ // through events.k8s.io: an event time and a series
			ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(at(1))},
			Type:       corev1.EventTypeWarning, Reason: "ApplyFailed", Message: "forbidden",
			EventTime: metav1.NewMicroTime(at(1)),
			Series:    &corev1.EventSeries{Count: 7, LastObservedTime: metav1.NewMicroTime(at(9))},
		},
		{ // through core/v1: first and last timestamps and a count
			ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(at(2))},
			Type:       corev1.EventTypeNormal, Reason: "Claimed", Message: "claimed",
			FirstTimestamp: metav1.NewTime(at(2)), LastTimestamp: metav1.NewTime(at(10)), Count: 2,
		},
		{
			ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(at(3))},
			Type:       corev1.EventTypeWarning, Reason: "DeletionBlocked", Message: "blocked", EventTime: metav1.NewMicroTime(at(3)),
		},
		{
			ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(at(5))},
			Type:       corev1.EventTypeNormal, Reason: "CleanedUp", Message: "done", EventTime: metav1.NewMicroTime(at(5)),
		},
	}
	var got []Event
	for i := range recorded {
		got = append(got, eventOf(&recorded[i]))
	}
	sortEvents(got)
	want := []Event{
		{Type: "Warning", Reason: "ApplyFailed", Note: "forbidden", Time: at(9), Count: 7},
		{Type: "Warning", Reason: "DeletionBlocked", Note: "blocked", Time: at(3), Count: 1},
		{Type: "Normal", Reason: "Claimed", Note: "claimed", Time: at(10), Count: 2},
		{Type: "Normal", Reason: "CleanedUp", Note: "done", Time: at(5), Count: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}
