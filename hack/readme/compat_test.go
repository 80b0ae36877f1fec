package readme

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
	// go.mod's go directive, and the version of each module it requires
	// ("path version" lines, inside or outside a require block).
	var goVersion string
	required := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		switch {
		case len(f) == 2 && f[0] == "go":
			goVersion = f[1]
		case len(f) >= 2 && strings.HasPrefix(f[1], "v"):
			required[f[0]] = f[1]
		}
	}
	goMinor := majorMinor(goVersion)
	want := []string{
		"main",
		goMinor,
		majorMinor(required["sigs.k8s.io/controller-runtime"]),
		majorMinor(required["k8s.io/client-go"]),
		"kube-apiserver " + majorMinor(controlplane.KubernetesVersion) + ", etcd " + majorMinor(controlplane.EtcdVersion),
	}
	if diff := cmp.Diff(want, row); diff != "" {
		t.Errorf("README.md compatibility row (-from go.mod and controlplane +README):\n%s", diff)
	}
}

// majorMinor is a version's first two numbers: v0.25 of v0.25.2, 1.26 of
// 1.26.0.
func majorMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}
