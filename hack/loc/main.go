package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "loc:", err)
		os.Exit(1)
	}
}

// Kinds of file, the columns of the table, in order.
const (
	kindOperator  = "operator"
	kindWiring    = "scheme and samples"
	kindAPI       = "API types"
	kindGenerated = "generated"
	kindTests     = "tests"
)

var kinds = []string{kindOperator, kindWiring, kindAPI, kindGenerated, kindTests}

// The CronJob controller of the kubebuilder book's tutorial counts
// tutorialLines lines, counted as countLines counts; cronjobController are
// the files of the CronJob example that do what it does (its webhooks and
// storage migration are features beyond it).
const tutorialLines = 430

var cronjobController = map[string]bool{"cronjob/controller.go": true, "cronjob/cronjob.bosun": true, "cronjob/doc.go": true}

// run counts the examples under the examples directory given by args and
// writes the table to stdout.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("loc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rev := fs.String("rev", "", "count the files as of this git revision instead of the working tree")
	dir := fs.String("examples", "examples", "the directory of the examples, relative to the repository root")
	if err := fs.Parse(args); err != nil {
		return err
	}
	files, err := listFiles(*rev, *dir)
	if err != nil {
		return err
	}
	counts := map[string]map[string]int{}
	controller := 0
	for _, f := range files {
		example, kind, ok := classify(strings.TrimPrefix(f, *dir+"/"))
		if !ok {
			continue
		}
		src, err := readFile(*rev, f)
		if err != nil {
			return err
		}
		if counts[example] == nil {
			counts[example] = map[string]int{}
		}
		n := countLines(src)
		counts[example][kind] += n
		if cronjobController[strings.TrimPrefix(f, *dir+"/")] {
			controller += n
		}
	}
	writeTable(stdout, counts)
	if controller > 0 {
		fmt.Fprintf(stdout, "\ncronjob's controller (controller.go, cronjob.bosun, doc.go): %d lines, %.2fx the kubebuilder tutorial's %d\n",
			controller, float64(controller)/tutorialLines, tutorialLines)
	}
	return nil
}

// classify tells which example a file (a path under the examples
// directory) belongs to and of which kind it is; ok is false for files
// that are not counted.
func classify(p string) (example, kind string, ok bool) {
	example, rest, found := strings.Cut(p, "/")
	if !found {
		return "", "", false
	}
	base := path.Base(rest)
	ext := path.Ext(base)
	if ext != ".go" && ext != ".bosun" {
		return "", "", false
	}
	switch {
	case strings.HasSuffix(base, "_test.go"):
		kind = kindTests
	case strings.HasPrefix(base, "zz_generated"):
		kind = kindGenerated
	case strings.HasPrefix(rest, "api/"):
		kind = kindAPI
	case rest == "scheme.go" || rest == "samples.go":
		kind = kindWiring
	case strings.Contains(rest, "/"):
		// Other packages inside an example (a test server, tools) are
		// not the operator.
		return "", "", false
	default:
		kind = kindOperator
	}
	return example, kind, true
}

// countLines counts the lines of src that are neither blank nor only a
// comment (// to the end of the line, or inside /* */).
func countLines(src []byte) int {
	n := 0
	inBlock := false
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 1024*1024), 16*1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if inBlock {
			end := strings.Index(line, "*/")
			if end < 0 {
				continue
			}
			inBlock = false
			line = strings.TrimSpace(line[end+2:])
		}
		if strings.HasPrefix(line, "/*") {
			if end := strings.Index(line[2:], "*/"); end >= 0 {
				line = strings.TrimSpace(line[2+end+2:])
			} else {
				inBlock = true
				continue
			}
		}
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		n++
	}
	return n
}

// listFiles lists the files under dir, in the working tree or at rev.
func listFiles(rev, dir string) ([]string, error) {
	if rev == "" {
		out, err := git("ls-files", "--", dir)
		if err != nil {
			return nil, err
		}
		return existing(lines(out)), nil
	}
	out, err := git("ls-tree", "-r", "--name-only", rev, "--", dir)
	if err != nil {
		return nil, err
	}
	return lines(out), nil
}

// existing keeps the files that are in the working tree.
func existing(files []string) []string {
	var out []string
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			out = append(out, f)
		}
	}
	return out
}

// readFile reads a file from the working tree, or as it was at rev.
func readFile(rev, name string) ([]byte, error) {
	if rev == "" {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		return b, nil
	}
	return git("show", rev+":"+name)
}

func git(args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func lines(b []byte) []string {
	var out []string
	for l := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// writeTable writes the counts as a Markdown table, one row per example in
// name order.
func writeTable(w io.Writer, counts map[string]map[string]int) {
	examples := make([]string, 0, len(counts))
	for e := range counts {
		examples = append(examples, e)
	}
	sort.Strings(examples)
	fmt.Fprintf(w, "| example | %s |\n", strings.Join(kinds, " | "))
	fmt.Fprintf(w, "| --- |%s\n", strings.Repeat(" ---: |", len(kinds)))
	for _, e := range examples {
		cells := make([]string, len(kinds))
		for i, k := range kinds {
			cells[i] = fmt.Sprint(counts[e][k])
		}
		fmt.Fprintf(w, "| %s | %s |\n", e, strings.Join(cells, " | "))
	}
}
