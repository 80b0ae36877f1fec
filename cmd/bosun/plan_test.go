package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlan runs `bosun plan` in a module whose main package prints its
// arguments: it is go run of ./cmd with --plan and the flags after --, and
// it exits 1 when the operator does.
func TestPlan(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/op\n\ngo 1.26\n",
		"cmd/main.go": `package main

import (
	"fmt"
	"os"
	"strings"
)

func main() {
	fmt.Println("args:", strings.Join(os.Args[1:], " "))
	if os.Getenv("PLAN_FAIL") != "" {
		os.Exit(1)
	}
}
`,
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, status := runMain(t, dir, "plan", "--", "--kubeconfig", "k")
	if status != 0 || !strings.Contains(out, "args: --plan --kubeconfig k\n") {
		t.Errorf("bosun plan: exit %d, printed %q (stderr %q); want 0 and the operator run with --plan --kubeconfig k", status, out, errOut)
	}
	edit := filepath.Join(dir, "edited.yaml")
	if err := os.WriteFile(edit, []byte("kind: Widget\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, status = runMain(t, dir, "plan", "-f", "edited.yaml", "--", "--kubeconfig", "k")
	if want := "args: --plan --plan-edit=" + edit + " --kubeconfig k\n"; status != 0 || !strings.Contains(out, want) {
		t.Errorf("bosun plan -f: exit %d, printed %q (stderr %q); want 0 and %q", status, out, errOut, want)
	}

	// Installed as kubectl-bosun, it is kubectl's plugin "bosun".
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(t.TempDir(), "kubectl-bosun")
	if err := os.Symlink(exe, plugin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), plugin, "plan", "--help")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	help, err := cmd.Output()
	if err != nil || !strings.Contains(string(help), "kubectl bosun plan [-f FILE]") {
		t.Errorf("kubectl-bosun plan --help: %v, printed %q; want the usage of kubectl bosun plan", err, help)
	}

	t.Setenv("PLAN_FAIL", "1")
	if _, errOut, status := runMain(t, dir, "plan"); status != 1 || strings.Contains(errOut, "bosun:") {
		t.Errorf("bosun plan of a failing operator: exit %d, stderr %q; want 1 and only the operator's words", status, errOut)
	}
}
