// Command binsize measures what a production binary of an operator links:
// the memcached example's operator on package operator (operator.Main)
// against the same controller on a bare controller-runtime manager
// (bench/binsize/bare). For each it prints the packages linked (and of
// them the standard library's), the modules they come from, whether the
// binary links the control-plane builder (package controlplane) or
// envtest, which only development and tests need, and the size of a
// release build as bosun image makes it (static, -trimpath, stripped).
//
//	go run ./bench/binsize        # make bench-binsize
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// target is a main package the bench measures.
type target struct {
	name, pkg string
}

var targets = []target{
	{"memcached on operator.Main", "./examples/memcached/cmd"},
	{"memcached on a bare manager", "./bench/binsize/bare"},
}

// devOnly are the packages a production binary should not link.
var devOnly = []string{"github.com/bosunkit/bosun/controlplane", "sigs.k8s.io/controller-runtime/pkg/envtest"}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "binsize:", err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("", "binsize")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Println("| binary | packages linked (standard library) | modules | links controlplane or envtest | size, release build (MiB) |")
	fmt.Println("| --- | ---: | ---: | --- | ---: |")
	for _, t := range targets {
		deps, err := goOut("list", "-deps", "-f", "{{.ImportPath}} {{.Standard}} {{with .Module}}{{.Path}}{{end}}", t.pkg)
		if err != nil {
			return err
		}
		var pkgs, std int
		modules := map[string]bool{}
		var dev []string
		for _, line := range strings.Split(strings.TrimSpace(deps), "\n") {
			f := strings.Fields(line)
			pkgs++
			if f[1] == "true" {
				std++
			}
			if len(f) > 2 {
				modules[f[2]] = true
			}
			for _, d := range devOnly {
				if f[0] == d {
					dev = append(dev, d)
				}
			}
		}
		bin := filepath.Join(dir, "manager")
		if _, err := goOut("build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", bin, t.pkg); err != nil {
			return err
		}
		fi, err := os.Stat(bin)
		if err != nil {
			return err
		}
		links := "no"
		if len(dev) > 0 {
			links = "yes: " + strings.Join(dev, ", ")
		}
		fmt.Printf("| %s (`%s`) | %d (%d) | %d | %s | %.1f |\n", t.name, t.pkg, pkgs, std, len(modules), links, float64(fi.Size())/(1<<20))
	}
	return nil
}

// goOut runs the go command with args, for a static linux/amd64 build,
// and returns its standard output.
func goOut(args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}
