package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cronJobDocument binds a package of this repository's module, so its Go
// types resolve only in that module.
const cronJobDocument = `bind cronjob.bosun.dev/v1 github.com/bosunkit/bosun/examples/cronjob/api/v1

alias CronJob cronjob.bosun.dev/v1/CronJob

decl Runs for CronJob {
	state {
		config ConfigMap {
			name=${target.%s}-config
		}
	}
	action {
		Sync(config)
	}
}
`

// outsideModule returns a new temporary directory with no Go module or
// workspace above it, and skips the test when the machine has none.
func outsideModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "go", "env", "GOMOD", "GOWORK")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	if env := lines(string(out)); len(env) != 2 || env[0] != os.DevNull || env[1] != "" {
		t.Skipf("the temporary directory %s is inside a Go module or workspace: go env GOMOD GOWORK = %q", dir, env)
	}
	return dir
}

// TestOutsideModuleUsesWorkingDirectory checks and generates documents of a
// directory outside any module from this package's directory: the Go types
// resolve in this repository's module.
func TestOutsideModuleUsesWorkingDirectory(t *testing.T) {
	dir := outsideModule(t)
	good := writeFile(t, dir, "good.bosun", strings.Replace(cronJobDocument, "%s", "Name", 1))
	bad := writeFile(t, dir, "bad.bosun", strings.Replace(cronJobDocument, "%s", "Schedule", 1))

	if stdout, stderr, err := run(t, "check", good); err != nil || stdout != "" || stderr != "" {
		t.Fatalf("bosun check: err %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	// The types are loaded, not skipped: a reference to a field the target lacks is an error.
	_, stderr, err := run(t, "check", bad)
	if !errors.Is(err, errReported) || !strings.Contains(stderr, bad+":8:9: invalid reference ${target.Schedule}") {
		t.Fatalf("bosun check of a wrong reference: err %v\nstderr:\n%s", err, stderr)
	}

	out := filepath.Join(dir, "out")
	if _, stderr, err := run(t, "gen", "-o", out, "--package", "runs", good); err != nil {
		t.Fatalf("bosun gen: %v\n%s", err, stderr)
	}
	generated, err := os.ReadFile(filepath.Join(out, "zz_generated.good.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\npackage runs\n", "cronjobv1 \"github.com/bosunkit/bosun/examples/cronjob/api/v1\"", "func (s *RunsState) GetConfig("} {
		if !strings.Contains(string(generated), want) {
			t.Errorf("generated file lacks %q:\n%s", want, generated)
		}
	}
}

// TestOutsideAnyModule runs check and gen in a directory outside any module
// on a document there: each fails with one line saying what to do, unless
// --module names a module.
func TestOutsideAnyModule(t *testing.T) {
	dir := outsideModule(t)
	doc := writeFile(t, dir, "a.bosun", strings.Replace(cronJobDocument, "%s", "Name", 1))
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	outside := "bosun: " + doc + " is outside a Go module; run it from your module or pass --module DIR\n"
	for _, tc := range []struct {
		name       string
		args       []string
		wantStderr string
		wantStatus int
	}{
		{name: "check", args: []string{"check", "a.bosun"}, wantStderr: outside, wantStatus: 1},
		{name: "gen", args: []string{"gen", "a.bosun"}, wantStderr: outside, wantStatus: 1},
		{name: "check with --module", args: []string{"check", "--module", repo, "a.bosun"}},
		{
			name:       "check with --module outside a module",
			args:       []string{"check", "--module", ".", "a.bosun"},
			wantStderr: "bosun: --module . is outside a Go module\n",
			wantStatus: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, status := runMain(t, dir, tc.args...)
			if stdout != "" || stderr != tc.wantStderr || status != tc.wantStatus {
				t.Errorf("bosun %v: status %d, stdout %q, stderr %q; want status %d, stderr %q", tc.args, status, stdout, stderr, tc.wantStatus, tc.wantStderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "zz_generated.a.go")); !os.IsNotExist(err) {
		t.Errorf("bosun gen outside a module wrote a file (stat: %v)", err)
	}
}
