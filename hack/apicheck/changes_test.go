package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDescribeSeesWhatUsersSee checks incompatible changes (user code that
// compiled against before fails against after) that show only through
// what an unexported type gives an exported one: its record lines differ.
func TestDescribeSeesWhatUsersSee(t *testing.T) {
	for _, tc := range []struct{ name, before, after, breaks string }{
		{
			name:   "a method promoted from an unexported embedded type removed",
			before: "package lib\n\ntype Box struct{ *inner }\n\ntype inner struct{ N int }\n\nfunc (*inner) Do() {}\n",
			after:  "package lib\n\ntype Box struct{ *inner }\n\ntype inner struct{}\n",
			breaks: "var b lib.Box; b.Do(); _ = b.N",
		},
		{
			name:   "a constraint's embedded constraint tightened",
			before: "package lib\n\nimport \"cmp\"\n\ntype Key interface{ cmp.Ordered }\n",
			after:  "package lib\n\ntype Key interface{ comparable }\n",
			breaks: "func less[T lib.Key](a, b T) bool { return a < b }",
		},
		{
			name:   "an unexported constraint's terms narrowed",
			before: "package lib\n\ntype num interface{ ~int | ~float64 }\n\ntype Number interface{ num }\n\nfunc Sum[T Number](xs ...T) T { var s T; return s }\n",
			after:  "package lib\n\ntype num interface{ ~int }\n\ntype Number interface{ num }\n\nfunc Sum[T Number](xs ...T) T { var s T; return s }\n",
			breaks: "lib.Sum(1.5, 2.5)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := describePackage(checkSource(t, tc.before), "example.com/m")
			after := describePackage(checkSource(t, tc.after), "example.com/m")
			if cmp.Equal(before, after) {
				t.Errorf("the record is the same before and after, though `%s` no longer compiles:\n%s", tc.breaks, strings.Join(before, "\n"))
			}
		})
	}
}

// TestChangelogMustNameTheChange checks that make api refuses an
// incompatible change the changelog does not name: not when it mentions
// another name that holds it, names it in an older release's section, or
// names the same member of a type of the same name in another package.
func TestChangelogMustNameTheChange(t *testing.T) {
	for _, tc := range []struct {
		name, changelog string
		before, after   map[string]string
	}{
		{
			name:      "a longer name",
			changelog: "# Changelog\n\n## Unreleased\n\n- `lib.OldStyle` is removed.\n",
			before:    map[string]string{"lib/lib.go": "package lib\n\nfunc Old() {}\n\nfunc OldStyle() {}\n"},
			after:     map[string]string{"lib/lib.go": "package lib\n\nfunc Old(x int) {}\n"},
		},
		{
			name:      "an old entry",
			changelog: "# Changelog\n\n## Unreleased\n\n## v0.1.0\n\n- New: `lib.Run`.\n",
			before:    map[string]string{"lib/lib.go": "package lib\n\nfunc Run() {}\n"},
			after:     map[string]string{"lib/lib.go": "package lib\n\nfunc Run(n int) {}\n"},
		},
		{
			name:      "the same member of another package's type",
			changelog: "# Changelog\n\n## Unreleased\n\n- `a.Options.Timeout` is a time.Duration.\n",
			before: map[string]string{
				"a/a.go": "package a\n\ntype Options struct{ Timeout int }\n",
				"b/b.go": "package b\n\ntype Options struct{ Timeout int }\n",
			},
			after: map[string]string{
				"a/a.go": "package a\n\nimport \"time\"\n\ntype Options struct{ Timeout time.Duration }\n",
				"b/b.go": "package b\n\ntype Options struct{ Timeout string }\n",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(files map[string]string) { writeFiles(t, dir, files) }
			write(map[string]string{"go.mod": "module example.com/m\n\ngo 1.26\n", "CHANGELOG.md": tc.changelog})
			write(tc.before)
			var out bytes.Buffer
			if err := run([]string{"-root", dir, "-write"}, &out); err != nil {
				t.Fatalf("first record: %v\n%s", err, out.String())
			}
			write(tc.after)
			out.Reset()
			if err := run([]string{"-root", dir}, &out); err == nil || !strings.Contains(out.String(), "incompatible") {
				t.Fatalf("the check does not see the incompatible change: %v\n%s", err, out.String())
			}
			removed := out.String()
			out.Reset()
			if err := run([]string{"-root", dir, "-write"}, &out); err == nil {
				t.Errorf("make api recorded an incompatible change that %q does not name:\n%s", tc.changelog, removed)
			}
		})
	}
}

func TestMentions(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"- `lib.Old` is `lib.New`.", true},
		{"lib.Old is gone.", true},
		{"Use bosuntest/faults.Shard instead of lib.Old.", true},
		{"- `lib.OldStyle` is removed.", false},
		{"- `mylib.Old` is removed.", false},
		{"- `lib.Old.Field` changed.", false},
		{"", false},
	} {
		if got := mentions(tc.text, "lib.Old"); got != tc.want {
			t.Errorf("mentions(%q, lib.Old) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestChangelogNamesAMovedPackage: a package that leaves the module is
// named by its import path as code, which covers its own lines and no
// other package's.
func TestChangelogNamesAMovedPackage(t *testing.T) {
	for _, tc := range []struct {
		name, changelog string
		wantRecorded    bool
	}{
		{"named", "# Changelog\n\n## Unreleased\n\n- `example.com/m/lib/sub` moved to its own module.\n", true},
		{"its parent named", "# Changelog\n\n## Unreleased\n\n- `example.com/m/lib` moved.\n", false},
		{"named without quotes", "# Changelog\n\n## Unreleased\n\n- example.com/m/lib/sub moved.\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"go.mod":         "module example.com/m\n\ngo 1.26\n",
				"CHANGELOG.md":   tc.changelog,
				"lib/lib.go":     "package lib\n\nfunc Run() {}\n",
				"lib/sub/sub.go": "package sub\n\nfunc Parse() {}\n\ntype Node struct{ Name string }\n",
			})
			var out bytes.Buffer
			if err := run([]string{"-root", dir, "-write"}, &out); err != nil {
				t.Fatalf("first record: %v\n%s", err, out.String())
			}
			if err := os.RemoveAll(filepath.Join(dir, "lib", "sub")); err != nil {
				t.Fatal(err)
			}
			out.Reset()
			err := run([]string{"-root", dir, "-write"}, &out)
			if recorded := err == nil; recorded != tc.wantRecorded {
				t.Errorf("make api recorded the move: %v, want %v (%v)\n%s", recorded, tc.wantRecorded, err, out.String())
			}
		})
	}
}

// TestChangelogNamesAPackageThatStays: the rule is for "a package that
// leaves the module", but it only looks for the package's import path in
// backquotes: a package that stays, named in the changelog for any other
// reason, may lose any declaration without the changelog naming it.
func TestChangelogNamesAPackageThatStays(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":         "module example.com/m\n\ngo 1.26\n",
		"CHANGELOG.md":   "# Changelog\n\n## Unreleased\n\n- `example.com/m/lib/sub` gains `sub.Node.Kind`.\n",
		"lib/lib.go":     "package lib\n\nfunc Run() {}\n",
		"lib/sub/sub.go": "package sub\n\nfunc Parse() {}\n\ntype Node struct{ Name string }\n",
	})
	var out bytes.Buffer
	if err := run([]string{"-root", dir, "-write"}, &out); err != nil {
		t.Fatalf("first record: %v\n%s", err, out.String())
	}
	// sub stays; Parse is removed, and the changelog does not say so.
	if err := os.WriteFile(filepath.Join(dir, "lib", "sub", "sub.go"),
		[]byte("package sub\n\ntype Node struct{ Name, Kind string }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run([]string{"-root", dir, "-write"}, &out); err == nil {
		t.Errorf("make api recorded the removal of sub.Parse, which the changelog does not name (it names the package, which stays, for an addition)")
	}
}

// TestChangelogNamesTheModule: the root package's import path is the
// module's path, which this release's CHANGELOG already quotes as code
// ("The library, `github.com/bosunkit/bosun`, ..."): from now until the
// release, any declaration of package bosun may be removed without the
// changelog naming it.
func TestChangelogNamesTheModule(t *testing.T) {
	notes, err := os.ReadFile(filepath.Join("..", "..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	removed := []string{"pkg bosun, func NeverNamedAnywhere()", "pkg bosun, type NorThisOne struct"}
	if missing := unnamed(removed, nil, string(notes), "github.com/bosunkit/bosun"); len(missing) != len(removed) {
		t.Errorf("with this repository's CHANGELOG, removing %v from the root package is accepted unnamed (missing = %v)", removed, missing)
	}
}
