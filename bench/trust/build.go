package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// trustManagerModule is trust-manager's module, pinned by hack/trustmanager.
const trustManagerModule = "github.com/cert-manager/trust-manager"

// pinDir is the module that pins trust-manager's version, relative to the
// repository's root, where the bench runs.
var pinDir = filepath.Join("hack", "trustmanager")

// trustManagerVersion reads the pinned version from pinDir's go.mod.
func trustManagerVersion() (string, error) {
	data, err := os.ReadFile(filepath.Join(pinDir, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("reading the pin of trust-manager (run from the repository's root): %w", err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(trustManagerModule) + `\s+(v\S+)`).FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("%s/go.mod does not require %s", pinDir, trustManagerModule)
	}
	return string(m[1]), nil
}

// buildTrustManager returns trust-manager's binary, built from its module
// at the pinned version into a cache entry named after the version, as the
// control plane's binaries are: the first run builds it (about two
// minutes), later ones find it.
func buildTrustManager(ctx context.Context, version string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "bosun", "trust-manager-"+version)
	bin, marker := filepath.Join(dir, "trust-manager"), filepath.Join(dir, ".complete")
	if _, err := os.Stat(marker); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := goBuild(ctx, pinDir, []string{"GOWORK=off", "GOFLAGS=-mod=readonly", "CGO_ENABLED=0"}, bin, trustManagerModule+"/cmd/trust-manager"); err != nil {
		return "", err
	}
	return bin, os.WriteFile(marker, []byte(trustManagerModule+" "+version+"\n"), 0o644)
}

// buildPort builds the trust example's command, a release build, into dir.
func buildPort(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "trust")
	return bin, goBuild(ctx, ".", []string{"CGO_ENABLED=0"}, bin, "./examples/trust/cmd")
}

// goBuild runs go build -trimpath -o out pkg in dir with env added.
func goBuild(ctx context.Context, dir string, env []string, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, stderr.Bytes())
	}
	return nil
}

// moduleDir returns the directory of trust-manager's module in the module
// cache.
func moduleDir(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", trustManagerModule)
	cmd.Dir = pinDir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %w", trustManagerModule, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go mod download -json %s printed no directory: %s", trustManagerModule, out)
	}
	return m.Dir, nil
}

// codeLines counts the lines of the Go files of dirs (relative to root)
// that are neither blank nor comments, leaving out tests, generated files
// and the files skip names.
func codeLines(root string, dirs []string, skip ...string) (int, error) {
	n := 0
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join(root, d, "*.go"))
		if err != nil {
			return 0, err
		}
		for _, f := range files {
			base := filepath.Base(f)
			if strings.HasSuffix(base, "_test.go") || strings.HasPrefix(base, "zz_generated") || contains(skip, base) {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				return 0, err
			}
			inComment := false
			for line := range strings.SplitSeq(string(data), "\n") {
				l := strings.TrimSpace(line)
				switch {
				case inComment:
					inComment = !strings.Contains(l, "*/")
				case strings.HasPrefix(l, "/*"):
					inComment = !strings.Contains(l, "*/")
				case l == "" || strings.HasPrefix(l, "//"):
				default:
					n++
				}
			}
		}
	}
	return n, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
