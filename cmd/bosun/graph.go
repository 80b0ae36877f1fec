package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bosunkit/bosun/cmd/bosun/dsl"
	"github.com/bosunkit/bosun/examples/cronjob"
	"github.com/bosunkit/bosun/examples/hello"
	"github.com/bosunkit/bosun/examples/memcached"
	"github.com/bosunkit/bosun/examples/postgres"
	"github.com/bosunkit/bosun/examples/rwexternal"
	"github.com/bosunkit/bosun/examples/simple"
	"github.com/bosunkit/bosun/examples/site"
	"github.com/bosunkit/bosun/examples/trust"
	"github.com/bosunkit/bosun/internal/drawing"
)

// drawable is a graph that renders as Mermaid and as DOT: a
// bosun.Graph, a *drawing.Drawing.
type drawable interface {
	Mermaid() string
	DOT() string
}

// The formats of `bosun graph`.
const (
	formatMermaid = "mermaid"
	formatDOT     = "dot"
)

func newGraphCommand() *cobra.Command {
	var format, example string
	cmd := &cobra.Command{
		Use:   "graph [--format mermaid|dot] FILE.bosun | graph [--format mermaid|dot] --example NAME",
		Short: "Draw the decls of a .bosun document, or the reconcilers of an example, as Mermaid or DOT",
		Long: `With a document, parses and checks it (as bosun check does, without the Go
type references, so that no Go module is needed) and draws each decl, titled
"decl NAME for KIND": its states, its actions, which states each action
reads and which kinds it writes with which verbs. A document declares no
order of its actions; the Go code that arranges their steps does. Errors are
printed as FILE:LINE:COL: message, and nothing is drawn.

With --example NAME, draws the reconcilers of a built-in example operator
(Reconciler.Graph): each step in order with its phases and conditions, the
workflow of a step that exposes one, composites around their steps, and the
steps that clean up in reverse order.

Graphs are printed one after the other, separated by a blank line.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case example != "" && len(args) > 0:
				return errors.New("give a document or --example, not both")
			case example == "" && len(args) != 1:
				return errors.New("give one .bosun document, or --example NAME")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != formatMermaid && format != formatDOT {
				return fmt.Errorf("unknown --format %q: want %s or %s", format, formatMermaid, formatDOT)
			}
			var graphs []drawable
			if example != "" {
				draw, ok := exampleGraphs()[example]
				if !ok {
					return fmt.Errorf("unknown example %q: want one of %s", example, strings.Join(exampleNames(), ", "))
				}
				graphs = draw()
			} else {
				file := args[0]
				src, err := os.ReadFile(file)
				if err != nil {
					return err
				}
				spec, err := checkDocument(file, src)
				if err != nil {
					report(cmd.ErrOrStderr(), err, src)
					return errReported
				}
				graphs = documentGraphs(spec)
			}
			return printGraphs(cmd.OutOrStdout(), graphs, format)
		},
	}
	cmd.Flags().StringVar(&format, "format", formatMermaid, "output format: mermaid or dot")
	cmd.Flags().StringVar(&example, "example", "", "draw the reconcilers of this built-in example ("+strings.Join(exampleNames(), ", ")+")")
	return cmd
}

// checkDocument parses and checks a document without Go types.
func checkDocument(file string, src []byte) (*dsl.Spec, error) {
	f, err := dsl.Parse(file, src)
	if err != nil {
		return nil, err
	}
	return dsl.Check(f, dsl.CheckOptions{})
}

// printGraphs writes each graph in format, a blank line between two.
func printGraphs(w io.Writer, graphs []drawable, format string) error {
	for i, g := range graphs {
		out := g.Mermaid()
		if format == formatDOT {
			out = g.DOT()
		}
		if i > 0 {
			out = "\n" + out
		}
		if _, err := io.WriteString(w, out); err != nil {
			return err
		}
	}
	return nil
}

// documentGraphs draws each decl of spec, in document order.
func documentGraphs(spec *dsl.Spec) []drawable {
	graphs := make([]drawable, 0, len(spec.Decls))
	for _, d := range spec.Decls {
		graphs = append(graphs, declGraph(d))
	}
	return graphs
}

// declGraph draws d: a subgraph of its states, one of its actions and,
// when some action writes, one of the kinds written; an edge "reads" from
// each state to each action that names it, and an edge labelled with the
// verbs from each action to each kind it writes.
func declGraph(d *dsl.DeclSpec) *drawing.Drawing {
	g := drawing.New("decl " + d.Name + " for " + d.Target.Name)
	states := make(map[*dsl.StateSpec]string, len(d.States))
	if len(d.States) > 0 {
		c := g.Root().Cluster("states")
		for _, s := range d.States {
			states[s] = c.Box(stateLabel(s))
		}
	}
	actions := make([]string, len(d.Actions))
	if len(d.Actions) > 0 {
		c := g.Root().Cluster("actions")
		for i, a := range d.Actions {
			actions[i] = c.Box(a.Name)
		}
	}
	var written drawing.Cluster
	kinds := make(map[string]string)
	for i, a := range d.Actions {
		for _, s := range a.States {
			g.Edge(states[s], actions[i], "reads")
		}
		for _, w := range a.Writes {
			id, ok := kinds[w.Kind.Name]
			if !ok {
				if len(kinds) == 0 {
					written = g.Root().Cluster("writes")
				}
				id = written.Box(w.Kind.Name)
				kinds[w.Kind.Name] = id
			}
			g.Edge(actions[i], id, strings.Join(w.Verbs, ", "))
		}
	}
	return g
}

// stateLabel returns "NAME KIND" ("NAME []KIND" for a list) and its
// selectors in canonical form: "jobs []Job: labels/cronjob=${target.Name},
// owned".
func stateLabel(s *dsl.StateSpec) string {
	label := s.Name + " "
	if s.List {
		label += "[]"
	}
	label += s.Kind.Name
	if len(s.Selectors) > 0 {
		label += ": " + strings.Join(s.Selectors, ", ")
	}
	return label
}

// exampleGraphs returns, by example name, what draws the reconcilers of
// each example operator of `bosun demo`. It builds them with their
// constructors, without a manager or a client, and runs nothing.
func exampleGraphs() map[string]func() []drawable {
	return map[string]func() []drawable{
		"hello":      helloGraphs,
		"simple":     func() []drawable { return []drawable{simple.NewReconciler().Graph()} },
		"rwexternal": func() []drawable { return []drawable{rwexternal.NewReconciler().Graph()} },
		"cronjob":    func() []drawable { return []drawable{cronjob.NewReconciler(cronjob.Options{}).Graph()} },
		"site":       func() []drawable { return []drawable{site.NewReconciler().Graph()} },
		"memcached":  func() []drawable { return []drawable{memcached.NewReconciler().Graph()} },
		"postgres": func() []drawable {
			return []drawable{
				postgres.NewRoleReconciler(postgres.Options{}).Graph(),
				postgres.NewDatabaseReconciler(postgres.Options{}).Graph(),
			}
		},
		"trust": func() []drawable { return []drawable{trust.NewReconciler(trust.Options{}).Graph()} },
	}
}

// exampleNames returns the names exampleGraphs knows, sorted.
func exampleNames() []string {
	names := make([]string, 0, len(exampleGraphs()))
	for name := range exampleGraphs() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// helloGraphs draws the reconciler of the hello example.
func helloGraphs() []drawable {
	return []drawable{hello.NewReconciler().Graph()}
}
