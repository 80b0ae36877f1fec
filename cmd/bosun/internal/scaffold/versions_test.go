package scaffold

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCreateAPIVersion: a second version of a kind gets types of the same
// spec as the first, which becomes the hub and the version stored, the
// conversion between them and a round-trip test, and a place in the
// scheme of cmd/main.go; no second controller, sample or CRD.
func TestCreateAPIVersion(t *testing.T) {
	dir := newProject(t)
	if err := CreateAPI(dir, API{Group: "shop", Version: "v1", Kind: "Widget", Owns: []string{"Deployment"}}); err != nil {
		t.Fatal(err)
	}
	before := tree(t, dir)
	versions, err := Versions(dir, "Widget")
	if err != nil || !cmp.Equal(versions, []string{"v1"}) {
		t.Fatalf("Versions = %v, %v; want [v1]", versions, err)
	}
	if err := CreateAPI(dir, API{Group: "shop", Version: "v2", Kind: "Widget"}); err != nil {
		t.Fatal(err)
	}
	files := tree(t, dir)
	for path, want := range map[string][]string{
		"api/v2/groupversion_info.go": {"package v2", "+groupName=shop.example.com"},
		"api/v2/widget_types.go":      {"package v2\n", "type WidgetSpec struct", "Size int32 `json:\"size\"`", "Image string", "type WidgetList struct", "+kubebuilder:subresource:status"},
		"api/v2/widget_conversion.go": {`shopv1 "github.com/me/shop/api/v1"`, "func (src *Widget) ConvertTo(dstRaw conversion.Hub) error",
			"func (dst *Widget) ConvertFrom(srcRaw conversion.Hub) error", "shopv1.WidgetSpec(src.Spec)", "WidgetSpec(*src.Spec.DeepCopy())"},
		"api/v2/widget_conversion_test.go": {"func TestWidgetConversion(t *testing.T)", "conversion.RoundTrip(t, &shopv1.Widget{}, &Widget{})"},
		"api/v1/widget_conversion.go":      {"package v1", "func (*Widget) Hub() {}"},
		"api/v1/widget_types.go":           {"// +kubebuilder:storageversion\ntype Widget struct {"},
		"cmd/main.go":                      {`shopv2 "github.com/me/shop/api/v2"`, "shopv2.AddToScheme,\n"},
	} {
		if diff := cmp.Diff([]string(nil), missing(files[path], want)); diff != "" {
			t.Errorf("%s lacks (-want +got):\n%s\n%s", path, diff, files[path])
		}
	}
	// The types are the hub's, but for the package and the marker of the
	// version stored.
	hubTypes := strings.Replace(files["api/v1/widget_types.go"], "// +kubebuilder:storageversion\n", "", 1)
	if diff := cmp.Diff(strings.Replace(hubTypes, "package v1\n", "package v2\n", 1), files["api/v2/widget_types.go"]); diff != "" {
		t.Errorf("the types of v2 are not those of v1 (-v1 +v2):\n%s", diff)
	}
	if n := strings.Count(files["cmd/main.go"], "controller.SetupWidgetWithManager,"); n != 1 {
		t.Errorf("cmd/main.go registers the Widget controller %d times, want once", n)
	}
	// Nothing else changed: no controller, test, sample or CRD of v2.
	changed := map[string]bool{"api/v1/widget_types.go": true, "cmd/main.go": true}
	for path, text := range before {
		if !changed[path] && files[path] != text {
			t.Errorf("a second version changed %s", path)
		}
	}
	var added []string
	for _, path := range slices.Sorted(maps.Keys(files)) {
		if _, ok := before[path]; !ok {
			added = append(added, path)
		}
	}
	want := []string{"api/v1/widget_conversion.go", "api/v2/groupversion_info.go", "api/v2/widget_conversion.go", "api/v2/widget_conversion_test.go", "api/v2/widget_types.go"}
	if diff := cmp.Diff(want, added); diff != "" {
		t.Errorf("files added (-want +got):\n%s", diff)
	}

	// A third version is another spoke of the same hub.
	if err := CreateAPI(dir, API{Group: "shop", Version: "v1beta1", Kind: "Widget"}); err != nil {
		t.Fatal(err)
	}
	files = tree(t, dir)
	if n := strings.Count(files["api/v1/widget_types.go"], "+kubebuilder:storageversion"); n != 1 {
		t.Errorf("v1 has %d storageversion markers, want 1", n)
	}
	for _, path := range []string{"api/v1beta1/widget_types.go", "api/v2/widget_types.go"} {
		if strings.Contains(files[path], "storageversion") {
			t.Errorf("%s is marked as the version stored", path)
		}
	}
	if !strings.Contains(files["api/v1beta1/widget_conversion.go"], "dst, ok := dstRaw.(*shopv1.Widget)") {
		t.Errorf("v1beta1 does not convert to v1:\n%s", files["api/v1beta1/widget_conversion.go"])
	}
	if versions, _ := Versions(dir, "Widget"); !cmp.Equal(versions, []string{"v1", "v1beta1", "v2"}) {
		t.Errorf("Versions = %v, want v1, v1beta1, v2", versions)
	}
}

func TestNameMax(t *testing.T) {
	for _, tc := range []struct {
		owns []string
		want int
	}{
		{nil, 253 - len("-widget")},
		{[]string{"Secret", "ConfigMap"}, 253 - len("-widget")},
		{[]string{"Deployment"}, 63},
		{[]string{"DaemonSet"}, 63},
		{[]string{"Service"}, 63 - len("-widget")},
		{[]string{"Job"}, 63 - len("-widget")},
		{[]string{"StatefulSet", "Service"}, 63 - len("-widget") - len("-0123456789")},
	} {
		kinds, err := owned(tc.owns)
		if err != nil {
			t.Fatal(err)
		}
		if tc.owns == nil {
			kinds = nil
		}
		if got := nameMax("widget", kinds); got != tc.want {
			t.Errorf("nameMax(widget, %v) = %d, want %d", tc.owns, got, tc.want)
		}
	}
}
