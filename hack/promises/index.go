package main

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var (
	// testFunc is the declaration of a test, fuzz target, benchmark or
	// example.
	testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark|Example)\w*)\(`)
	// packageClause is a Go file's package clause.
	packageClause = regexp.MustCompile(`(?m)^package (\w+)`)
)

// index holds the Go packages of a repository and the tests each declares.
type index struct {
	// files maps each _test.go file (slash path from the root) to the
	// tests it declares.
	files map[string]map[string]bool
	// dirs maps each directory holding Go files ("." for the root) to the
	// tests its _test.go files declare.
	dirs map[string]map[string]bool
	// names maps a package name, and the last element of a directory, to
	// the directories that go by it.
	names map[string][]string
	// all holds every test of the repository.
	all map[string]bool
}

// skipDir reports whether the walk leaves out a directory: hidden ones,
// testdata, vendor and build outputs.
func skipDir(name string) bool {
	switch name {
	case "testdata", "vendor", "node_modules", "bin":
		return true
	}
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// buildIndex reads the Go files under root.
func buildIndex(root string) (*index, error) {
	ix := &index{files: map[string]map[string]bool{}, dirs: map[string]map[string]bool{}, names: map[string][]string{}, all: map[string]bool{}}
	pkgNames := map[string]map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dir := path.Dir(rel)
		if ix.dirs[dir] == nil {
			ix.dirs[dir] = map[string]bool{}
			pkgNames[dir] = map[string]bool{}
		}
		if m := packageClause.FindSubmatch(src); m != nil {
			pkgNames[dir][strings.TrimSuffix(string(m[1]), "_test")] = true
		}
		if !strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		names := map[string]bool{}
		for _, m := range testFunc.FindAllSubmatch(src, -1) {
			names[string(m[1])] = true
			ix.dirs[dir][string(m[1])] = true
			ix.all[string(m[1])] = true
		}
		ix.files[rel] = names
		return nil
	})
	if err != nil {
		return nil, err
	}
	for dir, pkgs := range pkgNames {
		for name := range pkgs {
			ix.addName(name, dir)
		}
		if dir != "." {
			ix.addName(path.Base(dir), dir)
		}
	}
	for _, dirs := range ix.names {
		sort.Strings(dirs)
	}
	return ix, nil
}

func (ix *index) addName(name, dir string) {
	for _, d := range ix.names[name] {
		if d == dir {
			return
		}
	}
	ix.names[name] = append(ix.names[name], dir)
}

// packageDirs returns the directories a citation's package stands for:
// the directory of that path from the root; else, when it is the root
// package's name, the root; else every directory whose package or last
// element has that name.
func (ix *index) packageDirs(pkg string) []string {
	if _, ok := ix.dirs[pkg]; ok {
		return []string{pkg}
	}
	for _, d := range ix.names[pkg] {
		if d == "." {
			return []string{"."}
		}
	}
	return ix.names[pkg]
}

// pathEntries returns the directories, or the _test.go files when p names a
// Go file, that a path in parentheses stands for: p from the root, else
// every one whose path ends with p.
func (ix *index) pathEntries(p string) (entries []string, files bool) {
	set := ix.dirs
	files = strings.HasSuffix(p, ".go")
	if files {
		set = ix.files
	}
	if _, ok := set[p]; ok {
		return []string{p}, files
	}
	for e := range set {
		if strings.HasSuffix(e, "/"+p) {
			entries = append(entries, e)
		}
	}
	sort.Strings(entries)
	return entries, files
}

// declares reports whether a test named name is declared in one of
// entries, directories or files.
func (ix *index) declares(entries []string, files bool, name string) bool {
	set := ix.dirs
	if files {
		set = ix.files
	}
	for _, e := range entries {
		if set[e][name] {
			return true
		}
	}
	return false
}
