package webhook

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	crconversion "sigs.k8s.io/controller-runtime/pkg/conversion"
)

var (
	hubGVK   = schema.GroupVersionKind{Group: "t.bosun.dev", Version: "v2", Kind: "Thing"}
	spokeGVK = schema.GroupVersionKind{Group: "t.bosun.dev", Version: "v1", Kind: "Thing"}
)

// hubThing is the hub of a kind whose spoke, spokeThing, converts as its
// mode says.
type hubThing struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Value string
}

func (h *hubThing) DeepCopyObject() runtime.Object { c := *h; return &c }
func (*hubThing) Hub()                             {}

type spokeThing struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Value string
	mode  string
}

func (s *spokeThing) DeepCopyObject() runtime.Object { c := *s; return &c }

func (s *spokeThing) ConvertTo(dst crconversion.Hub) error {
	switch s.mode {
	case "panic":
		panic("no way")
	case "fail":
		return errors.New("value cannot be said in v2")
	}
	// Assigning the whole struct clears apiVersion and kind.
	*dst.(*hubThing) = hubThing{ObjectMeta: s.ObjectMeta, Value: s.Value}
	return nil
}

func (s *spokeThing) ConvertFrom(src crconversion.Hub) error {
	h := src.(*hubThing)
	*s = spokeThing{ObjectMeta: h.ObjectMeta, Value: h.Value}
	return nil
}

func TestConverter(t *testing.T) {
	for _, tc := range []struct {
		mode, wantErr string
	}{
		{mode: ""},
		{mode: "fail", wantErr: "converting Thing ns/x from t.bosun.dev/v1 to t.bosun.dev/v2: value cannot be said in v2"},
		{mode: "panic", wantErr: "converting Thing ns/x from t.bosun.dev/v1 to t.bosun.dev/v2: panic: no way"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			src := &spokeThing{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"}, Value: "v", mode: tc.mode}
			src.SetGroupVersionKind(spokeGVK)
			dst := &hubThing{}
			dst.SetGroupVersionKind(hubGVK)
			err := converter{scheme: runtime.NewScheme()}.ConvertObject(context.Background(), src, dst)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ConvertObject: %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if dst.GroupVersionKind() != hubGVK || dst.Value != "v" {
				t.Errorf("converted to %v with value %q, want %v and v", dst.GroupVersionKind(), dst.Value, hubGVK)
			}
		})
	}
}
