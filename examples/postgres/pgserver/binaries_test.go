package pgserver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeBinaries creates dir with executables named names.
func writeBinaries(t *testing.T, dir string, names ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFindBinDir(t *testing.T) {
	root := t.TempDir()
	v96 := writeBinaries(t, filepath.Join(root, "9.6", "bin"), "initdb", "postgres")
	v10 := writeBinaries(t, filepath.Join(root, "10", "bin"), "initdb", "postgres")
	v15 := writeBinaries(t, filepath.Join(root, "15", "bin"), "initdb", "postgres")
	writeBinaries(t, filepath.Join(root, "16", "bin"), "initdb") // client and initdb only
	writeBinaries(t, filepath.Join(root, "99-dev", "bin"), "initdb", "postgres")
	notExec := writeBinaries(t, filepath.Join(root, "17", "bin"), "initdb")
	if err := os.WriteFile(filepath.Join(notExec, "postgres"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	other := writeBinaries(t, filepath.Join(t.TempDir(), "custom"), "initdb", "postgres")
	onlyOld := t.TempDir()
	writeBinaries(t, filepath.Join(onlyOld, "9.6", "bin"), "initdb", "postgres")
	writeBinaries(t, filepath.Join(onlyOld, "9.10", "bin"), "initdb", "postgres")

	tests := []struct {
		name, explicit, env, root string
		want                      string
		wantErr                   string
	}{
		{name: "newest complete version", root: root, want: v15},
		{name: "versions compare numerically", root: onlyOld, want: filepath.Join(onlyOld, "9.10", "bin")},
		{name: "environment first", env: v10, root: root, want: v10},
		{name: "option before environment", explicit: v96, env: v10, root: root, want: v96},
		{name: "option without postgres", explicit: notExec, root: root, wantErr: "Options.BinDir " + notExec + " has no executable postgres"},
		{name: "environment missing", env: filepath.Join(root, "nope"), root: root, wantErr: EnvBinDir + "=" + filepath.Join(root, "nope") + " has no executable initdb"},
		{name: "custom directory", explicit: other, root: root, want: other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findBinDir(tt.explicit, tt.env, tt.root)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("findBinDir() error = %v, want ErrNotInstalled mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("findBinDir() error = %v", err)
			}
			if got != tt.want {
				t.Errorf("findBinDir() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestFindBinDirNothingInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	root := filepath.Join(t.TempDir(), "postgresql")
	_, err := findBinDir("", "", root)
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("findBinDir() error = %v, want ErrNotInstalled", err)
	}
	want := "postgresql server binaries (initdb and postgres) not found: no " + root +
		"/<version>/bin holds them and they are not on PATH; install them with `apt-get install -y postgresql` (Debian, Ubuntu) " +
		"or set BOSUN_POSTGRES_BIN to a directory that holds initdb and postgres"
	if err.Error() != want {
		t.Errorf("findBinDir() error =\n%s\nwant\n%s", err, want)
	}

	onPath := writeBinaries(t, filepath.Join(t.TempDir(), "bin"), "initdb", "postgres")
	t.Setenv("PATH", onPath)
	got, err := findBinDir("", "", root)
	if err != nil || got != onPath {
		t.Errorf("findBinDir() with binaries on PATH = %q, %v, want %q", got, err, onPath)
	}
}
