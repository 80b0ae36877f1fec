package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/build"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bosunkit/bosun/cmd/bosun/dsl"
	"github.com/bosunkit/bosun/cmd/bosun/gen"
)

// errReported is returned by a command that already printed its errors; main
// exits 1 without printing it again.
var errReported = errors.New("errors reported")

func newGenCommand() *cobra.Command {
	var outDir, pkg, module string
	cmd := &cobra.Command{
		Use:   "gen [-o DIR] [--package NAME] [--module DIR] FILE...",
		Short: "Generate Go state getters and engine steps from .bosun documents",
		Long: `Checks each document, including its ${target...} references and fields/ paths
against the Go types it binds, and writes zz_generated.<name>.go next to it (or
into DIR). The package name is taken from the Go files already in the output
directory, or from its base name. A file is rewritten only when its content
changes. Errors are printed as FILE:LINE:COL: message.

Go import paths resolve in the Go module of the document's directory, or, for a
document outside any module, in the module of the working directory; --module
names another directory whose module to use.

Use it from a go:generate line:

	//go:generate go run github.com/bosunkit/bosun/cmd/bosun gen cronjob.bosun`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			failed := false
			mods := newModules(module)
			for _, file := range files {
				spec, types, src, err := load(cmd.Context(), file, mods)
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
	addModuleFlag(cmd, &module)
	return cmd
}

// addModuleFlag adds the --module flag of gen and check to cmd.
func addModuleFlag(cmd *cobra.Command, module *string) {
	cmd.Flags().StringVar(module, "module", "", "a directory whose Go module resolves the documents' Go types (default: each document's module, else the working directory's)")
}

func newCheckCommand() *cobra.Command {
	var module string
	cmd := &cobra.Command{
		Use:   "check [--module DIR] FILE...",
		Short: "Check .bosun documents, including their references to Go types",
		Long: `Parses and checks each document. Prints nothing and exits 0 when every document
is valid; otherwise prints every error as FILE:LINE:COL: message, with the line
and a caret under the column, on stderr and exits 1.

Go import paths resolve in the Go module of the document's directory, or, for a
document outside any module, in the module of the working directory; --module
names another directory whose module to use. When there is no module to use,
the document's error is one line saying so.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, files []string) error {
			failed := false
			mods := newModules(module)
			for _, file := range files {
				if _, _, src, err := load(cmd.Context(), file, mods); err != nil {
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
	addModuleFlag(cmd, &module)
	return cmd
}

// load reads, parses and checks a document, with Go type checks by the
// types mods finds for it, and returns the types too. A document that does
// not parse is reported before its module is looked for.
func load(ctx context.Context, file string, mods *modules) (*dsl.Spec, *gen.GoTypes, []byte, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, nil, err
	}
	f, err := dsl.Parse(file, src)
	if err != nil {
		return nil, nil, src, err
	}
	types, err := mods.typesFor(ctx, file)
	if err != nil {
		return nil, nil, src, err
	}
	spec, err := dsl.Check(f, dsl.CheckOptions{Types: types})
	return spec, types, src, err
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
