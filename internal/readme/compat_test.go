package readme

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"

	"github.com/bosunkit/bosun/controlplane"
)

// TestCompatibilityTable checks the README's compatibility row for main
// against go.mod and the control plane the tests build, so that the table
// cannot fall behind a dependency upgrade.
func TestCompatibilityTable(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var row []string
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "| main |") {
			for _, cell := range strings.Split(strings.Trim(line, "|"), "|") {
				row = append(row, strings.TrimSpace(cell))
			}
			break
		}
	}
	if row == nil {
		t.Fatal(`README.md has no compatibility row starting "| main |"`)
	}

	data, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	required := map[string]string{}
	for _, r := range mod.Require {
		required[r.Mod.Path] = r.Mod.Version
	}
	goMinor := strings.Join(strings.SplitN(mod.Go.Version, ".", 3)[:2], ".")
	want := []string{
		"main",
		goMinor,
		semver.MajorMinor(required["sigs.k8s.io/controller-runtime"]),
		semver.MajorMinor(required["k8s.io/client-go"]),
		"kube-apiserver " + semver.MajorMinor(controlplane.KubernetesVersion) + ", etcd " + semver.MajorMinor(controlplane.EtcdVersion),
	}
	if diff := cmp.Diff(want, row); diff != "" {
		t.Errorf("README.md compatibility row (-from go.mod and controlplane +README):\n%s", diff)
	}
}
