package dashboard_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kind says how a dashboard may query a metric.
type kind int

const (
	// plain metrics (counters, gauges) are queried by their name.
	plain kind = iota
	// histogram metrics are queried through their _bucket, _count and _sum
	// series.
	histogram
)

// controllerRuntime are the metrics of controller-runtime the dashboards
// may use.
var controllerRuntime = map[string]kind{
	"controller_runtime_reconcile_total":        plain,
	"controller_runtime_reconcile_errors_total": plain,
	"controller_runtime_reconcile_time_seconds": histogram,
	"workqueue_depth":                           plain,
}

// bosunMetrics are bosun's exported metric names.
var bosunMetrics = map[string]kind{
	"bosun_step_duration_seconds":           histogram,
	"bosun_step_errors_total":               plain,
	"bosun_managed_first_reconcile_seconds": histogram,
	"bosun_managed_ready_seconds":           histogram,
	"bosun_managed_deletion_seconds":        histogram,
	"bosun_managed_drift_corrections_total": plain,
}

// model is the part of a Grafana dashboard JSON model the test reads.
type model struct {
	UID           string  `json:"uid"`
	Title         string  `json:"title"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []panel `json:"panels"`
	Templating    struct {
		List []variable `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int             `json:"id"`
	Type       string          `json:"type"`
	Title      string          `json:"title"`
	Datasource json.RawMessage `json:"datasource"`
	GridPos    struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	// Panels are those of a collapsed row.
	Panels []panel `json:"panels"`
}

type variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Definition string          `json:"definition"`
}

// query returns the variable's query, which Grafana stores as a string or
// as an object with a "query" field.
func (v variable) query() string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	_ = json.Unmarshal(v.Query, &o)
	return o.Query
}

// all returns the panels, those inside rows included.
func all(panels []panel) []panel {
	var out []panel
	for _, p := range panels {
		out = append(out, p)
		out = append(out, all(p.Panels)...)
	}
	return out
}

var (
	// strip are the parts of a PromQL expression that hold no metric name:
	// string literals, label matchers, ranges, and the label lists of
	// by, without, on, ignoring, group_left and group_right.
	strip = []*regexp.Regexp{
		regexp.MustCompile(`"(?:[^"\\]|\\.)*"`),
		regexp.MustCompile(`\{[^}]*\}`),
		regexp.MustCompile(`\[[^\]]*\]`),
		regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`),
	}
	// function is a name followed by its arguments.
	function = regexp.MustCompile(`\b[a-zA-Z_][a-zA-Z0-9_]*\s*\(`)
	// name is a metric name (or a keyword).
	name = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	// number is a literal, with its exponent or a duration unit.
	number = regexp.MustCompile(`\b[0-9][0-9.eE+-]*[a-z]*\b`)
	// labelValues is Grafana's label_values(metric, label).
	labelValues = regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$`)
	// keywords are PromQL's words that are not metric names.
	keywords = []string{"and", "or", "unless", "bool", "offset", "inf", "nan"}
)

// metricNames returns the metric names an expression reads.
func metricNames(expr string) []string {
	for _, re := range strip {
		expr = re.ReplaceAllString(expr, " ")
	}
	expr = function.ReplaceAllString(expr, " (")
	expr = number.ReplaceAllString(expr, " ")
	var out []string
	for _, n := range name.FindAllString(expr, -1) {
		if !slices.Contains(keywords, strings.ToLower(n)) {
			out = append(out, n)
		}
	}
	return out
}

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`sum by (controller, result) (rate(controller_runtime_reconcile_total{controller=~"$controller"}[$__rate_interval]))`, []string{"controller_runtime_reconcile_total"}},
		{`histogram_quantile(0.99, sum by (le) (rate(a_bucket{x="y{z}"}[5m])))`, []string{"a_bucket"}},
		{`a / on (x) group_left (y) b > 0 and c offset 1h`, []string{"a", "b", "c"}},
		{`sum without(pod) (increase(x_total[1h])) * 1e3`, []string{"x_total"}},
		{`rate(a[5m]) or vector(0)`, []string{"a"}},
	} {
		if diff := cmp.Diff(tc.want, metricNames(tc.expr)); diff != "" {
			t.Errorf("metricNames(%q) (-want +got):\n%s", tc.expr, diff)
		}
	}
}

// known reports whether the dashboards may read the series name, and
// the metric it belongs to.
func known(series string) (string, bool) {
	lookup := func(n string) (kind, bool) {
		if k, ok := bosunMetrics[n]; ok {
			return k, true
		}
		k, ok := controllerRuntime[n]
		return k, ok
	}
	if k, ok := lookup(series); ok && k == plain {
		return series, true
	}
	for _, suffix := range []string{"_bucket", "_count", "_sum"} {
		base, ok := strings.CutSuffix(series, suffix)
		if !ok {
			continue
		}
		if k, ok := lookup(base); ok && k == histogram {
			return base, true
		}
	}
	return "", false
}

func dashboards(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "grafana", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no dashboards in docs/grafana")
	}
	return files
}

func TestDashboards(t *testing.T) {
	for _, file := range dashboards(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var d model
			if err := json.Unmarshal(data, &d); err != nil {
				t.Fatalf("not a JSON document: %v", err)
			}
			checkShape(t, d)

			used := map[string]bool{}
			use := func(where, expr string) {
				names := metricNames(expr)
				if len(names) == 0 {
					t.Errorf("%s: expression %q reads no metric", where, expr)
				}
				for _, n := range names {
					m, ok := known(n)
					if !ok {
						t.Errorf("%s: %q reads %s, which is neither a bosun metric nor one of controller-runtime's in the list", where, expr, n)
						continue
					}
					used[m] = true
				}
			}
			for _, p := range all(d.Panels) {
				for _, tg := range p.Targets {
					where := fmt.Sprintf("panel %d %q, target %s", p.ID, p.Title, tg.RefID)
					use(where, tg.Expr)
					if !strings.Contains(tg.Expr, `controller=~"$controller"`) {
						t.Errorf("%s: %q does not select the controllers of the variable controller", where, tg.Expr)
					}
				}
			}
			for _, v := range d.Templating.List {
				if v.Type != "query" {
					continue
				}
				q := v.query()
				if m := labelValues.FindStringSubmatch(q); m != nil {
					q = m[1]
				}
				use("variable "+v.Name, q)
			}
			for n := range bosunMetrics {
				if !used[n] {
					t.Errorf("no panel shows %s", n)
				}
			}
		})
	}
}

// checkShape checks what Grafana needs to import the dashboard and what
// its panels rely on.
func checkShape(t *testing.T, d model) {
	t.Helper()
	if d.UID == "" || d.Title == "" || d.SchemaVersion == 0 {
		t.Errorf("uid %q, title %q, schemaVersion %d: want all three", d.UID, d.Title, d.SchemaVersion)
	}
	vars := map[string]variable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if ds := vars["datasource"]; ds.Type != "datasource" || string(ds.Query) != `"prometheus"` {
		t.Errorf("variable datasource = %+v, want a Prometheus data source variable", ds)
	}
	const controllers = "label_values(bosun_step_duration_seconds_count, controller)"
	if c := vars["controller"]; c.Type != "query" || c.query() != controllers {
		t.Errorf("variable controller: type %q, query %q; want a query variable %q", c.Type, c.query(), controllers)
	}
	ids := map[int]string{}
	for _, p := range all(d.Panels) {
		if prev, dup := ids[p.ID]; dup || p.ID == 0 {
			t.Errorf("panel %q has id %d, which is zero or %q's too", p.Title, p.ID, prev)
		}
		ids[p.ID] = p.Title
		if p.Type == "" || p.Title == "" || p.GridPos.W == 0 || p.GridPos.H == 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %d %q: type %q, gridPos %+v; want a type, a title and a place in the 24 columns", p.ID, p.Title, p.Type, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if !strings.Contains(string(p.Datasource), "${datasource}") {
			t.Errorf("panel %d %q: data source %s, want ${datasource}", p.ID, p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %d %q has no queries", p.ID, p.Title)
		}
	}
}
