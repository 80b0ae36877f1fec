package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// controllerManagerPath returns the path of the kube-controller-manager
// binary that Start runs when Options.ControllerManager is set,
// kube-controller-manager kubernetesVersion, from the same Go modules as
// kube-apiserver: the one in assetsEnv's directory if it is there, else
// the one in cacheDir, built with build under the lock that Binaries takes
// the first time it is needed. Building it takes a few minutes on two
// cores when kube-apiserver was built before on the same machine (Go's
// build cache holds most of what they share), and about as long as
// kube-apiserver otherwise.
func controllerManagerPath(ctx context.Context, build buildFunc, r *reporter) (string, error) {
	if dir, ok := os.LookupEnv(assetsEnv); ok && dir != "" {
		if p := filepath.Join(dir, controllerManagerBinary); isExecutable(p) {
			return p, nil
		}
	}
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	if err := ensureControllerManager(ctx, dir, build, r); err != nil {
		return "", err
	}
	return filepath.Join(dir, controllerManagerBinary), nil
}

// controllerManagerReady reports whether controllerManagerPath would return
// without building.
func controllerManagerReady() bool {
	if dir, ok := os.LookupEnv(assetsEnv); ok && dir != "" && isExecutable(filepath.Join(dir, controllerManagerBinary)) {
		return true
	}
	dir, err := cacheDir()
	return err == nil && controllerManagerComplete(dir)
}

// controllerManagerComplete reports whether dir holds a finished build of
// kube-controller-manager.
func controllerManagerComplete(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, controllerManagerMarker)); err != nil {
		return false
	}
	return isExecutable(filepath.Join(dir, controllerManagerBinary))
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
			r.printf("%s ready in %s (built by the other process)\n", controllerManagerBinary, dir)
		}
		return nil
	}
	prefix := "." + filepath.Base(dir) + "." + controllerManagerBinary + ".staging-"
	if err := removeStaging(dir, prefix); err != nil {
		return err
	}
	staging, err := os.MkdirTemp(root, prefix)
	if err != nil {
		return fmt.Errorf("creating %s staging directory: %w", controllerManagerBinary, err)
	}
	defer os.RemoveAll(staging)

	if err := build(ctx, staging, r); err != nil {
		return err
	}
	built := filepath.Join(staging, controllerManagerBinary)
	if !isExecutable(built) {
		return fmt.Errorf("%w: the build finished without producing %s", ErrBuild, controllerManagerBinary)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating control plane cache directory: %w", err)
	}
	if err := os.Rename(built, filepath.Join(dir, controllerManagerBinary)); err != nil {
		return fmt.Errorf("publishing %s: %w", controllerManagerBinary, err)
	}
	if err := writeMarker(dir, controllerManagerMarker, fmt.Sprintf("%s %s\n", controllerManagerBinary, KubernetesVersion)); err != nil {
		return err
	}
	r.printf("%s ready in %s\n", controllerManagerBinary, dir)
	return nil
}
