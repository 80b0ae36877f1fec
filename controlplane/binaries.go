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

	"k8s.io/apimachinery/pkg/util/wait"
)

const (
	// KubernetesVersion is the version of the kube-apiserver that Binaries
	// builds.
	KubernetesVersion = "v1.37.0"
	// EtcdVersion is the version of the etcd that Binaries builds.
	EtcdVersion = "v3.7.0"
	// KwokVersion is the version of kwok that Binaries builds for
	// Options.Nodes.
	KwokVersion = "v0.8.0"

	// assetsEnv names the environment variable that points at a directory
	// already holding kube-apiserver and etcd. When it is set, Binaries builds
	// nothing and uses that directory. It is the variable envtest reads too.
	assetsEnv = "KUBEBUILDER_ASSETS"
	// cacheEnv names the environment variable that overrides the directory
	// under which built binaries are kept, by default
	// os.UserCacheDir()/bosun/controlplane. Binaries still adds a
	// subdirectory named after the versions (see cacheKey).
	cacheEnv = "BOSUN_CONTROLPLANE_CACHE"

	// cacheKey is the name of the directory, under the cache root, that holds
	// the binaries of this KubernetesVersion and EtcdVersion.
	cacheKey = "kube-apiserver-" + KubernetesVersion + "-etcd-" + EtcdVersion

	// apiServerBinary is the file name of the kube-apiserver binary.
	apiServerBinary = "kube-apiserver"
	// etcdBinary is the file name of the etcd binary.
	etcdBinary = "etcd"
	// controllerManagerBinary is the file name of the kube-controller-manager
	// binary.
	controllerManagerBinary = "kube-controller-manager"
	// schedulerBinary is the file name of the kube-scheduler binary.
	schedulerBinary = "kube-scheduler"
	// kwokBinary is the file name of the kwok binary.
	kwokBinary = "kwok"
)

// markerFile is written into a cache directory once both binaries are in
// place. A directory without it is an unfinished build and is never used.
const markerFile = ".complete"

var (
	// ErrMissingBinary is returned (wrapped) when a directory given through
	// assetsEnv lacks kube-apiserver or etcd.
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
var binaryNames = []string{apiServerBinary, etcdBinary}

// Binaries finds or builds the binaries Start runs for opts and returns the
// directory of kube-apiserver and etcd: those two always,
// kube-controller-manager when opts.ControllerManager is set, and
// kube-scheduler and kwok when opts.Nodes is more than zero. Only
// opts.Progress, which receives progress lines and may be nil,
// opts.ControllerManager and opts.Nodes matter. `bosun controlplane` runs it
// asking for all of them ahead of a test run, so that no test has to build a
// binary within its timeout; it then also tells opts.Progress where each
// other binary is when that is another directory.
//
// If KUBEBUILDER_ASSETS is set, that directory is returned after checking
// that kube-apiserver and etcd are in it; an error wrapping ErrMissingBinary
// names any that is not. The other binaries are taken from there too if they
// are there.
//
// Otherwise the binaries are built from Go modules the first time they are
// needed, which takes about five minutes on two cores for kube-apiserver and
// etcd and needs the Go module proxy (or a module cache that holds the
// modules), and kept in the cache directory (see the package documentation)
// for every later call. Each other binary is built into the same directory,
// with a completion marker of its own, the first time it is asked for: a
// cache that already holds kube-apiserver and etcd is used as it is. Several
// processes may call Binaries at once: one builds while the others wait for
// it, and a build that was interrupted is never used.
func Binaries(ctx context.Context, opts Options) (string, error) {
	bins, err := binaries(ctx, opts)
	if err != nil {
		return "", err
	}
	for _, p := range []string{bins.controllerManager, bins.scheduler, bins.kwok} {
		if p != "" && filepath.Dir(p) != bins.dir && opts.Progress != nil {
			_, _ = fmt.Fprintf(opts.Progress, "%s is %s\n", filepath.Base(p), p)
		}
	}
	return bins.dir, nil
}

// binaryPaths says where the binaries of a control plane are.
type binaryPaths struct {
	// dir holds kube-apiserver and etcd.
	dir string
	// controllerManager, scheduler and kwok are the paths of those
	// binaries, or empty when the options do not ask for them.
	controllerManager, scheduler, kwok string
}

// extras returns the extra binaries that a control plane started with opts
// runs.
func extras(opts Options) []extraBinary {
	var out []extraBinary
	if opts.ControllerManager {
		out = append(out, controllerManagerBuild)
	}
	if opts.Nodes > 0 {
		out = append(out, schedulerBuild, kwokBuild)
	}
	return out
}

// binaries is Binaries returning the path of every binary.
func binaries(ctx context.Context, opts Options) (binaryPaths, error) {
	r := newReporter(opts.Progress)
	var bins binaryPaths
	var err error
	if bins.dir, err = apiServerDir(ctx, r); err != nil {
		return binaryPaths{}, err
	}
	for _, b := range extras(opts) {
		p, err := b.path(ctx, r)
		if err != nil {
			return binaryPaths{}, err
		}
		switch b.name {
		case controllerManagerBinary:
			bins.controllerManager = p
		case schedulerBinary:
			bins.scheduler = p
		case kwokBinary:
			bins.kwok = p
		}
	}
	return bins, nil
}

// apiServerDir returns a directory holding kube-apiserver and etcd: that of
// KUBEBUILDER_ASSETS, else the cache directory, built into if need be.
func apiServerDir(ctx context.Context, r *reporter) (string, error) {
	if dir, ok := os.LookupEnv(assetsEnv); ok && dir != "" {
		if err := checkBinaries(dir); err != nil {
			return "", fmt.Errorf("%s=%s: %w", assetsEnv, dir, err)
		}
		return dir, nil
	}
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	return ensureBuilt(ctx, dir, buildFunc(goBuild), r)
}

// BinariesReady reports whether Binaries(ctx, opts) would return without
// building: KUBEBUILDER_ASSETS or the cache directory holds kube-apiserver
// and etcd, and one of them each other binary that opts asks for.
func BinariesReady(opts Options) bool {
	for _, b := range extras(opts) {
		if !b.ready() {
			return false
		}
	}
	if dir, ok := os.LookupEnv(assetsEnv); ok && dir != "" {
		return checkBinaries(dir) == nil
	}
	dir, err := cacheDir()
	return err == nil && complete(dir)
}

// cacheDir returns the directory that Binaries builds into when assetsEnv is
// not set: cacheKey under $BOSUN_CONTROLPLANE_CACHE if that is set, else under
// os.UserCacheDir()/bosun/controlplane. The directory may not exist yet.
func cacheDir() (string, error) {
	root := os.Getenv(cacheEnv)
	if root == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("finding the user cache directory (set %s or %s instead): %w", cacheEnv, assetsEnv, err)
		}
		root = filepath.Join(base, "bosun", "controlplane")
	}
	return filepath.Join(root, cacheKey), nil
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
// under the names apiServerBinary and etcdBinary, reporting progress to r.
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
// moving each finished extra binary out of it into staging. Such a
// directory holds one when that binary was built before kube-apiserver and
// etcd (KUBEBUILDER_ASSETS lacked only it).
func replaceUnfinished(dir, staging string) error {
	for _, b := range []extraBinary{controllerManagerBuild, schedulerBuild, kwokBuild} {
		if !b.complete(dir) {
			continue
		}
		for _, name := range []string{b.name, b.marker()} {
			if err := os.Rename(filepath.Join(dir, name), filepath.Join(staging, name)); err != nil {
				return fmt.Errorf("keeping the %s already built: %w", b.name, err)
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
	var lockErr error
	err = wait.PollUntilContextCancel(ctx, lockPollInterval, true, func(context.Context) (bool, error) {
		ok, err := tryLock(f)
		if err != nil {
			lockErr = err
			return false, err
		}
		if ok {
			return true, nil
		}
		if now := time.Now(); start.IsZero() {
			start, next = now, now.Add(progressInterval)
			r.printf("waiting for another process that is building the control plane binaries (lock %s)\n", path)
		} else if !now.Before(next) {
			next = now.Add(progressInterval)
			r.printf("still waiting for the other build: %s elapsed\n", now.Sub(start).Round(time.Second))
		}
		return false, nil
	})
	switch {
	case lockErr != nil:
		_ = f.Close()
		return nil, false, fmt.Errorf("locking %s: %w", path, lockErr)
	case err != nil:
		_ = f.Close()
		return nil, true, fmt.Errorf("waiting for the control plane build lock %s: %w", path, err)
	}
	return func() {
		_ = unlockFile(f)
		_ = f.Close()
	}, !start.IsZero(), nil
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
