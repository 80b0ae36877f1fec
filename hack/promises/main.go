package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "promises:", err)
		os.Exit(1)
	}
}

// run checks the citations of the files args names (docs/*.md and
// README.md under the root when none) and prints each that does not hold
// to out.
func run(args []string, out io.Writer) error {
	fl := flag.NewFlagSet("promises", flag.ContinueOnError)
	root := fl.String("root", ".", "the repository's root directory")
	if err := fl.Parse(args); err != nil {
		return err
	}
	files := fl.Args()
	if len(files) == 0 {
		var err error
		if files, err = filepath.Glob(filepath.Join(*root, "docs", "*.md")); err != nil {
			return err
		}
		if len(files) == 0 {
			return fmt.Errorf("no docs/*.md under %s", *root)
		}
		sort.Strings(files)
		if readme := filepath.Join(*root, "README.md"); fileExists(readme) {
			files = append(files, readme)
		}
	}
	ix, err := buildIndex(*root)
	if err != nil {
		return err
	}
	cited, broken := 0, 0
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		name := file
		if rel, err := filepath.Rel(*root, file); err == nil && !strings.HasPrefix(rel, "..") {
			name = filepath.ToSlash(rel)
		}
		for _, c := range citations(string(text)) {
			cited++
			if problem := ix.check(c); problem != "" {
				broken++
				fmt.Fprintf(out, "%s:%d: `%s`: %s\n", name, c.Line, c.Span, problem)
			}
		}
	}
	if broken > 0 {
		return fmt.Errorf("%d of %d cited tests not found", broken, cited)
	}
	if cited == 0 {
		return errors.New("no test cited: is this the repository's root?")
	}
	fmt.Fprintf(out, "promises: the %d tests cited in %d files exist\n", cited, len(files))
	return nil
}

// check returns why the citation does not hold, or empty when it does.
func (ix *index) check(c citation) string {
	var problems []string
	if c.Pkg != "" {
		dirs := ix.packageDirs(c.Pkg)
		switch {
		case len(dirs) == 0:
			problems = append(problems, fmt.Sprintf("no package %s in the repository", c.Pkg))
		case !ix.declares(dirs, false, c.Name):
			problems = append(problems, fmt.Sprintf("no func %s( in the _test.go files of %s", c.Name, strings.Join(dirs, ", ")))
		}
	}
	if c.Path != "" {
		entries, files := ix.pathEntries(c.Path)
		what := "directory"
		if files {
			what = "test file"
		}
		switch {
		case len(entries) == 0:
			problems = append(problems, fmt.Sprintf("no %s %s in the repository", what, c.Path))
		case !ix.declares(entries, files, c.Name):
			where := strings.Join(entries, ", ")
			if !files {
				where = "the _test.go files of " + where
			}
			problems = append(problems, fmt.Sprintf("no func %s( in %s", c.Name, where))
		}
	}
	if c.Pkg == "" && c.Path == "" && !ix.all[c.Name] {
		problems = append(problems, fmt.Sprintf("no func %s( in any _test.go file", c.Name))
	}
	return strings.Join(problems, "; ")
}

// fileExists reports whether path names a regular file.
func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
