package statusfield

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type handled struct {
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
}

type plainStatus struct {
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	handled            `json:",inline"`
	Phase              string `json:"phase,omitempty"`
}

type exportedEmbed struct {
	LastHandledReconcileAt string
}

type embeddingStatus struct {
	*exportedEmbed
	ObservedGeneration int32
}

type plain struct{ Status plainStatus }
type pointer struct{ Status *plainStatus }
type wrongKind struct{ Status embeddingStatus }
type noStatus struct{ Spec int }

// unexported keeps its status in a field of that name, which reflection
// may not set.
type unexported struct {
	status plainStatus //nolint:unused // read by reflection only
}
type scalar struct{ Status string }

func TestField(t *testing.T) {
	for _, tc := range []struct {
		name    string
		obj     any
		field   string
		kind    reflect.Kind
		want    any
		wantOK  bool
		wantErr bool
	}{
		{name: "struct status", obj: &plain{Status: plainStatus{ObservedGeneration: 3}}, field: "ObservedGeneration", kind: reflect.Int64, want: int64(3), wantOK: true},
		{name: "pointer status", obj: &pointer{Status: &plainStatus{ObservedGeneration: 4}}, field: "ObservedGeneration", kind: reflect.Int64, want: int64(4), wantOK: true},
		{name: "nil pointer status", obj: &pointer{}, field: "ObservedGeneration", kind: reflect.Int64},
		{name: "field of an unexported embedded struct", obj: &plain{Status: plainStatus{handled: handled{"t1"}}}, field: "LastHandledReconcileAt", kind: reflect.String, want: "t1", wantOK: true},
		{name: "behind a nil embedded pointer", obj: &wrongKind{}, field: "LastHandledReconcileAt", kind: reflect.String},
		{name: "behind an embedded pointer", obj: &wrongKind{Status: embeddingStatus{exportedEmbed: &exportedEmbed{"t2"}}}, field: "LastHandledReconcileAt", kind: reflect.String, want: "t2", wantOK: true},
		{name: "wrong kind", obj: &wrongKind{}, field: "ObservedGeneration", kind: reflect.Int64},
		{name: "no status", obj: &noStatus{}, field: "ObservedGeneration", kind: reflect.Int64},
		{name: "unexported status", obj: &unexported{}, field: "ObservedGeneration", kind: reflect.Int64},
		{name: "status not a struct", obj: &scalar{}, field: "ObservedGeneration", kind: reflect.Int64},
		{name: "not a pointer", obj: plain{}, field: "ObservedGeneration", kind: reflect.Int64},
		{name: "nil pointer", obj: (*plain)(nil), field: "ObservedGeneration", kind: reflect.Int64},
		{name: "unstructured", obj: &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"observedGeneration": int64(1)}}}, field: "ObservedGeneration", kind: reflect.Int64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := Field(tc.obj, tc.field, tc.kind)
			if ok != tc.wantOK {
				t.Fatalf("Field ok = %v, want %v", ok, tc.wantOK)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(tc.want, f.Interface()); diff != "" {
				t.Errorf("Field value (-want +got):\n%s", diff)
			}
			if !f.CanSet() {
				t.Error("Field is not settable")
			}
		})
	}
}

func TestCopyAndObservedGeneration(t *testing.T) {
	src := &pointer{Status: &plainStatus{ObservedGeneration: 7, Phase: "Ready"}}
	dst := &pointer{}
	if !Copy(dst, src) {
		t.Fatal("Copy = false, want true")
	}
	if g, ok := ObservedGeneration(dst); !ok || g != 7 {
		t.Errorf("ObservedGeneration after Copy = %d, %v, want 7, true", g, ok)
	}
	if Copy(&plain{}, src) {
		t.Error("Copy between types = true, want false")
	}
	if Copy(&noStatus{}, &noStatus{}) {
		t.Error("Copy without Status = true, want false")
	}
	if i := Index(reflect.TypeFor[plain]()); i != 0 {
		t.Errorf("Index(plain) = %d, want 0", i)
	}
	if i := Index(reflect.TypeFor[noStatus]()); i != -1 {
		t.Errorf("Index(noStatus) = %d, want -1", i)
	}
}
