package debugpage

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
)

// Path is where a Page serves, and where it expects to be mounted.
const Path = "/debug/bosun/"

// Page is the debug page: a bosun.PassObserver that keeps the recent
// passes, and the http.Handler that shows them under Path. It is safe for
// concurrent use.
type Page struct {
	*recorder

	mu           sync.Mutex
	observations []*bosun.Observation
}

var _ bosun.PassObserver = &Page{}

// New returns a Page that keeps the history opts bounds. It shows the
// reconcilers of the Observations given to Observe.
func New(opts Options) *Page {
	return &Page{recorder: newRecorder(opts)}
}

// Register returns a Page, with the default bounds, observing the
// reconcilers set up on mgr, before or after the call. mgr must carry an
// Observation (bosun.Observation.Attach; the managers of package operator
// and of bosuntest.RunManager do).
func Register(mgr ctrl.Manager) *Page {
	p := New(Options{})
	p.Observe(bosun.ObservationOf(mgr))
	return p
}

// Observe makes the page record the passes of o's reconcilers and list
// them.
func (p *Page) Observe(o *bosun.Observation) {
	o.AddObserver(p)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.observations = append(p.observations, o)
}

// controllerInfo is a reconciler as the index lists it.
type controllerInfo struct {
	Name    string
	GVK     schema.GroupVersionKind
	Objects int
	Passes  int
	Graph   template.HTML `json:"-"`
	graph   bosun.Graph
}

// reconcilers lists the reconcilers of the observations, and those only
// known from their passes, by name.
func (p *Page) reconcilers() []controllerInfo {
	p.mu.Lock()
	obs := append([]*bosun.Observation(nil), p.observations...)
	p.mu.Unlock()
	seen := map[string]bool{}
	var out []controllerInfo
	for _, o := range obs {
		for _, ri := range o.Reconcilers() {
			if seen[ri.Name] {
				continue
			}
			seen[ri.Name] = true
			ci := controllerInfo{Name: ri.Name, GVK: ri.GVK}
			if ri.Graph != nil {
				ci.graph = ri.Graph()
				ci.Graph = drawGraph(ci.graph)
			}
			out = append(out, ci)
		}
	}
	for _, name := range p.controllers() {
		if !seen[name] {
			out = append(out, controllerInfo{Name: name})
		}
	}
	for i := range out {
		objs, passes := p.objects(out[i].Name)
		out[i].Objects, out[i].Passes = len(objs), passes
	}
	return out
}

// ServeHTTP serves the index at Path, a reconciler's objects at
// Path+"controller?name=N", an object's passes at
// Path+"object?controller=N&namespace=NS&name=M"; each as JSON with
// format=json.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rest := r.URL.Path
	if i := strings.Index(rest, Path); i >= 0 {
		rest = rest[i+len(Path):]
	}
	q := r.URL.Query()
	asJSON := q.Get("format") == "json"
	now := time.Now()
	switch rest {
	case "":
		rs := p.reconcilers()
		if asJSON {
			writeJSON(w, rs)
			return
		}
		render(w, indexTemplate, map[string]any{"Reconcilers": rs})
	case "controller":
		name := q.Get("name")
		objs, _ := p.objects(name)
		if asJSON {
			writeJSON(w, objs)
			return
		}
		rows := make([]objectRow, 0, len(objs))
		for _, o := range objs {
			rows = append(rows, newObjectRow(now, name, o))
		}
		render(w, controllerTemplate, map[string]any{"Name": name, "Objects": rows})
	case "object":
		name := q.Get("controller")
		key := types.NamespacedName{Namespace: q.Get("namespace"), Name: q.Get("name")}
		passes := p.passes(name, key)
		if asJSON {
			writeJSON(w, passes)
			return
		}
		rows := make([]passRow, 0, len(passes))
		for _, ps := range passes {
			rows = append(rows, newPassRow(now, ps))
		}
		render(w, objectTemplate, map[string]any{"Controller": name, "Object": key.String(), "Passes": rows})
	default:
		http.NotFound(w, r)
	}
}

// objectRow is a line of a reconciler's page.
type objectRow struct {
	Object, Link, Ago, Trigger, Result, Ready, Reason, Error string
	Passes                                                   int
}

func newObjectRow(now time.Time, controller string, o ObjectSummary) objectRow {
	row := objectRow{
		Object:  o.Object.String(),
		Link:    "object?" + objectQuery(controller, o.Object),
		Ago:     since(now, o.LastPass.Start),
		Trigger: o.LastPass.Trigger.String(),
		Result:  resultText(o.LastPass),
		Error:   o.LastPass.Error,
		Passes:  o.Passes,
	}
	if c := conditions.Find(o.LastPass.Conditions, conditions.TypeReady); c != nil {
		row.Ready, row.Reason = string(c.Status), c.Reason
	}
	return row
}

// objectQuery is the query of an object's page.
func objectQuery(controller string, key types.NamespacedName) string {
	return url.Values{"controller": {controller}, "namespace": {key.Namespace}, "name": {key.Name}}.Encode()
}

// passRow is a pass on an object's page.
type passRow struct {
	Start, Ago, Duration, Trigger, Result, Error, TraceID string
	Steps                                                 []stepRow
	Conditions                                            []metav1.Condition
}

// stepRow is a step of a pass.
type stepRow struct {
	Name, Phase, Duration, Result, Error string
}

func newPassRow(now time.Time, ps bosun.PassReport) passRow {
	row := passRow{
		Start:      ps.Start.Format(time.RFC3339Nano),
		Ago:        since(now, ps.Start),
		Duration:   ps.Duration.Round(time.Microsecond).String(),
		Trigger:    ps.Trigger.String(),
		Result:     resultText(ps),
		Error:      ps.Error,
		TraceID:    ps.TraceID,
		Conditions: ps.Conditions,
	}
	for _, s := range ps.Steps {
		sr := stepRow{Name: s.Name, Phase: s.Phase, Duration: s.Duration.Round(time.Microsecond).String(), Error: s.Error}
		switch {
		case s.Error != "":
			sr.Result = "error"
		case s.Result.RequeueAfter > 0:
			sr.Result = "requeue after " + s.Result.RequeueAfter.String()
		default:
			sr.Result = "ok"
		}
		row.Steps = append(row.Steps, sr)
	}
	return row
}

// resultText says how a pass ended.
func resultText(ps bosun.PassReport) string {
	switch {
	case ps.Error != "":
		return "error"
	case ps.Result.RequeueAfter > 0:
		return "requeue after " + ps.Result.RequeueAfter.Round(time.Millisecond).String()
	case ps.Result.Requeue: //nolint:staticcheck // Requeue is deprecated but still honoured by controller-runtime.
		return "requeue"
	default:
		return "done"
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func render(w http.ResponseWriter, t *template.Template, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := t.Execute(w, data); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}
