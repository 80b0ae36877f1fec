package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/bosunkit/bosun/cmd/bosun/gen"
)

// errOutsideModule is wrapped by the error of a document whose Go types no
// module can resolve: neither its directory, nor the working directory, is
// inside a Go module or workspace.
var errOutsideModule = errors.New("outside a Go module")

// goEnv is what the go command says about the build context of a directory.
type goEnv struct {
	// GOMOD is the go.mod of the directory's main module; os.DevNull in
	// module mode outside any module; empty in GOPATH mode.
	GOMOD string
	// GOWORK is the go.work in use, if any ("off" or empty otherwise).
	GOWORK string
}

// resolves reports whether the go command can resolve import paths from the
// directory: inside a module, inside a workspace, or in GOPATH mode.
func (e goEnv) resolves() bool {
	if e.GOWORK != "" && e.GOWORK != "off" {
		return true
	}
	return e.GOMOD != os.DevNull
}

// key names the build list of the directory: directories of one module (or
// workspace) resolve every import path alike, so they share their types.
func (e goEnv) key(dir string) string {
	switch {
	case e.GOWORK != "" && e.GOWORK != "off":
		return "work:" + e.GOWORK
	case e.GOMOD != "":
		return "mod:" + e.GOMOD
	}
	return "dir:" + dir
}

// modules finds, for each document, the Go module that resolves the Go
// types it binds, and keeps one gen.GoTypes per module, so that documents of
// one module load each package once.
type modules struct {
	// flag is the --module directory, or empty.
	flag string

	envs  map[string]goEnv // by absolute directory
	types map[string]*gen.GoTypes
}

func newModules(flag string) *modules {
	return &modules{flag: flag, envs: make(map[string]goEnv), types: make(map[string]*gen.GoTypes)}
}

// typesFor returns the GoTypes for the document file: those of --module
// when given, else of the module holding file, else of the module of the
// working directory. When none of them is a module it returns one error
// that says what to do, wrapping errOutsideModule.
func (m *modules) typesFor(ctx context.Context, file string) (*gen.GoTypes, error) {
	if m.flag != "" {
		dir, env, err := m.env(ctx, m.flag)
		if err != nil {
			return nil, err
		}
		if !env.resolves() {
			return nil, fmt.Errorf("--module %s is %w", m.flag, errOutsideModule)
		}
		return m.typesOf(dir, env), nil
	}
	dir, env, err := m.env(ctx, filepath.Dir(file))
	if err != nil {
		return nil, err
	}
	if env.resolves() {
		return m.typesOf(dir, env), nil
	}
	wd, env, err := m.env(ctx, ".")
	if err != nil {
		return nil, err
	}
	if env.resolves() {
		return m.typesOf(wd, env), nil
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		abs = file
	}
	return nil, fmt.Errorf("%s is %w; run it from your module or pass --module DIR", abs, errOutsideModule)
}

// typesOf returns the GoTypes shared by the directories of env's module.
func (m *modules) typesOf(dir string, env goEnv) *gen.GoTypes {
	key := env.key(dir)
	t, ok := m.types[key]
	if !ok {
		t = gen.NewGoTypes(dir)
		m.types[key] = t
	}
	return t
}

// env asks the go command, once per directory, for the build context of
// dir, and returns dir made absolute.
func (m *modules) env(ctx context.Context, dir string) (string, goEnv, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", goEnv{}, fmt.Errorf("directory %s: %w", dir, err)
	}
	if e, ok := m.envs[abs]; ok {
		return abs, e, nil
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", goEnv{}, fmt.Errorf("directory %s: %w", dir, err)
	}
	if !info.IsDir() {
		return "", goEnv{}, fmt.Errorf("%s is not a directory", dir)
	}
	cmd := exec.CommandContext(ctx, "go", "env", "-json", "GOMOD", "GOWORK")
	cmd.Dir = abs
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", goEnv{}, fmt.Errorf("go env in %s: %w: %s", abs, err, firstLine(msg))
		}
		return "", goEnv{}, fmt.Errorf("go env in %s: %w", abs, err)
	}
	var e goEnv
	if err := json.Unmarshal(out, &e); err != nil {
		return "", goEnv{}, fmt.Errorf("go env in %s: %w", abs, err)
	}
	m.envs[abs] = e
	return abs, e, nil
}

// firstLine returns s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
