package version

import (
	"fmt"
	"runtime/debug"
	"strings"
)

const (
	// bosunModule is the module path of bosun.
	bosunModule = "github.com/bosunkit/bosun"
	// controllerRuntimeModule is the module path of controller-runtime.
	controllerRuntimeModule = "sigs.k8s.io/controller-runtime"
)

// Info is what a binary was built from. Fields the build did not record are
// empty.
type Info struct {
	// Path is the import path of the main package, Module and Version its
	// module and the module's version ("(devel)" for a build in a checkout).
	Path, Module, Version string
	// Revision and Time are the VCS commit and commit time of the checkout;
	// Modified says it had uncommitted changes.
	Revision, Time string
	Modified       bool
	// GoVersion is the Go release that built the binary.
	GoVersion string
	// Bosun and ControllerRuntime are the versions of those modules in the
	// build (with a replaced module, the replacement's version or path).
	Bosun, ControllerRuntime string
}

// Get reads the running binary's build information. A binary built
// without module support has none, and Get returns the zero Info.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{}
	}
	return FromBuildInfo(bi)
}

// FromBuildInfo extracts an Info from build information.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{
		Path:      bi.Path,
		Module:    bi.Main.Path,
		Version:   bi.Main.Version,
		GoVersion: bi.GoVersion,
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	if bi.Main.Path == bosunModule {
		info.Bosun = bi.Main.Version
	}
	for _, d := range bi.Deps {
		switch d.Path {
		case bosunModule:
			info.Bosun = moduleVersion(d)
		case controllerRuntimeModule:
			info.ControllerRuntime = moduleVersion(d)
		}
	}
	return info
}

// moduleVersion is the version of a dependency, or of its replacement:
// a version when replaced by another module version, the directory when
// replaced by a local one.
func moduleVersion(m *debug.Module) string {
	if r := m.Replace; r != nil {
		if r.Version != "" {
			return r.Version
		}
		return r.Path
	}
	return m.Version
}

// ShortRevision is Revision cut to 12 characters, with "+dirty" when the
// checkout was modified; "" when no revision was recorded.
func (i Info) ShortRevision() string {
	if i.Revision == "" {
		return ""
	}
	r := i.Revision
	if len(r) > 12 {
		r = r[:12]
	}
	if i.Modified {
		r += "+dirty"
	}
	return r
}

// String is the Info on one line: module, version, revision, time, Go
// release, then bosun and controller-runtime; unknown parts are left out.
func (i Info) String() string {
	module := i.Module
	if module == "" {
		module = i.Path
	}
	var parts []string
	for _, p := range []string{module, i.Version, i.ShortRevision(), i.Time, i.GoVersion} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if i.Bosun != "" && i.Module != bosunModule {
		parts = append(parts, "bosun "+i.Bosun)
	}
	if i.ControllerRuntime != "" {
		parts = append(parts, "controller-runtime "+i.ControllerRuntime)
	}
	if len(parts) == 0 {
		return "unknown"
	}
	return strings.Join(parts, " ")
}

// Lines is the Info as "key: value" lines, one per known field, for
// `bosun version` and an operator's --version.
func (i Info) Lines() string {
	var b strings.Builder
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%-19s %s\n", k+":", v)
		}
	}
	line("module", i.Module)
	line("version", i.Version)
	line("commit", i.ShortRevision())
	line("commit time", i.Time)
	line("go", i.GoVersion)
	if i.Module != bosunModule {
		line("bosun", i.Bosun)
	}
	line("controller-runtime", i.ControllerRuntime)
	return b.String()
}
