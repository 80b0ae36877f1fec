package controlplane

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// tailLines is how many lines of go's output a build error quotes.
const tailLines = 30

// versionLDFlags stamps the kube-apiserver with its release version, as the
// Kubernetes release build does, so that clients asking the server for its
// version see KubernetesVersion. Symbol tables are dropped to make linking
// faster and the binaries smaller.
var versionLDFlags = func() string {
	parts := strings.Split(strings.TrimPrefix(KubernetesVersion, "v"), ".")
	major, minor := parts[0], parts[1]
	flags := []string{"-s", "-w"}
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		flags = append(flags,
			"-X", pkg+".gitVersion="+KubernetesVersion,
			"-X", pkg+".gitMajor="+major,
			"-X", pkg+".gitMinor="+minor,
			"-X", pkg+".gitTreeState=clean",
		)
	}
	return strings.Join(flags, " ")
}()

// goBuild is the buildFunc Binaries uses: it builds kube-apiserver and etcd
// into out.
func goBuild(ctx context.Context, out string, r *reporter) error {
	r.printf("building kube-apiserver %s and etcd %s from Go modules (first use; about 5 to 10 minutes on 2 cores)\n",
		KubernetesVersion, EtcdVersion)
	start := time.Now()
	n, err := runGoBuild(ctx, out, r, apiServerModule, buildFixHint, apiServerPackage, etcdPackage)
	if err != nil {
		return err
	}
	if err := nameEtcd(out); err != nil {
		return err
	}
	r.printf("built kube-apiserver and etcd in %s (%d packages compiled)\n", time.Since(start).Round(time.Second), n)
	return nil
}

// goModule is a Go module, by the text of its go.mod and go.sum, in which
// binaries are built.
type goModule struct {
	// dir names the module's directory in bosun's repository, for messages.
	dir          string
	goMod, goSum string
	// ldflags are the linker flags of its builds.
	ldflags string
}

// The modules Binaries builds in: hack/controlplane pins Kubernetes and etcd,
// hack/kwok pins kwok, which needs other versions of the Kubernetes
// libraries than the control plane's.
var (
	apiServerModule = goModule{dir: "hack/controlplane", goMod: buildGoMod, goSum: buildGoSum, ldflags: versionLDFlags}
	kwokModule      = goModule{dir: "hack/kwok", goMod: kwokGoMod, goSum: kwokGoSum,
		ldflags: "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=" + strings.TrimPrefix(KwokVersion, "v")}
)

// buildTimes says how long the first build of each extra binary usually
// takes, for the line that announces it.
var buildTimes = map[string]string{
	controllerManagerBinary: "about 3 minutes on 2 cores after kube-apiserver, 10 without",
	schedulerBinary:         "under a minute on 2 cores after kube-controller-manager, 10 without",
	kwokBinary:              "about 3 minutes on 2 cores",
}

// goBuildExtra returns the buildFunc of an extraBinary: it builds the main
// package pkg of mod into out, where the binary is named name.
func goBuildExtra(name, version, pkg string, mod goModule) buildFunc {
	return func(ctx context.Context, out string, r *reporter) error {
		r.printf("building %s %s from Go modules (first use; %s)\n", name, version, buildTimes[name])
		start := time.Now()
		hint := func(env []string) string { return extraFixHint(env, name, pkg, mod) }
		n, err := runGoBuild(ctx, out, r, mod, hint, pkg)
		if err != nil {
			return err
		}
		r.printf("built %s in %s (%d packages compiled)\n", name, time.Since(start).Round(time.Second), n)
		return nil
	}
}

// runGoBuild writes the go.mod and go.sum of mod into a module directory
// inside out and runs `go build` there for the main packages pkgs,
// writing their binaries into out. It reports progress to r while go runs,
// and returns how many packages go compiled. A failure quotes go's last
// lines and hint(the build's environment).
func runGoBuild(ctx context.Context, out string, r *reporter, module goModule, hint func(env []string) string, pkgs ...string) (int, error) {
	goTool, err := findGo()
	if err != nil {
		return 0, err
	}
	mod := filepath.Join(out, ".module")
	if err := os.Mkdir(mod, 0o755); err != nil {
		return 0, fmt.Errorf("creating build module: %w", err)
	}
	defer os.RemoveAll(mod) // scratch space inside the staging directory
	for name, text := range map[string]string{"go.mod": module.goMod, "go.sum": module.goSum} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
			return 0, fmt.Errorf("writing build module: %w", err)
		}
	}

	out = filepath.Clean(out)
	args := append([]string{"build", "-v", "-ldflags", module.ldflags, "-o", out + string(filepath.Separator)}, pkgs...)
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Dir = mod
	cmd.Env = buildEnv(os.Environ())
	log := &outputLog{}
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.WaitDelay = 10 * time.Second

	start := time.Now()
	tickCtx, stop := context.WithCancel(ctx)
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		_ = wait.PollUntilContextCancel(tickCtx, progressInterval, false, func(context.Context) (bool, error) {
			r.printf("still building: %s elapsed, %d packages compiled\n",
				time.Since(start).Round(time.Second), log.packages())
			return false, nil
		})
	}()
	err = cmd.Run()
	stop()
	<-ticked
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("%w: interrupted: %w", ErrBuild, ctx.Err())
		}
		return 0, fmt.Errorf("%w: %s %s: %w\n\nlast lines of go's output:\n%s\n\n%s",
			ErrBuild, goTool, strings.Join(cmd.Args[1:3], " "), err, log.tail(), hint(cmd.Env))
	}
	return log.packages(), nil
}

// nameEtcd renames the etcd binary to etcdBinary. `go build -o DIR/` names a
// binary after the last element of its package path, skipping a major version
// suffix in module mode, so etcd's server/v3 comes out as "server" (or "v3").
func nameEtcd(out string) error {
	for _, name := range []string{"server", "v3"} {
		p := filepath.Join(out, name)
		if _, err := os.Stat(p); err == nil {
			if err := os.Rename(p, filepath.Join(out, etcdBinary)); err != nil {
				return fmt.Errorf("naming the etcd binary: %w", err)
			}
			return nil
		}
	}
	return fmt.Errorf("%w: go build wrote no etcd binary into %s", ErrBuild, out)
}

// buildFixHint tells the user what usually makes the build fail and how to
// get past it.
func buildFixHint(env []string) string {
	proxy := goProxy(env)
	return fmt.Sprintf("how to fix: the first build downloads the Kubernetes and etcd modules, so it needs the Go module proxy "+
		"(GOPROXY is %s) or a module cache (GOMODCACHE) that already holds them; check the network and the Go proxy settings and try again. "+
		"Or point %s at a directory that holds kube-apiserver and etcd binaries (for example built with "+
		"`CGO_ENABLED=0 go build -o DIR/ %s %s` in bosun's hack/controlplane, renaming the etcd one to etcd).",
		proxy, assetsEnv, apiServerPackage, etcdPackage)
}

// extraFixHint is buildFixHint for the extra binary name, built from the
// main package pkg of mod.
func extraFixHint(env []string, name, pkg string, mod goModule) string {
	return fmt.Sprintf("how to fix: the first build downloads its modules, so it needs the Go module proxy "+
		"(GOPROXY is %s) or a module cache (GOMODCACHE) that already holds them; check the network and the Go proxy settings and try again. "+
		"Or put a %s binary into the directory %s names (for example built with `CGO_ENABLED=0 go build -o DIR/ %s` in bosun's %s).",
		goProxy(env), name, assetsEnv, pkg, mod.dir)
}

// goProxy returns the GOPROXY setting of env, for messages.
func goProxy(env []string) string {
	proxy := "the default"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOPROXY="); ok && v != "" {
			proxy = v
		}
	}
	return proxy
}

// buildEnv returns env with the settings the build needs: module mode outside
// any workspace, go.mod left as it is, a static binary for this machine.
// Everything else, such as GOPROXY, GOCACHE and GOMODCACHE, is inherited.
func buildEnv(env []string) []string {
	set := map[string]string{
		"GOWORK":      "off",
		"GOFLAGS":     "-mod=readonly",
		"CGO_ENABLED": "0",
		"GOOS":        runtime.GOOS,
		"GOARCH":      runtime.GOARCH,
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range []string{"GOWORK", "GOFLAGS", "CGO_ENABLED", "GOOS", "GOARCH"} {
		out = append(out, k+"="+set[k])
	}
	return out
}

// findGo returns the go command: the one on PATH, else the one of the
// toolchain this program was built with.
func findGo() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	if root := runtime.GOROOT(); root != "" { //nolint:staticcheck // only a fallback when go is not on PATH
		p := filepath.Join(root, "bin", "go")
		if runtime.GOOS == "windows" {
			p += ".exe"
		}
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: the go command is not on PATH; install Go or set %s to a directory holding kube-apiserver and etcd", ErrBuild, assetsEnv)
}

// outputLog collects the output of a child process and keeps its last lines
// for error messages. For `go build -v` it also counts the package paths that
// go prints as it compiles them.
type outputLog struct {
	// max is how many lines to keep; zero means tailLines.
	max int

	mu      sync.Mutex
	partial []byte
	last    []string
	count   int
}

// Write implements io.Writer.
func (l *outputLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.line(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	return len(p), nil
}

// line records one complete line.
func (l *outputLog) line(s string) {
	if isPackageLine(s) {
		l.count++
	}
	l.last = append(l.last, s)
	if n := cmp.Or(l.max, tailLines); len(l.last) > n {
		l.last = l.last[len(l.last)-n:]
	}
}

// isPackageLine reports whether s is a package path as printed by go build -v,
// rather than a diagnostic.
func isPackageLine(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t:") && !strings.HasPrefix(s, "#")
}

// packages returns how many packages have been compiled so far.
func (l *outputLog) packages() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count
}

// tail returns the last lines of output, indented.
func (l *outputLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := l.last
	if len(l.partial) > 0 {
		lines = append(lines[:len(lines):len(lines)], string(l.partial))
	}
	if len(lines) == 0 {
		return "\t(no output)"
	}
	return "\t" + strings.Join(lines, "\n\t")
}
