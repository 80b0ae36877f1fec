package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// helperEnv, when set in the environment of this test binary, turns it into a
// helper process that runs one ensureBuilt with a fake builder (see TestMain).
const helperEnv = "BOSUN_CONTROLPLANE_TEST_HELPER_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(helperProcess(dir))
	}
	os.Exit(m.Run())
}

// helperProcess builds into dir/cache with a fake builder that records each
// build in dir/builds, announces itself in dir/started and waits for
// dir/release. Progress goes to stdout, the resulting directory too.
func helperProcess(dir string) int {
	build := func(ctx context.Context, out string, r *reporter) error {
		if err := appendLine(filepath.Join(dir, "builds"), strconv.Itoa(os.Getpid())); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "started"), nil, 0o644); err != nil {
			return err
		}
		for !exists(filepath.Join(dir, "release")) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
		return writeFakeBinaries(out, binaryNames...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := ensureBuilt(ctx, filepath.Join(dir, "cache", cacheKey), build, newReporter(os.Stdout))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("result", got)
	return 0
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, werr := fmt.Fprintln(f, line)
	return errors.Join(werr, f.Close())
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// writeFakeBinaries writes small executable files named names into dir.
func writeFakeBinaries(dir string, names ...string) error {
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// signalWriter is a progress writer that keeps everything written and closes
// seen the first time a line containing want is written.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func newSignalWriter(want string) *signalWriter {
	return &signalWriter{want: want, seen: make(chan struct{})}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestEnsureBuiltOneBuildsOthersWait(t *testing.T) {
	dir := filepath.Join(t.TempDir(), cacheKey)
	waiter := newSignalWriter("waiting for another process")
	var builds atomic.Int32
	started := make(chan struct{})
	build := func(ctx context.Context, out string, r *reporter) error {
		builds.Add(1)
		close(started)
		// Finish only once the second caller has said that it waits, so the
		// test sees the waiting path rather than a lucky ordering.
		select {
		case <-waiter.seen:
		case <-time.After(30 * time.Second):
			return errors.New("second caller never reported waiting")
		}
		return writeFakeBinaries(out, binaryNames...)
	}

	ctx := context.Background()
	results := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		results[0], errs[0] = ensureBuilt(ctx, dir, build, newReporter(io.Discard))
	}()
	<-started
	go func() {
		defer wg.Done()
		results[1], errs[1] = ensureBuilt(ctx, dir, build, newReporter(waiter))
	}()
	wg.Wait()

	if diff := cmp.Diff([]error{nil, nil}, errs, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })); diff != "" {
		t.Fatalf("errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{dir, dir}, results); diff != "" {
		t.Errorf("directories (-want +got):\n%s", diff)
	}
	if got := builds.Load(); got != 1 {
		t.Errorf("builds = %d, want 1", got)
	}
	if !complete(dir) {
		t.Errorf("%s is not a complete build", dir)
	}
	if want := "ready in " + dir + " (built by the other process)"; !strings.Contains(waiter.String(), want) {
		t.Errorf("waiter progress %q does not contain %q", waiter.String(), want)
	}

	// A third call finds the finished build without building or waiting.
	third := newSignalWriter("waiting")
	got, err := ensureBuilt(ctx, dir, build, newReporter(third))
	if err != nil || got != dir {
		t.Fatalf("third ensureBuilt = %q, %v; want %q, nil", got, err, dir)
	}
	if builds.Load() != 1 || third.String() != "" {
		t.Errorf("third call built or reported: builds=%d progress=%q", builds.Load(), third.String())
	}
}

func TestEnsureBuiltAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	start := func(name string, stdout io.Writer) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+dir)
		cmd.Stdout = stdout
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", name, err)
		}
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
		})
		return cmd
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	var out1 bytes.Buffer
	first := start("first helper", &out1)
	waitFor("the first helper to start building", func() bool { return exists(filepath.Join(dir, "started")) })
	out2 := newSignalWriter("waiting for another process")
	second := start("second helper", out2)
	select {
	case <-out2.seen:
	case <-time.After(30 * time.Second):
		t.Fatalf("second helper did not report waiting; it printed %q", out2.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, cmd := range map[string]*exec.Cmd{"first": first, "second": second} {
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s helper: %v: %s", name, err, cmd.Stderr)
		}
	}

	want := "result " + filepath.Join(dir, "cache", cacheKey)
	for name, out := range map[string]string{"first": out1.String(), "second": out2.String()} {
		if !strings.Contains(out, want) {
			t.Errorf("%s helper printed %q, want a line %q", name, out, want)
		}
	}
	builds, err := os.ReadFile(filepath.Join(dir, "builds"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Fields(string(builds)); len(lines) != 1 {
		t.Errorf("builds by process: %q, want exactly one", lines)
	}
}

func TestEnsureBuiltFailedBuildIsNeverUsed(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, cacheKey)
	errBoom := errors.New("boom")
	failing := func(ctx context.Context, out string, r *reporter) error {
		if err := writeFakeBinaries(out, binaryNames...); err != nil {
			return err
		}
		return errBoom
	}
	if _, err := ensureBuilt(context.Background(), dir, failing, newReporter(nil)); !errors.Is(err, errBoom) {
		t.Fatalf("ensureBuilt error = %v, want %v", err, errBoom)
	}
	if exists(dir) {
		t.Errorf("%s exists after a failed build", dir)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{cacheKey + ".lock"}, names); diff != "" {
		t.Errorf("cache root after a failed build (-want +got):\n%s", diff)
	}

	var builds int
	ok := func(ctx context.Context, out string, r *reporter) error {
		builds++
		return writeFakeBinaries(out, binaryNames...)
	}
	if got, err := ensureBuilt(context.Background(), dir, ok, newReporter(nil)); err != nil || got != dir {
		t.Fatalf("ensureBuilt after failure = %q, %v; want %q, nil", got, err, dir)
	}
	if builds != 1 {
		t.Errorf("builds = %d, want 1", builds)
	}
}

func TestEnsureBuiltReplacesUnfinishedBuilds(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, cacheKey)
	// Both binaries but no marker: what a crash between build and marker
	// would leave if the directory were ever published early.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeFakeBinaries(dir, binaryNames...); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(root, "."+cacheKey+".staging-123")
	if err := os.MkdirAll(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	var builds int
	build := func(ctx context.Context, out string, r *reporter) error {
		builds++
		return writeFakeBinaries(out, binaryNames...)
	}
	if _, err := ensureBuilt(context.Background(), dir, build, newReporter(nil)); err != nil {
		t.Fatal(err)
	}
	if builds != 1 {
		t.Errorf("builds = %d, want 1: a directory without marker must be rebuilt", builds)
	}
	if exists(stale) {
		t.Errorf("stale staging directory %s was not removed", stale)
	}
	marker, err := os.ReadFile(filepath.Join(dir, markerFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "kube-apiserver " + KubernetesVersion + "\netcd " + EtcdVersion + "\n"; string(marker) != want {
		t.Errorf("marker = %q, want %q", marker, want)
	}
}

func TestEnsureBuiltRejectsIncompleteOutput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), cacheKey)
	build := func(ctx context.Context, out string, r *reporter) error {
		return writeFakeBinaries(out, apiServerBinary)
	}
	_, err := ensureBuilt(context.Background(), dir, build, newReporter(nil))
	if !errors.Is(err, ErrBuild) || !errors.Is(err, ErrMissingBinary) || !strings.Contains(err.Error(), "etcd not found") {
		t.Fatalf("ensureBuilt error = %v, want ErrBuild naming etcd", err)
	}
	if exists(dir) {
		t.Errorf("%s exists after an incomplete build", dir)
	}
}

func TestEnsureBuiltWaitingHonoursContext(t *testing.T) {
	dir := filepath.Join(t.TempDir(), cacheKey)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, _, err := acquireLock(context.Background(), dir+".lock", newReporter(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	build := func(ctx context.Context, out string, r *reporter) error {
		return errors.New("must not build while another holds the lock")
	}
	progress := newSignalWriter("waiting for another process")
	_, err = ensureBuilt(ctx, dir, build, newReporter(progress))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ensureBuilt error = %v, want context.DeadlineExceeded", err)
	}
	if !strings.Contains(progress.String(), dir+".lock") {
		t.Errorf("progress %q does not name the lock file", progress.String())
	}
}

func TestBinariesUsesAssetsEnv(t *testing.T) {
	tests := []struct {
		name       string
		files      []string
		notExec    []string
		wantErr    string
		wantResult bool
	}{
		{name: "empty directory", wantErr: "kube-apiserver and etcd not found"},
		{name: "no etcd", files: []string{apiServerBinary}, wantErr: "etcd not found"},
		{name: "no kube-apiserver", files: []string{etcdBinary}, wantErr: "kube-apiserver not found"},
		{name: "etcd not executable", files: []string{apiServerBinary}, notExec: []string{etcdBinary}, wantErr: "etcd not found"},
		{name: "both present", files: binaryNames, wantResult: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := writeFakeBinaries(dir, tt.files...); err != nil {
				t.Fatal(err)
			}
			for _, name := range tt.notExec {
				if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv(assetsEnv, dir)
			// A cache that would fail loudly if Binaries tried to build.
			t.Setenv(cacheEnv, filepath.Join(dir, "no-build-expected"))
			got, err := Binaries(context.Background(), Options{})
			if tt.wantResult {
				if err != nil || got != dir {
					t.Fatalf("Binaries = %q, %v; want %q, nil", got, err, dir)
				}
				return
			}
			if !errors.Is(err, ErrMissingBinary) {
				t.Fatalf("Binaries error = %v, want ErrMissingBinary", err)
			}
			for _, want := range []string{tt.wantErr, assetsEnv + "=" + dir} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if exists(filepath.Join(dir, "no-build-expected")) {
				t.Error("Binaries touched the build cache although KUBEBUILDER_ASSETS is set")
			}
		})
	}
}

func TestCacheDir(t *testing.T) {
	t.Setenv(cacheEnv, "/somewhere/cache")
	got, err := cacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join("/somewhere/cache", "kube-apiserver-v1.37.0-etcd-v3.7.0"); got != want {
		t.Errorf("CacheDir with %s = %q, want %q", cacheEnv, got, want)
	}

	t.Setenv(cacheEnv, "")
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("no user cache directory on this machine: %v", err)
	}
	got, err = cacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(base, "bosun", "controlplane", cacheKey); got != want {
		t.Errorf("CacheDir = %q, want %q", got, want)
	}
}

func TestOutputLog(t *testing.T) {
	var l outputLog
	for _, chunk := range []string{"k8s.io/api/core", "/v1\ngo.etcd.io/raft/v3\n", "# k8s.io/broken\n", "broken.go:1:2: undefined: x\n", "partial"} {
		if _, err := l.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.packages(); got != 2 {
		t.Errorf("packages = %d, want 2", got)
	}
	want := "\tk8s.io/api/core/v1\n\tgo.etcd.io/raft/v3\n\t# k8s.io/broken\n\tbroken.go:1:2: undefined: x\n\tpartial"
	if diff := cmp.Diff(want, l.tail()); diff != "" {
		t.Errorf("tail (-want +got):\n%s", diff)
	}

	var long outputLog
	for i := range tailLines + 5 {
		fmt.Fprintf(&long, "line %d\n", i)
	}
	lines := strings.Split(long.tail(), "\n")
	if len(lines) != tailLines || lines[0] != "\tline 5" {
		t.Errorf("tail kept %d lines starting %q, want %d starting %q", len(lines), lines[0], tailLines, "\tline 5")
	}
	var empty outputLog
	if got := empty.tail(); got != "\t(no output)" {
		t.Errorf("empty tail = %q", got)
	}
}

func TestBuildEnv(t *testing.T) {
	in := []string{"HOME=/home/u", "GOFLAGS=-race", "GOPROXY=https://proxy.example", "CGO_ENABLED=1", "GOWORK=/w/go.work", "GOOS=plan9"}
	got := map[string]string{}
	for _, kv := range buildEnv(in) {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s set twice", k)
		}
		got[k] = v
	}
	want := map[string]string{
		"HOME":        "/home/u",
		"GOPROXY":     "https://proxy.example",
		"GOFLAGS":     "-mod=readonly",
		"CGO_ENABLED": "0",
		"GOWORK":      "off",
		"GOOS":        got["GOOS"],
		"GOARCH":      got["GOARCH"],
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("buildEnv (-want +got):\n%s", diff)
	}
	if got["GOOS"] == "plan9" || got["GOOS"] == "" {
		t.Errorf("GOOS = %q, want this machine's", got["GOOS"])
	}
}

// TestGoBuildFailureExplainsFix runs the real build with the module proxy
// switched off and an empty module cache, so that it fails at once the way it
// fails without network, and checks what the error tells the user.
func TestGoBuildFailureExplainsFix(t *testing.T) {
	if _, err := findGo(); err != nil {
		t.Fatalf("the go command is needed to build the control plane: %v", err)
	}
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOMODCACHE", t.TempDir())
	out := t.TempDir()
	progress := newSignalWriter("building kube-apiserver")
	err := goBuild(context.Background(), out, newReporter(progress))
	if !errors.Is(err, ErrBuild) {
		t.Fatalf("goBuild error = %v, want ErrBuild", err)
	}
	t.Logf("the error reads:\n%v", err)
	for _, want := range []string{"last lines of go's output", "GOPROXY", "GOPROXY is off", assetsEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
	if !strings.Contains(progress.String(), "building kube-apiserver "+KubernetesVersion+" and etcd "+EtcdVersion) {
		t.Errorf("progress = %q, want the build announcement", progress.String())
	}
	if exists(filepath.Join(out, ".module")) {
		t.Error("the build module directory was left behind")
	}
}

func TestBinariesReady(t *testing.T) {
	assets := t.TempDir()
	t.Setenv(assetsEnv, assets)
	if BinariesReady(Options{}) {
		t.Error("BinariesReady with an empty KUBEBUILDER_ASSETS directory = true")
	}
	if err := writeFakeBinaries(assets, binaryNames...); err != nil {
		t.Fatal(err)
	}
	if !BinariesReady(Options{}) {
		t.Error("BinariesReady with both binaries in KUBEBUILDER_ASSETS = false")
	}

	t.Setenv(assetsEnv, "")
	t.Setenv(cacheEnv, t.TempDir())
	if BinariesReady(Options{}) {
		t.Error("BinariesReady with an empty cache = true")
	}
	dir, err := cacheDir()
	if err != nil {
		t.Fatal(err)
	}
	build := func(ctx context.Context, out string, r *reporter) error {
		return writeFakeBinaries(out, binaryNames...)
	}
	if _, err := ensureBuilt(context.Background(), dir, build, newReporter(nil)); err != nil {
		t.Fatal(err)
	}
	if !BinariesReady(Options{}) {
		t.Error("BinariesReady after a finished build = false")
	}
}

// The binaries are kept in a directory named after their versions, under
// $BOSUN_CONTROLPLANE_CACHE or the user's cache directory.
func TestCacheDirUnderEnv(t *testing.T) {
	t.Setenv(cacheEnv, "/var/cache/ci")
	dir, err := cacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := filepath.ToSlash(dir), "/var/cache/ci/kube-apiserver-v1.37.0-etcd-v3.7.0"; got != want {
		t.Errorf("cacheDir() = %q, want %q", got, want)
	}
}
