package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/build"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bosunkit/bosun/dsl"
	"github.com/bosunkit/bosun/gen"
)

// errReported is returned by a command that already printed its errors; main
// exits 1 without printing it again.
var errReported = errors.New("errors reported")

func newGenCommand() *cobra.Command {
	var outDir, pkg string
	cmd := &cobra.Command{
		Use:   "gen [-o DIR] [--package NAME] FILE...",
		Short: "Generate Go state getters and action wrappers from .bosun documents",
		Long: `Checks each document, including its ${target...} references and fields/ paths
against the Go types it binds, and writes zz_generated.<name>.go next to it (or
into DIR). The package name is taken from the Go files already in the output
directory, or from its base name. A file is rewritten only when its content
changes. Errors are printed as FILE:LINE:COL: message.

Use it from a go:generate line:

	//go:generate go run github.com/bosunkit/bosun/cmd/bosun gen cronjob.bosun`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			failed := false
			for _, file := range files {
				types := gen.NewGoTypes(filepath.Dir(file))
				spec, src, err := load(file, types)
				if err != nil {
					report(cmd.ErrOrStderr(), err, src)
					failed = true
					continue
				}
				dir := outDir
				if dir == "" {
					dir = filepath.Dir(file)
				}
				name := pkg
				if name == "" {
					if name, err = packageName(dir); err != nil {
						return err
					}
				}
				out, err := gen.Generate(spec, gen.Options{Package: name, Source: filepath.Base(file), Types: types})
				if err != nil {
					return fmt.Errorf("generate %s: %w", file, err)
				}
				if err := writeIfChanged(filepath.Join(dir, gen.OutputName(filepath.Base(file))), out); err != nil {
					return err
				}
			}
			if failed {
				return errReported
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&outDir, "output", "o", "", "directory to write into (default: each document's directory)")
	cmd.Flags().StringVar(&pkg, "package", "", "Go package name of the output (default: taken from the output directory)")
	return cmd
}

func newCheckCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "check FILE...",
		Short: "Check .bosun documents, including their references to Go types",
		Long: `Parses and checks each document. Prints nothing and exits 0 when every document
is valid; otherwise prints every error as FILE:LINE:COL: message, with the line
and a caret under the column, on stderr and exits 1.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			failed := false
			for _, file := range files {
				if _, src, err := load(file, gen.NewGoTypes(filepath.Dir(file))); err != nil {
					report(cmd.ErrOrStderr(), err, src)
					failed = true
				}
			}
			if failed {
				return errReported
			}
			return nil
		},
	}
}

func newFmtCommand() *cobra.Command {
	var write, list bool
	cmd := &cobra.Command{
		Use:   "fmt [-w] [-l] FILE...",
		Short: "Format .bosun documents canonically",
		Long: `Prints each document in canonical form: tabs for indentation, single spaces,
one blank line at most, comments kept. With -w, rewrites the files that differ
instead; with -l, lists them. Formatting a formatted document changes nothing.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			failed := false
			for _, file := range files {
				src, err := os.ReadFile(file)
				if err != nil {
					return err
				}
				f, err := dsl.Parse(file, src)
				if err != nil {
					report(cmd.ErrOrStderr(), err, src)
					failed = true
					continue
				}
				out := dsl.Format(f)
				changed := !bytes.Equal(src, out)
				if list && changed {
					fmt.Fprintln(cmd.OutOrStdout(), file)
				}
				if write {
					if changed {
						if err := os.WriteFile(file, out, 0o644); err != nil { //nolint:gosec // a source file, as readable as the one it replaces
							return err
						}
					}
					continue
				}
				if !list {
					if _, err := cmd.OutOrStdout().Write(out); err != nil {
						return err
					}
				}
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

// load reads, parses and checks a document, with Go type checks by types.
func load(file string, types *gen.GoTypes) (*dsl.Spec, []byte, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	f, err := dsl.Parse(file, src)
	if err != nil {
		return nil, src, err
	}
	spec, err := dsl.Check(f, dsl.CheckOptions{Types: types})
	return spec, src, err
}

// report prints err: a list of document errors with their source lines, or
// any other error on one line.
func report(w io.Writer, err error, src []byte) {
	var list dsl.ErrorList
	if errors.As(err, &list) {
		dsl.PrintErrors(w, err, src)
		return
	}
	fmt.Fprintln(w, "bosun:", err)
}

// packageName returns the name of the Go package in dir, or, when dir holds
// no Go files, its base name made into an identifier.
func packageName(dir string) (string, error) {
	p, err := build.ImportDir(dir, 0)
	if err == nil && p.Name != "" {
		return p.Name, nil
	}
	var noGo *build.NoGoError
	if err != nil && !errors.As(err, &noGo) && !os.IsNotExist(err) {
		return "", fmt.Errorf("package name of %s: %w", dir, err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return -1
	}, filepath.Base(abs))
	if name == "" || !token.IsIdentifier(name) {
		return "", fmt.Errorf("no package name for %s: pass --package", dir)
	}
	return name, nil
}

// writeIfChanged writes data to path unless path already holds it.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { //nolint:gosec // a source directory
		return err
	}
	return os.WriteFile(path, data, 0o644) //nolint:gosec // generated source, as readable as any source file
}
