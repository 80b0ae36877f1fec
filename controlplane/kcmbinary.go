package controlplane

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ControllerManagerPath returns the path of the kube-controller-manager
// binary that Start runs when Options.ControllerManager is set. It is
// kube-controller-manager KubernetesVersion, from the same Go modules as
// kube-apiserver.
//
// If AssetsEnv (KUBEBUILDER_ASSETS) is set and its directory holds
// kube-controller-manager, that one is used. Otherwise it is built from Go
// modules the first time it is needed and kept in CacheDir, next to
// kube-apiserver and etcd, with a completion marker of its own: a cache that
// already holds kube-apiserver and etcd is used as it is, and only
// kube-controller-manager is added to it. Building it takes a few minutes
// on two cores when kube-apiserver was built before on the same machine (Go's
// build cache holds most of what they share), and about as long as
// kube-apiserver otherwise. Several processes may call ControllerManagerPath
// at once: one builds, under the lock that Binaries takes, while the others
// wait for it. Progress lines go to progress, which may be nil.
func ControllerManagerPath(ctx context.Context, progress io.Writer) (string, error) {
	return controllerManagerPath(ctx, buildFunc(goBuildControllerManager), newReporter(progress))
}

// controllerManagerPath is ControllerManagerPath with the builder given.
func controllerManagerPath(ctx context.Context, build buildFunc, r *reporter) (string, error) {
	if dir, ok := os.LookupEnv(AssetsEnv); ok && dir != "" {
		if p := filepath.Join(dir, ControllerManagerBinary); isExecutable(p) {
			return p, nil
		}
	}
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	if err := ensureControllerManager(ctx, dir, build, r); err != nil {
		return "", err
	}
	return filepath.Join(dir, ControllerManagerBinary), nil
}

// ControllerManagerReady reports whether ControllerManagerPath would return
// without building.
func ControllerManagerReady() bool {
	if dir, ok := os.LookupEnv(AssetsEnv); ok && dir != "" && isExecutable(filepath.Join(dir, ControllerManagerBinary)) {
		return true
	}
	dir, err := CacheDir()
	return err == nil && controllerManagerComplete(dir)
}

// controllerManagerComplete reports whether dir holds a finished build of
// kube-controller-manager.
func controllerManagerComplete(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, controllerManagerMarker)); err != nil {
		return false
	}
	return isExecutable(filepath.Join(dir, ControllerManagerBinary))
}

// ensureControllerManager returns once dir holds a finished build of
// kube-controller-manager, running build under the lock of dir if it does
// not. build writes the binary into a staging directory next to dir, from
// which it is moved into dir; only then is its marker written, so a reader
// never finds a marker without the whole binary. Whatever else dir holds is
// left alone, and dir is made if it does not exist yet.
func ensureControllerManager(ctx context.Context, dir string, build buildFunc, r *reporter) error {
	if controllerManagerComplete(dir) {
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

	if controllerManagerComplete(dir) {
		if waited {
			r.printf("%s ready in %s (built by the other process)\n", ControllerManagerBinary, dir)
		}
		return nil
	}
	prefix := "." + filepath.Base(dir) + "." + ControllerManagerBinary + ".staging-"
	if err := removeStaging(dir, prefix); err != nil {
		return err
	}
	staging, err := os.MkdirTemp(root, prefix)
	if err != nil {
		return fmt.Errorf("creating %s staging directory: %w", ControllerManagerBinary, err)
	}
	defer os.RemoveAll(staging)

	if err := build(ctx, staging, r); err != nil {
		return err
	}
	built := filepath.Join(staging, ControllerManagerBinary)
	if !isExecutable(built) {
		return fmt.Errorf("%w: the build finished without producing %s", ErrBuild, ControllerManagerBinary)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating control plane cache directory: %w", err)
	}
	if err := os.Rename(built, filepath.Join(dir, ControllerManagerBinary)); err != nil {
		return fmt.Errorf("publishing %s: %w", ControllerManagerBinary, err)
	}
	if err := writeMarker(dir, controllerManagerMarker, fmt.Sprintf("%s %s\n", ControllerManagerBinary, KubernetesVersion)); err != nil {
		return err
	}
	r.printf("%s ready in %s\n", ControllerManagerBinary, dir)
	return nil
}
