// Package version reports what a binary was built from: its module and
// version, the commit and time of the checkout it was built in, the Go
// release, and the versions of bosun and controller-runtime it links.
//
// Everything comes from the build information that the Go toolchain stamps
// into every binary (runtime/debug.ReadBuildInfo), so no linker flags are
// needed. A binary installed with `go install module/cmd@v1.2.3` reports
// v1.2.3; one built in a Git checkout reports "(devel)" with the commit,
// and "+dirty" when the checkout had uncommitted changes.
//
//	fmt.Println(version.Get())
//	// github.com/example/shop (devel) 3f2c1a0+dirty 2026-11-23T10:00:00Z go1.26.0 bosun v0.4.0 controller-runtime v0.25.2
//
// Maturity: stable. It only reads the build information Go records.
package version
