package manifest_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/operator/manifest"
)

func TestDecodeCRDs(t *testing.T) {
	const doc = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %s\n"
	crd := func(name string) string { return strings.Replace(doc, "%s", name, 1) }
	tests := []struct {
		name    string
		files   fstest.MapFS
		want    []string
		wantErr string
	}{
		{name: "one", files: fstest.MapFS{"a.yaml": {Data: []byte("---\n" + crd("a.x") + "---\n")}}, want: []string{"a.x"}},
		{
			name: "several files and documents in name order, other files ignored",
			files: fstest.MapFS{
				"b.yaml":    {Data: []byte(crd("b.x") + "---\n" + crd("c.x"))},
				"a.yaml":    {Data: []byte(crd("a.x"))},
				"notes.txt": {Data: []byte("not yaml: [")},
			},
			want: []string{"a.x", "b.x", "c.x"},
		},
		{
			name:    "other kind",
			files:   fstest.MapFS{"a.yaml": {Data: []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: x\n")}},
			wantErr: `crd manifest a.yaml: unexpected kind "Secret"`,
		},
		{name: "kustomization skipped", files: fstest.MapFS{"a.yaml": {Data: []byte(crd("a.x"))}, "kustomization.yaml": {Data: []byte("resources:\n- a.yaml\n")}}, want: []string{"a.x"}},
		{name: "broken", files: fstest.MapFS{"a.yaml": {Data: []byte("kind: [")}}, wantErr: "decoding crd manifest a.yaml: "},
		{name: "none", files: fstest.MapFS{}, wantErr: "no crd manifests found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crds, err := manifest.DecodeCRDs(tt.files)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("DecodeCRDs error = %v, want prefix %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeCRDs: %v", err)
			}
			var got []string
			for _, c := range crds {
				got = append(got, c.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
}
