package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const cronJobPath = "../../examples/cronjob/cronjob.bosun"

// graphsOf splits the output of `bosun graph` into its graphs and checks
// that each looks like a drawing of format: for Mermaid, optional front
// matter, "flowchart TD" and as many "end" lines as subgraphs; for DOT, a
// digraph whose braces balance.
func graphsOf(t *testing.T, format, out string) []string {
	t.Helper()
	var graphs []string
	for g := range strings.SplitSeq(out, "\n\n") {
		graphs = append(graphs, g)
		lines := strings.Split(strings.TrimSuffix(g, "\n"), "\n")
		switch format {
		case formatMermaid:
			if lines[0] == "---" {
				lines = lines[3:]
			}
			if lines[0] != "flowchart TD" {
				t.Errorf("Mermaid graph does not start with flowchart TD:\n%s", g)
			}
			subgraphs, ends := 0, 0
			for _, l := range lines {
				switch strings.TrimSpace(l) {
				case "end":
					ends++
				default:
					if strings.HasPrefix(strings.TrimSpace(l), "subgraph ") {
						subgraphs++
					}
				}
			}
			if subgraphs != ends {
				t.Errorf("Mermaid graph has %d subgraphs and %d ends:\n%s", subgraphs, ends, g)
			}
		case formatDOT:
			if lines[0] != "digraph flow {" || lines[len(lines)-1] != "}" {
				t.Errorf("not a DOT digraph:\n%s", g)
			}
			if o, c := strings.Count(g, "{"), strings.Count(g, "}"); o != c {
				t.Errorf("DOT graph has %d { and %d }:\n%s", o, c, g)
			}
		}
	}
	return graphs
}

func TestGraphCronJobDocument(t *testing.T) {
	stdout, stderr, err := run(t, "graph", cronJobPath)
	if err != nil || stderr != "" {
		t.Fatalf("bosun graph: err %v\nstderr:\n%s", err, stderr)
	}
	want := `---
title: "decl CronJobControllerManager for CronJob"
---
flowchart TD
    subgraph s0 ["states"]
        n0["jobs []Job: labels/cronjob=${target.Name}, fields/.metadata.controller=${target.Name}, owned"]
    end
    subgraph s1 ["actions"]
        n1["ListActiveJobsAndUpdateStatus"]
        n2["CleanUpOldJobsExceedsHistoryLimits"]
        n3["RunNextScheduledJob"]
    end
    subgraph s2 ["writes"]
        n4["Job"]
    end
    n0 -->|"reads"| n1
    n0 -->|"reads"| n2
    n2 -->|"delete"| n4
    n3 -->|"create, delete"| n4
`
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("bosun graph mismatch (-want +got):\n%s", diff)
	}
	graphsOf(t, formatMermaid, stdout)
}

func TestGraphFormats(t *testing.T) {
	dir := t.TempDir()
	two := writeFile(t, dir, "two.bosun", `decl Web for Deployment {
	state {
		svc Service {
			name=${target.Name}
		}
	}
	action {
		Expose(svc) writes Service(create, update)
		Report()
	}
}

decl Nodes for ConfigMap {
	action {
		Label() writes Node(patch)
	}
}
`)
	tests := []struct {
		name   string
		args   []string
		format string
		// titles are the title lines of the graphs, in order; want are
		// what the output must hold besides.
		titles []string
		want   []string
	}{
		{
			name: "document as Mermaid", args: []string{cronJobPath}, format: formatMermaid,
			titles: []string{`title: "decl CronJobControllerManager for CronJob"`},
			want:   []string{`["jobs []Job: `, `["ListActiveJobsAndUpdateStatus"]`, `["RunNextScheduledJob"]`, `-->|"create, delete"|`},
		},
		{
			name: "document as DOT", args: []string{"--format", "dot", cronJobPath}, format: formatDOT,
			titles: []string{`graph [label="decl CronJobControllerManager for CronJob", labelloc=t];`},
			want:   []string{`[label="ListActiveJobsAndUpdateStatus"]`, `[label="CleanUpOldJobsExceedsHistoryLimits"]`, `[label="create, delete"]`},
		},
		{
			name: "every decl, titled", args: []string{two}, format: formatMermaid,
			titles: []string{`title: "decl Web for Deployment"`, `title: "decl Nodes for ConfigMap"`},
			want:   []string{`["svc Service: name=${target.Name}"]`, `["Expose"]`, `["Report"]`, `-->|"create, update"|`, `["Label"]`, `["Node"]`, `-->|"patch"|`},
		},
		{
			name: "every decl, titled, as DOT", args: []string{"--format=dot", two}, format: formatDOT,
			titles: []string{`graph [label="decl Web for Deployment", labelloc=t];`, `graph [label="decl Nodes for ConfigMap", labelloc=t];`},
			want:   []string{`[label="Expose"]`, `[label="Node"]`},
		},
		{
			name: "engine example", args: []string{"--example", "cronjob"}, format: formatMermaid,
			titles: []string{`title: "reconciler cronjob"`},
			want:   []string{`{{"Join"}}`, `["ListActiveJobsAndUpdateStatus: do"]`, `subgraph s2 ["If(RunNextScheduledJob): do"]`},
		},
		{
			name: "engine example as DOT", args: []string{"--example", "rwexternal", "--format", "dot"}, format: formatDOT,
			titles: []string{`graph [label="reconciler rwexternal, finalizer rwexternal.bosun.dev/output", labelloc=t];`},
			want:   []string{`[label="readInput: do, observe; conditions InputReady"]`, `label="cleanup, on deletion, in reverse order";`},
		},
		{
			name: "example of two reconcilers", args: []string{"--example", "postgres"}, format: formatMermaid,
			titles: []string{`title: "reconciler postgres-role, finalizer postgres.bosun.dev/role"`, `title: "reconciler postgres-database, finalizer postgres.bosun.dev/database"`},
			want:   []string{`["role: do, observe, cleanup; conditions Synced, Available"]`, `["database: do, observe, cleanup; conditions Synced, Available"]`},
		},
		{
			name: "engine example with a cleanup", args: []string{"--example", "hello"}, format: formatMermaid,
			titles: []string{`title: "reconciler greeting, finalizer hello.bosun.dev/configmap"`},
			want:   []string{`["publishGreeting: do, cleanup; conditions Published"]`, `subgraph s1 ["cleanup, on deletion, in reverse order"]`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, err := run(t, append([]string{"graph"}, tt.args...)...)
			if err != nil || stderr != "" {
				t.Fatalf("bosun graph: err %v\nstderr:\n%s", err, stderr)
			}
			graphs := graphsOf(t, tt.format, stdout)
			var titles []string
			for _, g := range graphs {
				for l := range strings.Lines(g) {
					if strings.HasPrefix(l, "title: ") || strings.HasPrefix(strings.TrimSpace(l), "graph [label=") {
						titles = append(titles, strings.TrimSpace(l))
					}
				}
			}
			if diff := cmp.Diff(tt.titles, titles); diff != "" {
				t.Errorf("titles mismatch (-want +got):\n%s", diff)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
}

// Every example that `bosun demo` runs can be drawn, and the drawing does
// not depend on the run.
func TestGraphEveryExample(t *testing.T) {
	for _, e := range examples() {
		t.Run(e.Name, func(t *testing.T) {
			for _, format := range []string{formatMermaid, formatDOT} {
				first, stderr, err := run(t, "graph", "--format", format, "--example", e.Name)
				if err != nil || stderr != "" || first == "" {
					t.Fatalf("bosun graph --example %s: err %v\nstdout:\n%s\nstderr:\n%s", e.Name, err, first, stderr)
				}
				graphsOf(t, format, first)
				again, _, _ := run(t, "graph", "--format", format, "--example", e.Name)
				if diff := cmp.Diff(first, again); diff != "" {
					t.Errorf("a second run differs (-first +second):\n%s", diff)
				}
			}
		})
	}
}

func TestGraphInvalidDocument(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "bad.bosun", `decl M for Pod {
	action {
		Do(missing)
	}
}
`)
	stdout, stderr, err := run(t, "graph", path)
	if !errors.Is(err, errReported) {
		t.Fatalf("bosun graph: err %v, want errReported", err)
	}
	if stdout != "" {
		t.Errorf("bosun graph drew an invalid document:\n%s", stdout)
	}
	if want := path + ":3:6: unknown state missing in action Do\n\t\tDo(missing)\n\t\t   ^\n"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}

	// As a user runs it: the same error, and exit status 1.
	stdout, stderr, status := runMain(t, dir, "graph", filepath.Base(path))
	if status != 1 || stdout != "" || !strings.HasPrefix(stderr, "bad.bosun:3:6: ") {
		t.Errorf("bosun graph bad.bosun: status %d\nstdout:\n%s\nstderr:\n%s", status, stdout, stderr)
	}
}

func TestGraphUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"nothing to draw", nil, "give one .bosun document, or --example NAME"},
		{"two documents", []string{"a.bosun", "b.bosun"}, "give one .bosun document, or --example NAME"},
		{"document and example", []string{"--example", "simple", cronJobPath}, "give a document or --example, not both"},
		{"unknown example", []string{"--example", "nope"}, `unknown example "nope": want one of cronjob, hello, memcached, postgres, rwexternal, simple, site, trust`},
		{"unknown format", []string{"--format", "svg", cronJobPath}, `unknown --format "svg": want mermaid or dot`},
		{"missing document", []string{"missing.bosun"}, "open missing.bosun: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, _, err := run(t, append([]string{"graph"}, tt.args...)...)
			if diff := cmp.Diff(tt.want, fmt.Sprint(err)); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
			if stdout != "" {
				t.Errorf("stdout is not empty:\n%s", stdout)
			}
		})
	}
}
