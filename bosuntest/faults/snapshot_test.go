package faults

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterOnly: a change of an object is the dev cluster's own only
// when every managed-fields entry it moved is one of its components'.
func TestClusterOnly(t *testing.T) {
	at := func(sec int) *metav1.Time {
		tm := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, sec, 0, time.UTC))
		return &tm
	}
	entry := func(manager string, sec int, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Time: at(sec), FieldsV1: metav1.NewFieldsV1(fields)}
	}
	base := []metav1.ManagedFieldsEntry{entry("memcached", 1, `{"f:spec":{}}`), entry("kube-controller-manager", 1, `{"f:endpoints":{}}`)}
	for _, tc := range []struct {
		name  string
		after []metav1.ManagedFieldsEntry
		want  bool
	}{
		{"the controller manager's entry moved", []metav1.ManagedFieldsEntry{base[0], entry("kube-controller-manager", 2, `{"f:endpoints":{}}`)}, true},
		{"kwok added an entry", append(append([]metav1.ManagedFieldsEntry{}, base...), entry("kwok", 3, `{"f:status":{}}`)), true},
		{"the operator's entry moved", []metav1.ManagedFieldsEntry{entry("memcached", 2, `{"f:spec":{"f:x":{}}}`), base[1]}, false},
		{"both moved", []metav1.ManagedFieldsEntry{entry("memcached", 2, `{"f:spec":{}}`), entry("kube-controller-manager", 2, `{"f:endpoints":{}}`)}, false},
		{"an entry of another went", []metav1.ManagedFieldsEntry{base[1]}, false},
		{"no entry moved", base, false},
	} {
		if got := clusterOnly(managedEntries(base), managedEntries(tc.after)); got != tc.want {
			t.Errorf("%s: clusterOnly = %v, want %v", tc.name, got, tc.want)
		}
	}
}
