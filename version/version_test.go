package version

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromBuildInfo(t *testing.T) {
	cr := &debug.Module{Path: controllerRuntimeModule, Version: "v0.25.2"}
	cases := map[string]struct {
		bi       *debug.BuildInfo
		want     Info
		wantLine string
	}{
		"operator installed at a version": {
			bi: &debug.BuildInfo{
				GoVersion: "go1.26.0",
				Path:      "example.com/shop/cmd",
				Main:      debug.Module{Path: "example.com/shop", Version: "v1.2.3"},
				Deps:      []*debug.Module{{Path: bosunModule, Version: "v0.4.0"}, cr},
			},
			want: Info{
				Path: "example.com/shop/cmd", Module: "example.com/shop", Version: "v1.2.3",
				GoVersion: "go1.26.0", Bosun: "v0.4.0", ControllerRuntime: "v0.25.2",
			},
			wantLine: "example.com/shop v1.2.3 go1.26.0 bosun v0.4.0 controller-runtime v0.25.2",
		},
		"bosun built in a modified checkout": {
			bi: &debug.BuildInfo{
				GoVersion: "go1.26.0",
				Path:      bosunModule + "/cmd/bosun",
				Main:      debug.Module{Path: bosunModule, Version: "(devel)"},
				Deps:      []*debug.Module{cr},
				Settings: []debug.BuildSetting{
					{Key: "vcs.revision", Value: "0123456789abcdef0123"},
					{Key: "vcs.time", Value: "2026-11-23T10:00:00Z"},
					{Key: "vcs.modified", Value: "true"},
				},
			},
			want: Info{
				Path: bosunModule + "/cmd/bosun", Module: bosunModule, Version: "(devel)",
				Revision: "0123456789abcdef0123", Time: "2026-11-23T10:00:00Z", Modified: true,
				GoVersion: "go1.26.0", Bosun: "(devel)", ControllerRuntime: "v0.25.2",
			},
			wantLine: bosunModule + " (devel) 0123456789ab+dirty 2026-11-23T10:00:00Z go1.26.0 controller-runtime v0.25.2",
		},
		"bosun replaced by a local checkout": {
			bi: &debug.BuildInfo{
				Path: "example.com/shop/cmd",
				Main: debug.Module{Path: "example.com/shop", Version: "(devel)"},
				Deps: []*debug.Module{{Path: bosunModule, Version: "v0.0.0", Replace: &debug.Module{Path: "../bosun"}}},
			},
			want: Info{
				Path: "example.com/shop/cmd", Module: "example.com/shop", Version: "(devel)", Bosun: "../bosun",
			},
			wantLine: "example.com/shop (devel) bosun ../bosun",
		},
		"nothing recorded": {
			bi:       &debug.BuildInfo{},
			want:     Info{},
			wantLine: "unknown",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := FromBuildInfo(tc.bi)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FromBuildInfo (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantLine, got.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGetInThisBinary reads the test binary's own build information: it is
// built in this module and links controller-runtime only if a test imports
// it, so only the module is checked.
func TestGetInThisBinary(t *testing.T) {
	got := Get()
	if got.GoVersion == "" {
		t.Errorf("Get() has no Go version: %+v", got)
	}
}
