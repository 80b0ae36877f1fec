package scaffold

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ControllerGen is the controller-gen that the Makefile of a project and
// Generate run, with go run, at a pinned version.
const ControllerGen = "sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0"

// GenerateCommands are the commands Generate runs in a project, in order:
// what `go mod tidy && make generate manifests` runs, and a last tidy for
// the imports of generated code.
func GenerateCommands() [][]string {
	return [][]string{
		{"go", "mod", "tidy"},
		// make generate: the deep copies, then the code of .bosun
		// documents, which reads the types.
		{"go", "run", ControllerGen, "object", "paths=./..."},
		{"go", "generate", "./..."},
		// make manifests: the CRDs, the role and the webhook
		// configurations (none until bosun create webhook), from the
		// markers.
		{"go", "run", ControllerGen, "crd", "rbac:roleName=manager-role", "webhook", "paths=./...",
			"output:crd:artifacts:config=config/crd", "output:rbac:artifacts:config=config/rbac",
			"output:webhook:artifacts:config=config/webhook"},
		{"go", "mod", "tidy"},
	}
}

// Generate brings the generated files of the project in dir up to date, by
// running GenerateCommands there; their output goes to out. The first run
// on a machine downloads and builds controller-gen. go generate finds the
// bosun of the documents' go:generate lines on PATH, with the directory of
// the running program first: the bosun that wrote the files generates
// their code, where make generate runs bin/bosun.
func Generate(ctx context.Context, dir string, out io.Writer) error {
	path := os.Getenv("PATH")
	if exe, err := os.Executable(); err == nil {
		path = filepath.Dir(exe) + string(os.PathListSeparator) + path
	}
	for _, args := range GenerateCommands() {
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = out, out
		if args[1] == "generate" {
			cmd.Env = append(os.Environ(), "PATH="+path)
		}
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s in %s: %w", strings.Join(args, " "), dir, err)
		}
	}
	return nil
}
