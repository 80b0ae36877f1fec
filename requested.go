package bosun

import (
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/bosunkit/bosun/internal/statusfield"
)

// AnnotationReconcileRequestedAt asks for a reconcile now. Any new value
// (by convention the time of the request, as `date +%s` or RFC 3339 gives
// it) brings a pass, and once the pass has run the engine copies the value
// to the object's status (see ReconcileRequestStatus), so that whoever
// asked can wait until the status shows their value:
//
//	kubectl annotate --overwrite widget/w reconcile.bosun.dev/requested-at="$(date +%s)"
//
// The convention is Flux's (the annotation reconcile.fluxcd.io/requestedAt
// and the status field lastHandledReconcileAt): bosun keeps Flux's status
// field name, so that tools that wait on it work unchanged.
const AnnotationReconcileRequestedAt = "reconcile.bosun.dev/requested-at"

// reconcileRequestRecorder is implemented by types whose status records
// the last value of AnnotationReconcileRequestedAt a pass handled, through
// the methods GetLastHandledReconcileAt and SetLastHandledReconcileAt. A
// type without them, but whose Status struct has a string field
// LastHandledReconcileAt (with the JSON name lastHandledReconcileAt), gets
// that field set instead; embedding ReconcileRequestStatus in the status
// adds it.
type reconcileRequestRecorder interface {
	GetLastHandledReconcileAt() string
	SetLastHandledReconcileAt(value string)
}

// ReconcileRequestStatus is the status field in which the engine records
// the last handled AnnotationReconcileRequestedAt. Embed it in a status
// struct:
//
//	type WidgetStatus struct {
//		Conditions []metav1.Condition `json:"conditions,omitempty"`
//		bosun.ReconcileRequestStatus `json:",inline"`
//	}
type ReconcileRequestStatus struct {
	// LastHandledReconcileAt is the value of the annotation
	// reconcile.bosun.dev/requested-at that the last pass handled.
	// +optional
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
}

// ReconcileRequested is a predicate that passes the updates that change
// AnnotationReconcileRequestedAt. A controller whose For predicates filter
// out changes to metadata (predicate.GenerationChangedPredicate) adds it
// with predicate.Or, so that requests still bring a pass.
func ReconcileRequested() predicate.Predicate {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			if e.ObjectOld == nil || e.ObjectNew == nil {
				return false
			}
			return e.ObjectOld.GetAnnotations()[AnnotationReconcileRequestedAt] != e.ObjectNew.GetAnnotations()[AnnotationReconcileRequestedAt]
		},
	}
}

// recordRequest copies the object's AnnotationReconcileRequestedAt to its
// status when they differ, and reports whether it did.
func recordRequest(obj client.Object) bool {
	want, ok := obj.GetAnnotations()[AnnotationReconcileRequestedAt]
	if !ok {
		return false
	}
	if r, ok := obj.(reconcileRequestRecorder); ok {
		if r.GetLastHandledReconcileAt() == want {
			return false
		}
		r.SetLastHandledReconcileAt(want)
		return true
	}
	f, ok := statusfield.Field(obj, "LastHandledReconcileAt", reflect.String)
	if !ok || f.String() == want {
		return false
	}
	f.SetString(want)
	return true
}

// requestPending reports whether obj has an AnnotationReconcileRequestedAt
// that its status does not record as handled.
func requestPending(obj client.Object) bool {
	want, ok := obj.GetAnnotations()[AnnotationReconcileRequestedAt]
	if !ok {
		return false
	}
	if r, ok := obj.(reconcileRequestRecorder); ok {
		return r.GetLastHandledReconcileAt() != want
	}
	f, ok := statusfield.Field(obj, "LastHandledReconcileAt", reflect.String)
	return ok && f.String() != want
}
