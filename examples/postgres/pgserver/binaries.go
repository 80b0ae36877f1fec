package pgserver

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// EnvBinDir names the environment variable that points Start at a directory
// holding the initdb and postgres binaries. Options.BinDir takes precedence.
const EnvBinDir = "BOSUN_POSTGRES_BIN"

// ErrNotInstalled reports that the PostgreSQL server binaries could not be
// found. The error Start returns wraps it and says how to install them.
var ErrNotInstalled = errors.New("postgresql server binaries (initdb and postgres) not found")

// debianRoot is where Debian's postgresql-<version> packages put their
// server binaries, one <version>/bin directory per installed version.
var debianRoot = "/usr/lib/postgresql"

// binaries is the set of executables a server needs.
var binaries = []string{"initdb", "postgres"}

// findBinDir picks the directory with the server binaries: explicit (from
// Options.BinDir), else the value of EnvBinDir, else the newest Debian
// version under root, else PATH. An explicit or environment directory that
// lacks a binary is an error; it is never silently replaced by another one.
func findBinDir(explicit, env, root string) (string, error) {
	switch {
	case explicit != "":
		if missing := missingBinary(explicit); missing != "" {
			return "", notInstalled(fmt.Sprintf("Options.BinDir %s has no executable %s", explicit, missing))
		}
		return explicit, nil
	case env != "":
		if missing := missingBinary(env); missing != "" {
			return "", notInstalled(fmt.Sprintf("%s=%s has no executable %s", EnvBinDir, env, missing))
		}
		return env, nil
	}
	if dir := newestVersionDir(root); dir != "" {
		return dir, nil
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		dir := filepath.Dir(p)
		if missingBinary(dir) == "" {
			return dir, nil
		}
	}
	return "", notInstalled(fmt.Sprintf("no %s/<version>/bin holds them and they are not on PATH", root))
}

func notInstalled(where string) error {
	return fmt.Errorf("%w: %s; install them with `apt-get install -y postgresql` (Debian, Ubuntu) "+
		"or set %s to a directory that holds initdb and postgres", ErrNotInstalled, where, EnvBinDir)
}

// missingBinary returns the first server binary that dir lacks or cannot
// execute, or "" when all are there.
func missingBinary(dir string) string {
	for _, name := range binaries {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return name
		}
	}
	return ""
}

// newestVersionDir returns root/<version>/bin for the highest version whose
// bin directory has all server binaries, or "" when there is none.
func newestVersionDir(root string) string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return ""
	}
	type candidate struct {
		version []int
		dir     string
	}
	var found []candidate
	for _, e := range entries {
		v, ok := parseVersion(e.Name())
		if !ok {
			continue
		}
		dir := filepath.Join(root, e.Name(), "bin")
		if missingBinary(dir) == "" {
			found = append(found, candidate{version: v, dir: dir})
		}
	}
	if len(found) == 0 {
		return ""
	}
	sort.Slice(found, func(i, j int) bool { return lessVersion(found[j].version, found[i].version) })
	return found[0].dir
}

// parseVersion reads a directory name such as "15" or "9.6".
func parseVersion(s string) ([]int, bool) {
	parts := strings.Split(s, ".")
	v := make([]int, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, false
		}
		v = append(v, n)
	}
	return v, true
}

func lessVersion(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}
