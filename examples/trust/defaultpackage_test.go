package trust

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestReadDefaultPackage(t *testing.T) {
	ca := newTestCert(t, "root", false, time.Time{}).pem
	tests := []struct {
		name string
		file string
		// err is a part of the error; empty, the package reads.
		err string
	}{
		{name: "valid", file: pkgJSON(t, "cert-manager-debian", "20250101", ca)},
		{name: "no name", file: pkgJSON(t, "", "1", ca), err: "has no name"},
		{name: "no version", file: pkgJSON(t, "p", "", ca), err: "has no version"},
		{name: "no certificate", file: pkgJSON(t, "p", "1", "nothing here"), err: "holds no certificate"},
		{name: "a bad block", file: pkgJSON(t, "p", "1", ca+"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), err: "PEM block 2"},
		{name: "not JSON", file: "{", err: "decoding the default CA package"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "package.json")
			if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			p, err := ReadDefaultPackage(path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("ReadDefaultPackage: %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if id := p.versionID(); !regexp.MustCompile(`^cert-manager-debian-20250101-[0-9a-f]{16}$`).MatchString(id) {
				t.Errorf("versionID %q, want name-version-<16 hex digits>", id)
			}
		})
	}
	if _, err := ReadDefaultPackage(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing file reads")
	}
}

// TestDefaultPackageVersionIDFollowsTheBundle: the same name and version
// with another bundle report another version.
func TestDefaultPackageVersionIDFollowsTheBundle(t *testing.T) {
	a := &DefaultPackage{Name: "p", Version: "1", Bundle: "a"}
	b := &DefaultPackage{Name: "p", Version: "1", Bundle: "b"}
	if a.versionID() == b.versionID() {
		t.Errorf("two bundles under one version have one versionID %q", a.versionID())
	}
}

// pkgJSON is a default CA package file.
func pkgJSON(t *testing.T, name, version, bundle string) string {
	t.Helper()
	data, err := json.Marshal(DefaultPackage{Name: name, Version: version, Bundle: bundle})
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
