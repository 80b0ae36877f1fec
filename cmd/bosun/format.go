package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bosunkit/bosun/cmd/bosun/dsl"
)

// stdinName names standard input in fmt's errors and list.
const stdinName = "<standard input>"

func newFmtCommand() *cobra.Command {
	var write, list bool
	cmd := &cobra.Command{
		Use:   "fmt [-w] [-l] [PATH...]",
		Short: "Format .bosun documents canonically",
		Long: `Prints each document in canonical form: tabs for indentation, single spaces,
one blank line at most, comments kept. With -w, rewrites the files that differ
instead; with -l, lists them, one path a line, and exits 0 whether or not it
lists any (as gofmt -l does). Formatting a formatted document changes nothing.

A PATH is a file, formatted whatever its name, or a directory, whose *.bosun
documents are formatted, recursively; below a directory given, those the go
command leaves out of ./... are skipped: testdata, vendor, and names that
begin with . or _ (name such a directory to format it). With no PATH, formats
standard input to standard output.

A document that does not parse is reported as FILE:LINE:COL: message, left
as it is, and makes the command exit 1.`,
		RunE: func(cmd *cobra.Command, paths []string) error {
			if len(paths) == 0 {
				if write {
					return errors.New("fmt: cannot use -w with standard input")
				}
				src, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return fmt.Errorf("read standard input: %w", err)
				}
				return formatOne(cmd, stdinName, src, false, list)
			}
			files, walkErr := documents(paths)
			failed := false
			for _, file := range files {
				src, err := os.ReadFile(file)
				if err == nil {
					err = formatOne(cmd, file, src, write, list)
				}
				if err != nil {
					if !errors.Is(err, errReported) {
						report(cmd.ErrOrStderr(), err, nil)
					}
					failed = true
				}
			}
			if walkErr != nil {
				report(cmd.ErrOrStderr(), walkErr, nil)
				failed = true
			}
			if failed {
				return errReported
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&write, "write", "w", false, "write the result to each file instead of stdout")
	cmd.Flags().BoolVarP(&list, "list", "l", false, "list the files whose formatting differs")
	return cmd
}

// formatOne formats the document src read from name: it lists name when
// list is set and the canonical form differs, rewrites the file when write
// is set, and prints the canonical form when neither is. A document that does
// not parse is reported, and errReported returned.
func formatOne(cmd *cobra.Command, name string, src []byte, write, list bool) error {
	f, err := dsl.Parse(name, src)
	if err != nil {
		report(cmd.ErrOrStderr(), err, src)
		return errReported
	}
	out := dsl.Format(f)
	changed := !bytes.Equal(src, out)
	if list && changed {
		fmt.Fprintln(cmd.OutOrStdout(), name)
	}
	switch {
	case write && changed:
		if err := os.WriteFile(name, out, 0o644); err != nil { //nolint:gosec // a source file, as readable as the one it replaces
			return fmt.Errorf("write %s: %w", name, err)
		}
	case !write && !list:
		if _, err := cmd.OutOrStdout().Write(out); err != nil {
			return fmt.Errorf("print %s: %w", name, err)
		}
	}
	return nil
}

// documents expands paths into the documents they name, in order: a file
// names itself; a directory names every *.bosun file below it, in lexical
// order (hidden files aside), except in the directories below it that
// skipDir leaves out. The
// error joins those of the paths that could not be read; the documents found
// are returned all the same.
func documents(paths []string) ([]string, error) {
	var files []string
	var errs []error
	for _, path := range paths {
		info, err := os.Stat(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !info.IsDir() {
			files = append(files, path)
			continue
		}
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				errs = append(errs, err)
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
			case d.IsDir():
				if p != path && skipDir(d.Name()) {
					return fs.SkipDir
				}
			case strings.HasSuffix(d.Name(), ".bosun") && !strings.HasPrefix(d.Name(), "."):
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return files, errors.Join(errs...)
}

// skipDir reports whether a directory met below a path given to fmt is left
// out, as the go command leaves it out of ./...: test data, vendored code,
// and hidden or ignored directories.
func skipDir(name string) bool {
	return name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}
