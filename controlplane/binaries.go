package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

const (
	// KubernetesVersion is the version of the kube-apiserver that Binaries
	// builds.
	KubernetesVersion = "v1.37.0"
	// EtcdVersion is the version of the etcd that Binaries builds.
	EtcdVersion = "v3.7.0"

	// AssetsEnv names the environment variable that points at a directory
	// already holding kube-apiserver and etcd. When it is set, Binaries builds
	// nothing and uses that directory. It is the variable envtest reads too.
	AssetsEnv = "KUBEBUILDER_ASSETS"
	// CacheEnv names the environment variable that overrides the directory
	// under which built binaries are kept, by default
	// os.UserCacheDir()/bosun/controlplane. Binaries still adds a
	// subdirectory named after the versions (see CacheKey).
	CacheEnv = "BOSUN_CONTROLPLANE_CACHE"

	// CacheKey is the name of the directory, under the cache root, that holds
	// the binaries of this KubernetesVersion and EtcdVersion.
	CacheKey = "kube-apiserver-" + KubernetesVersion + "-etcd-" + EtcdVersion

	// APIServerBinary is the file name of the kube-apiserver binary.
	APIServerBinary = "kube-apiserver"
	// EtcdBinary is the file name of the etcd binary.
	EtcdBinary = "etcd"
	// ControllerManagerBinary is the file name of the kube-controller-manager
	// binary (see ControllerManagerPath).
	ControllerManagerBinary = "kube-controller-manager"
)

// markerFile is written into a cache directory once both binaries are in
// place. A directory without it is an unfinished build and is never used.
const markerFile = ".complete"

// controllerManagerMarker is written into a cache directory once
// kube-controller-manager is in place. It is separate from markerFile because
// kube-controller-manager is built on first need, after the others, into a
// directory that may already be in use.
const controllerManagerMarker = ".complete-" + ControllerManagerBinary

var (
	// ErrMissingBinary is returned (wrapped) when a directory given through
	// AssetsEnv lacks kube-apiserver or etcd.
	ErrMissingBinary = errors.New("control plane binary missing")
	// ErrBuild is returned (wrapped) when kube-apiserver and etcd could not be
	// built from Go modules.
	ErrBuild = errors.New("building control plane binaries failed")
)

// progressInterval is how often a running build or a waiting process reports
// that it is still at it. Tests shorten it.
var progressInterval = 15 * time.Second

// lockPollInterval is how often a waiting process retries the build lock.
const lockPollInterval = 200 * time.Millisecond

// binaryNames lists the files every binaries directory holds.
var binaryNames = []string{APIServerBinary, EtcdBinary}

// Binaries returns a directory holding the kube-apiserver and etcd binaries
// that Start runs.
//
// If AssetsEnv (KUBEBUILDER_ASSETS) is set, that directory is returned after
// checking that both binaries are in it; an error wrapping ErrMissingBinary
// names any that is not.
//
// Otherwise the binaries are built from Go modules the first time they are
// needed, which takes about five minutes on two cores and needs the Go module
// proxy (or a module cache that holds the modules), and kept in CacheDir for
// every later call. Several processes may call Binaries at once: one builds
// while the others wait for it, and a build that was interrupted is never
// used. Progress lines go to progress, which may be nil.
func Binaries(ctx context.Context, progress io.Writer) (string, error) {
	if dir, ok := os.LookupEnv(AssetsEnv); ok && dir != "" {
		if err := checkBinaries(dir); err != nil {
			return "", fmt.Errorf("%s=%s: %w", AssetsEnv, dir, err)
		}
		return dir, nil
	}
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	return ensureBuilt(ctx, dir, buildFunc(goBuild), newReporter(progress))
}

// BinariesReady reports whether Binaries would return without building: either
// AssetsEnv names a directory holding both binaries, or CacheDir holds a
// finished build.
func BinariesReady() bool {
	if dir, ok := os.LookupEnv(AssetsEnv); ok && dir != "" {
		return checkBinaries(dir) == nil
	}
	dir, err := CacheDir()
	return err == nil && complete(dir)
}

// EnsureBinaries is for command-line use: it is what `bosun controlplane`
// runs ahead of a test run. It builds (or finds) every binary Start may run,
// kube-apiserver and etcd (Binaries) and kube-controller-manager
// (ControllerManagerPath), so that no test has to build one within its
// timeout, and returns the directory of kube-apiserver and etcd. It tells w
// where kube-controller-manager is when that is another directory.
func EnsureBinaries(ctx context.Context, w io.Writer) (string, error) {
	dir, err := Binaries(ctx, w)
	if err != nil {
		return "", err
	}
	kcm, err := ControllerManagerPath(ctx, w)
	if err != nil {
		return "", err
	}
	if filepath.Dir(kcm) != dir && w != nil {
		_, _ = fmt.Fprintf(w, "%s is %s\n", ControllerManagerBinary, kcm)
	}
	return dir, nil
}

// CacheDir returns the directory that Binaries builds into when AssetsEnv is
// not set: CacheKey under $BOSUN_CONTROLPLANE_CACHE if that is set, else under
// os.UserCacheDir()/bosun/controlplane. The directory may not exist yet.
func CacheDir() (string, error) {
	root := os.Getenv(CacheEnv)
	if root == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("finding the user cache directory (set %s or %s instead): %w", CacheEnv, AssetsEnv, err)
		}
		root = filepath.Join(base, "bosun", "controlplane")
	}
	return filepath.Join(root, CacheKey), nil
}

// checkBinaries reports which of the control plane binaries dir lacks.
func checkBinaries(dir string) error {
	var missing []string
	for _, name := range binaryNames {
		if !isExecutable(filepath.Join(dir, name)) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s not found in %s", ErrMissingBinary, strings.Join(missing, " and "), dir)
	}
	return nil
}

// isExecutable reports whether path is a regular file with an execute bit.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// complete reports whether dir is a finished build.
func complete(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, markerFile)); err != nil {
		return false
	}
	return checkBinaries(dir) == nil
}

// buildFunc builds kube-apiserver and etcd into the existing directory out,
// under the names APIServerBinary and EtcdBinary, reporting progress to r.
type buildFunc func(ctx context.Context, out string, r *reporter) error

// ensureBuilt returns dir once it holds a finished build, running build under
// a file lock if it does not. Only the process holding the lock builds; the
// others wait, then find the finished directory and use it.
func ensureBuilt(ctx context.Context, dir string, build buildFunc, r *reporter) (string, error) {
	if complete(dir) {
		return dir, nil
	}
	root := filepath.Dir(dir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("creating control plane cache directory: %w", err)
	}
	lockPath := dir + ".lock"
	unlock, waited, err := acquireLock(ctx, lockPath, r)
	if err != nil {
		return "", err
	}
	defer unlock()

	if complete(dir) {
		if waited {
			r.printf("control plane binaries ready in %s (built by the other process)\n", dir)
		}
		return dir, nil
	}
	// Under the lock nobody else is building this key, so anything left
	// over is from a build that was interrupted.
	if err := removeStaging(dir, stagingPrefix(dir)); err != nil {
		return "", err
	}
	staging, err := os.MkdirTemp(root, stagingPrefix(dir))
	if err != nil {
		return "", fmt.Errorf("creating control plane staging directory: %w", err)
	}
	defer os.RemoveAll(staging) // gone after a successful rename

	if err := build(ctx, staging, r); err != nil {
		return "", err
	}
	if err := checkBinaries(staging); err != nil {
		return "", fmt.Errorf("%w: the build finished without producing its binaries: %w", ErrBuild, err)
	}
	if err := writeMarker(staging, markerFile, fmt.Sprintf("kube-apiserver %s\netcd %s\n", KubernetesVersion, EtcdVersion)); err != nil {
		return "", err
	}
	if err := os.Chmod(staging, 0o755); err != nil {
		return "", fmt.Errorf("publishing control plane binaries: %w", err)
	}
	if err := replaceUnfinished(dir, staging); err != nil {
		return "", err
	}
	if err := os.Rename(staging, dir); err != nil {
		return "", fmt.Errorf("publishing control plane binaries: %w", err)
	}
	r.printf("control plane binaries ready in %s\n", dir)
	return dir, nil
}

// stagingPrefix is the name prefix of the staging directories in which
// ensureBuilt builds dir.
func stagingPrefix(dir string) string { return "." + filepath.Base(dir) + ".staging-" }

// removeStaging deletes the staging directories, next to dir and named with
// prefix, of earlier builds that were interrupted.
func removeStaging(dir, prefix string) error {
	stale, err := filepath.Glob(filepath.Join(filepath.Dir(dir), prefix+"*"))
	if err != nil {
		return fmt.Errorf("finding stale control plane builds: %w", err)
	}
	for _, s := range stale {
		if err := os.RemoveAll(s); err != nil {
			return fmt.Errorf("removing stale control plane build %s: %w", s, err)
		}
	}
	return nil
}

// replaceUnfinished clears the way for staging to be renamed to dir: it
// deletes an unfinished dir, the remains of an interrupted build, first
// moving a finished kube-controller-manager out of it into staging. Such a
// directory holds one when kube-controller-manager was built before
// kube-apiserver and etcd (KUBEBUILDER_ASSETS lacked only
// kube-controller-manager).
func replaceUnfinished(dir, staging string) error {
	if controllerManagerComplete(dir) {
		for _, name := range []string{ControllerManagerBinary, controllerManagerMarker} {
			if err := os.Rename(filepath.Join(dir, name), filepath.Join(staging, name)); err != nil {
				return fmt.Errorf("keeping the %s already built: %w", ControllerManagerBinary, err)
			}
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing unfinished control plane build %s: %w", dir, err)
	}
	return nil
}

// writeMarker records in the file name of dir that a build finished, with
// text saying what it built, flushing it to disk so that a crash right after
// cannot leave an empty marker that claims a build that is not on disk.
func writeMarker(dir, name, text string) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("writing build marker: %w", err)
	}
	_, werr := io.WriteString(f, text)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("writing build marker: %w", err)
	}
	return nil
}

// acquireLock takes the exclusive lock on path, telling r when it has to wait
// for another process and, every progressInterval, that it still waits. It
// reports whether it had to wait.
func acquireLock(ctx context.Context, path string, r *reporter) (unlock func(), waited bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("opening control plane build lock: %w", err)
	}
	var start, next time.Time
	for {
		ok, err := tryLock(f)
		if err != nil {
			_ = f.Close()
			return nil, false, fmt.Errorf("locking %s: %w", path, err)
		}
		if ok {
			return func() {
				_ = unlockFile(f)
				_ = f.Close()
			}, !start.IsZero(), nil
		}
		if now := time.Now(); start.IsZero() {
			start, next = now, now.Add(progressInterval)
			r.printf("waiting for another process that is building the control plane binaries (lock %s)\n", path)
		} else if !now.Before(next) {
			next = now.Add(progressInterval)
			r.printf("still waiting for the other build: %s elapsed\n", now.Sub(start).Round(time.Second))
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, true, fmt.Errorf("waiting for the control plane build lock %s: %w", path, ctx.Err())
		case <-time.After(lockPollInterval):
		}
	}
}

// reporter writes progress lines to a writer, one at a time.
type reporter struct {
	mu sync.Mutex
	w  io.Writer
}

// newReporter returns a reporter writing to w, or discarding if w is nil.
func newReporter(w io.Writer) *reporter {
	if w == nil {
		w = io.Discard
	}
	return &reporter{w: w}
}

// printf writes one formatted progress line. Write errors are ignored:
// progress is informational.
func (r *reporter) printf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = fmt.Fprintf(r.w, format, args...)
}
