package controlplane

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeControllerManagerBuild is a builder of kube-controller-manager that
// counts its builds.
func fakeControllerManagerBuild(builds *atomic.Int32) buildFunc {
	return func(ctx context.Context, out string, r *reporter) error {
		builds.Add(1)
		return writeFakeBinaries(out, controllerManagerBinary)
	}
}

// withBuild returns kube-controller-manager's extraBinary built by build.
func withBuild(build buildFunc) extraBinary {
	b := controllerManagerBuild
	b.build = build
	return b
}

// snapshot returns the name, size and modification time of every file in dir.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = fi.ModTime().String() + " " + fi.Mode().String()
	}
	return out
}

// TestEnsureControllerManagerKeepsExistingBuild adds kube-controller-manager
// to a finished build of kube-apiserver and etcd: their files and marker are
// left exactly as they were, and a second call builds nothing.
func TestEnsureControllerManagerKeepsExistingBuild(t *testing.T) {
	dir := filepath.Join(t.TempDir(), cacheKey)
	core := func(ctx context.Context, out string, r *reporter) error {
		return writeFakeBinaries(out, binaryNames...)
	}
	if _, err := ensureBuilt(context.Background(), dir, core, newReporter(nil)); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)

	var builds atomic.Int32
	progress := newSignalWriter("ready in")
	if err := withBuild(fakeControllerManagerBuild(&builds)).ensure(context.Background(), dir, newReporter(progress)); err != nil {
		t.Fatalf("ensureControllerManager: %v", err)
	}
	if !complete(dir) || !controllerManagerBuild.complete(dir) {
		t.Fatalf("after the build: kube-apiserver and etcd complete %v, kube-controller-manager complete %v; want both",
			complete(dir), controllerManagerBuild.complete(dir))
	}
	after := snapshot(t, dir)
	for name, was := range before {
		if after[name] != was {
			t.Errorf("%s changed: was %s, now %s", name, was, after[name])
		}
	}
	var added []string
	for name := range after {
		if _, ok := before[name]; !ok {
			added = append(added, name)
		}
	}
	if diff := cmp.Diff([]string{controllerManagerBuild.marker(), controllerManagerBinary}, sorted(added)); diff != "" {
		t.Errorf("files added to the cache directory (-want +got):\n%s", diff)
	}
	marker, err := os.ReadFile(filepath.Join(dir, controllerManagerBuild.marker()))
	if err != nil {
		t.Fatal(err)
	}
	if want := controllerManagerBinary + " " + KubernetesVersion + "\n"; string(marker) != want {
		t.Errorf("marker = %q, want %q", marker, want)
	}
	if want := controllerManagerBinary + " ready in " + dir; !strings.Contains(progress.String(), want) {
		t.Errorf("progress %q does not contain %q", progress.String(), want)
	}
	leftovers, err := filepath.Glob(filepath.Join(filepath.Dir(dir), ".*staging*"))
	if err != nil || len(leftovers) != 0 {
		t.Errorf("staging directories left behind: %v, %v", leftovers, err)
	}

	if err := withBuild(fakeControllerManagerBuild(&builds)).ensure(context.Background(), dir, newReporter(nil)); err != nil {
		t.Fatal(err)
	}
	if got := builds.Load(); got != 1 {
		t.Errorf("builds = %d, want 1", got)
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestEnsureControllerManagerOneBuildsOthersWait has two callers ask at once:
// one builds while the other waits on the lock, then uses its result.
func TestEnsureControllerManagerOneBuildsOthersWait(t *testing.T) {
	dir := filepath.Join(t.TempDir(), cacheKey)
	waiter := newSignalWriter("waiting for another process")
	var builds atomic.Int32
	started := make(chan struct{})
	build := func(ctx context.Context, out string, r *reporter) error {
		builds.Add(1)
		close(started)
		select {
		case <-waiter.seen:
		case <-time.After(30 * time.Second):
			return errors.New("second caller never reported waiting")
		}
		return writeFakeBinaries(out, controllerManagerBinary)
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		errs[0] = withBuild(build).ensure(context.Background(), dir, newReporter(io.Discard))
	}()
	<-started
	go func() {
		defer wg.Done()
		errs[1] = withBuild(build).ensure(context.Background(), dir, newReporter(waiter))
	}()
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if got := builds.Load(); got != 1 {
		t.Errorf("builds = %d, want 1", got)
	}
	if want := "ready in " + dir + " (built by the other process)"; !strings.Contains(waiter.String(), want) {
		t.Errorf("waiter progress %q does not contain %q", waiter.String(), want)
	}
}

// TestEnsureControllerManagerFailedBuildIsNeverUsed checks that a build that
// fails, or that produces no binary, leaves neither binary nor marker, and
// leaves kube-apiserver and etcd in place.
func TestEnsureControllerManagerFailedBuildIsNeverUsed(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name    string
		build   buildFunc
		wantErr error
	}{
		{
			name: "build fails",
			build: func(ctx context.Context, out string, r *reporter) error {
				if err := writeFakeBinaries(out, controllerManagerBinary); err != nil {
					return err
				}
				return errBoom
			},
			wantErr: errBoom,
		},
		{
			name:    "no binary",
			build:   func(ctx context.Context, out string, r *reporter) error { return nil },
			wantErr: ErrBuild,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), cacheKey)
			core := func(ctx context.Context, out string, r *reporter) error {
				return writeFakeBinaries(out, binaryNames...)
			}
			if _, err := ensureBuilt(context.Background(), dir, core, newReporter(nil)); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			err := withBuild(tt.build).ensure(context.Background(), dir, newReporter(nil))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ensureControllerManager error = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Errorf("cache directory after a failed build (-before +after):\n%s", diff)
			}
			leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".*staging*"))
			if len(leftovers) != 0 {
				t.Errorf("staging directories left behind: %v", leftovers)
			}
			var builds atomic.Int32
			if err := withBuild(fakeControllerManagerBuild(&builds)).ensure(context.Background(), dir, newReporter(nil)); err != nil {
				t.Fatalf("ensureControllerManager after the failure: %v", err)
			}
			if builds.Load() != 1 || !controllerManagerBuild.complete(dir) {
				t.Errorf("after a failure the next call built %d times, complete %v; want 1, true", builds.Load(), controllerManagerBuild.complete(dir))
			}
		})
	}
}

// TestBuildKeepsControllerManagerBuiltFirst builds kube-controller-manager
// into a cache directory that holds nothing else yet, as when
// KUBEBUILDER_ASSETS lacks only kube-controller-manager, then kube-apiserver
// and etcd into the same directory: the first build is kept.
func TestBuildKeepsControllerManagerBuiltFirst(t *testing.T) {
	dir := filepath.Join(t.TempDir(), cacheKey)
	var builds atomic.Int32
	if err := withBuild(fakeControllerManagerBuild(&builds)).ensure(context.Background(), dir, newReporter(nil)); err != nil {
		t.Fatal(err)
	}
	if complete(dir) || !controllerManagerBuild.complete(dir) {
		t.Fatalf("complete %v, kube-controller-manager complete %v; want false, true", complete(dir), controllerManagerBuild.complete(dir))
	}
	core := func(ctx context.Context, out string, r *reporter) error {
		return writeFakeBinaries(out, binaryNames...)
	}
	if _, err := ensureBuilt(context.Background(), dir, core, newReporter(nil)); err != nil {
		t.Fatal(err)
	}
	if !complete(dir) || !controllerManagerBuild.complete(dir) {
		t.Errorf("complete %v, kube-controller-manager complete %v; want both", complete(dir), controllerManagerBuild.complete(dir))
	}
	if err := withBuild(fakeControllerManagerBuild(&builds)).ensure(context.Background(), dir, newReporter(nil)); err != nil {
		t.Fatal(err)
	}
	if got := builds.Load(); got != 1 {
		t.Errorf("kube-controller-manager builds = %d, want 1", got)
	}
}

// TestControllerManagerPath checks where the binary comes from: the
// KUBEBUILDER_ASSETS directory when it holds one, the cache otherwise, built
// there on first use.
func TestControllerManagerPath(t *testing.T) {
	tests := []struct {
		name string
		// assets are the files of the KUBEBUILDER_ASSETS directory; nil
		// leaves the variable unset.
		assets     []string
		fromAssets bool
	}{
		{name: "no assets"},
		{name: "assets with kube-controller-manager", assets: []string{apiServerBinary, etcdBinary, controllerManagerBinary}, fromAssets: true},
		{name: "assets without kube-controller-manager", assets: binaryNames},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(cacheEnv, t.TempDir())
			t.Setenv(assetsEnv, "")
			assets := t.TempDir()
			if tt.assets != nil {
				if err := writeFakeBinaries(assets, tt.assets...); err != nil {
					t.Fatal(err)
				}
				t.Setenv(assetsEnv, assets)
			}
			cache, err := cacheDir()
			if err != nil {
				t.Fatal(err)
			}
			if got := controllerManagerBuild.ready(); got != tt.fromAssets {
				t.Errorf("controllerManagerReady before = %v, want %v", got, tt.fromAssets)
			}
			var builds atomic.Int32
			got, err := withBuild(fakeControllerManagerBuild(&builds)).path(context.Background(), newReporter(nil))
			if err != nil {
				t.Fatal(err)
			}
			want, wantBuilds := filepath.Join(cache, controllerManagerBinary), int32(1)
			if tt.fromAssets {
				want, wantBuilds = filepath.Join(assets, controllerManagerBinary), 0
			}
			if got != want || builds.Load() != wantBuilds {
				t.Errorf("controllerManagerPath = %q after %d builds, want %q after %d", got, builds.Load(), want, wantBuilds)
			}
			if !controllerManagerBuild.ready() {
				t.Error("controllerManagerReady after controllerManagerPath = false")
			}
		})
	}
}

// TestGoBuildControllerManagerFailureExplainsFix runs the real build of
// kube-controller-manager with the module proxy switched off and an empty
// module cache, so that it fails at once, and checks what the error says.
func TestGoBuildControllerManagerFailureExplainsFix(t *testing.T) {
	if _, err := findGo(); err != nil {
		t.Fatalf("the go command is needed to build the control plane: %v", err)
	}
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOMODCACHE", t.TempDir())
	out := t.TempDir()
	progress := newSignalWriter("building " + controllerManagerBinary)
	err := controllerManagerBuild.build(context.Background(), out, newReporter(progress))
	if !errors.Is(err, ErrBuild) {
		t.Fatalf("goBuildControllerManager error = %v, want ErrBuild", err)
	}
	t.Logf("the error reads:\n%v", err)
	for _, want := range []string{"last lines of go's output", "GOPROXY is off", controllerManagerPackage, assetsEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
	if !strings.Contains(progress.String(), "building "+controllerManagerBinary+" "+KubernetesVersion) {
		t.Errorf("progress = %q, want the build announcement", progress.String())
	}
}

// TestExtraBinaryOfAnotherVersionIsRebuilt finds a kwok built at another
// version in the cache: it is not taken for the current one, and the next
// call builds it again and records the new version.
func TestExtraBinaryOfAnotherVersionIsRebuilt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), cacheKey)
	var builds atomic.Int32
	b := kwokBuild
	b.build = func(ctx context.Context, out string, r *reporter) error {
		builds.Add(1)
		return writeFakeBinaries(out, kwokBinary)
	}
	old := b
	old.version = "v0.0.1"
	if err := old.ensure(context.Background(), dir, newReporter(nil)); err != nil {
		t.Fatal(err)
	}
	if b.complete(dir) {
		t.Fatal("a kwok built at another version counts as complete")
	}
	if err := b.ensure(context.Background(), dir, newReporter(nil)); err != nil {
		t.Fatal(err)
	}
	marker, err := os.ReadFile(filepath.Join(dir, b.marker()))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(marker), "kwok "+KwokVersion+"\n"; got != want || builds.Load() != 2 || !b.complete(dir) {
		t.Errorf("after the rebuild: marker %q (want %q), %d builds (want 2), complete %v", got, want, builds.Load(), b.complete(dir))
	}
}
