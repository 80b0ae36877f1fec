package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// extraBinary is a program built into the cache directory beside
// kube-apiserver and etcd the first time a control plane asks for it:
// kube-controller-manager, kube-scheduler and kwok. Each has a completion
// marker of its own, so that a cache made before it was needed is kept and
// only the new binary is added.
type extraBinary struct {
	// name is the file name of the binary.
	name string
	// version is written into the marker; a marker naming another version
	// is an old build, replaced on first use.
	version string
	// build writes the binary, named name, into a directory.
	build buildFunc
}

// The extra binaries, built with goBuildExtra.
var (
	controllerManagerBuild = extraBinary{name: controllerManagerBinary, version: KubernetesVersion,
		build: goBuildExtra(controllerManagerBinary, KubernetesVersion, controllerManagerPackage, apiServerModule)}
	schedulerBuild = extraBinary{name: schedulerBinary, version: KubernetesVersion,
		build: goBuildExtra(schedulerBinary, KubernetesVersion, schedulerPackage, apiServerModule)}
	kwokBuild = extraBinary{name: kwokBinary, version: KwokVersion,
		build: goBuildExtra(kwokBinary, KwokVersion, kwokPackage, kwokModule)}
)

// marker is the name of b's completion marker.
func (b extraBinary) marker() string { return ".complete-" + b.name }

// markerText is what b's marker holds.
func (b extraBinary) markerText() string { return b.name + " " + b.version + "\n" }

// path returns the path of b: the one in assetsEnv's directory if it is
// there, else the one in the cache directory, built there under the lock
// that Binaries takes the first time it is needed.
func (b extraBinary) path(ctx context.Context, r *reporter) (string, error) {
	if dir, ok := os.LookupEnv(assetsEnv); ok && dir != "" {
		if p := filepath.Join(dir, b.name); isExecutable(p) {
			return p, nil
		}
	}
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	if err := b.ensure(ctx, dir, r); err != nil {
		return "", err
	}
	return filepath.Join(dir, b.name), nil
}

// ready reports whether path would return without building.
func (b extraBinary) ready() bool {
	if dir, ok := os.LookupEnv(assetsEnv); ok && dir != "" && isExecutable(filepath.Join(dir, b.name)) {
		return true
	}
	dir, err := cacheDir()
	return err == nil && b.complete(dir)
}

// complete reports whether dir holds a finished build of b of its version.
func (b extraBinary) complete(dir string) bool {
	text, err := os.ReadFile(filepath.Join(dir, b.marker()))
	if err != nil || strings.TrimSpace(string(text)) != strings.TrimSpace(b.markerText()) {
		return false
	}
	return isExecutable(filepath.Join(dir, b.name))
}

// ensure returns once dir holds a finished build of b, running b.build
// under the lock of dir if it does not. The build writes the binary into a
// staging directory next to dir, from which it is moved into dir; only then
// is its marker written, so a reader never finds a marker without the whole
// binary. Whatever else dir holds is left alone, and dir is made if it does
// not exist yet.
func (b extraBinary) ensure(ctx context.Context, dir string, r *reporter) error {
	if b.complete(dir) {
		return nil
	}
	root := filepath.Dir(dir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("creating control plane cache directory: %w", err)
	}
	unlock, waited, err := acquireLock(ctx, dir+".lock", r)
	if err != nil {
		return err
	}
	defer unlock()

	if b.complete(dir) {
		if waited {
			r.printf("%s ready in %s (built by the other process)\n", b.name, dir)
		}
		return nil
	}
	prefix := "." + filepath.Base(dir) + "." + b.name + ".staging-"
	if err := removeStaging(dir, prefix); err != nil {
		return err
	}
	staging, err := os.MkdirTemp(root, prefix)
	if err != nil {
		return fmt.Errorf("creating %s staging directory: %w", b.name, err)
	}
	defer os.RemoveAll(staging)

	if err := b.build(ctx, staging, r); err != nil {
		return err
	}
	built := filepath.Join(staging, b.name)
	if !isExecutable(built) {
		return fmt.Errorf("%w: the build finished without producing %s", ErrBuild, b.name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating control plane cache directory: %w", err)
	}
	// An old marker goes first: between the rename and the new marker the
	// binary must not pass for the old version's.
	if err := os.Remove(filepath.Join(dir, b.marker())); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("replacing %s: %w", b.name, err)
	}
	if err := os.Rename(built, filepath.Join(dir, b.name)); err != nil {
		return fmt.Errorf("publishing %s: %w", b.name, err)
	}
	if err := writeMarker(dir, b.marker(), b.markerText()); err != nil {
		return err
	}
	r.printf("%s ready in %s\n", b.name, dir)
	return nil
}
