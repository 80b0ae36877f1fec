package debugpage

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
)

func report(controller, name string, i int) bosun.PassReport {
	return bosun.PassReport{
		Controller: controller,
		Object:     types.NamespacedName{Namespace: "ns", Name: name},
		Trigger:    bosun.Trigger{Kind: "Requeue"},
		Start:      time.Unix(int64(i), 0),
		Steps:      []bosun.StepReport{{Name: fmt.Sprintf("step-%d", i), Phase: "do"}},
	}
}

func TestRecorderBounds(t *testing.T) {
	for _, tc := range []struct {
		name        string
		opts        Options
		passes      []string // object names, in pass order
		wantObjects []string // most recent first
		wantKept    map[string][]string
	}{
		{
			name:        "newest first, per object bound",
			opts:        Options{PassesPerObject: 2},
			passes:      []string{"a", "a", "b", "a"},
			wantObjects: []string{"ns/a", "ns/b"},
			wantKept:    map[string][]string{"a": {"step-3", "step-1"}, "b": {"step-2"}},
		},
		{
			name:        "least recently reconciled object evicted",
			opts:        Options{ObjectsPerController: 2},
			passes:      []string{"a", "b", "a", "c"},
			wantObjects: []string{"ns/c", "ns/a"},
			wantKept:    map[string][]string{"a": {"step-2", "step-0"}, "b": nil, "c": {"step-3"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(tc.opts)
			for i, name := range tc.passes {
				p.ObservePass(context.Background(), report("r", name, i))
			}
			objs, _ := p.objects("r")
			var gotObjects []string
			for _, o := range objs {
				gotObjects = append(gotObjects, o.Object.String())
			}
			if diff := cmp.Diff(tc.wantObjects, gotObjects); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			got := map[string][]string{}
			for name := range tc.wantKept {
				var steps []string
				for _, ps := range p.passes("r", types.NamespacedName{Namespace: "ns", Name: name}) {
					steps = append(steps, ps.Steps[0].Name)
				}
				got[name] = steps
			}
			if diff := cmp.Diff(tc.wantKept, got); diff != "" {
				t.Errorf("passes kept (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecorderCopiesAndConcurrency(t *testing.T) {
	p := New(Options{PassesPerObject: 5, ObjectsPerController: 10})
	r := report("r", "a", 0)
	p.ObservePass(context.Background(), r)
	r.Steps[0].Name = "changed"
	if got := p.passes("r", r.Object)[0].Steps[0].Name; got != "step-0" {
		t.Errorf("the kept report changed with the caller's: step %q", got)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				p.ObservePass(context.Background(), report("r", fmt.Sprintf("o%d", (g*200+i)%30), i))
				p.objects("r")
			}
		})
	}
	wg.Wait()
	objs, passes := p.objects("r")
	if len(objs) != 10 || passes != 1601 {
		t.Errorf("kept %d objects after %d passes; want 10 after 1601", len(objs), passes)
	}
	for _, o := range objs {
		if o.Passes > 5 {
			t.Errorf("%s keeps %d passes, over the bound of 5", o.Object, o.Passes)
		}
	}
}

func TestHandlerEscapesAndJSON(t *testing.T) {
	p := New(Options{})
	evil := `<script>alert(1)</script>`
	p.ObservePass(context.Background(), bosun.PassReport{
		Controller: "r",
		Object:     types.NamespacedName{Namespace: "ns", Name: "a"},
		Trigger:    bosun.Trigger{Kind: "Watch", Source: "For", Event: "Update"},
		Start:      time.Now(),
		Duration:   time.Millisecond,
		Result:     ctrl.Result{RequeueAfter: time.Minute},
		Error:      evil,
		Steps:      []bosun.StepReport{{Name: "deploy", Phase: "do", Duration: time.Millisecond, Error: evil}},
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Failed", Message: evil}},
	})
	srv := httptest.NewServer(p)
	defer srv.Close()
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		return string(body)
	}
	for _, path := range []string{Path, Path + "controller?name=r", Path + "object?controller=r&namespace=ns&name=a"} {
		body := get(path)
		if strings.Contains(body, evil) {
			t.Errorf("GET %s: the page holds unescaped markup from a report", path)
		}
	}
	obj := get(Path + "object?controller=r&namespace=ns&name=a")
	for _, want := range []string{"Watch Update (For)", "deploy", "&lt;script&gt;"} {
		if !strings.Contains(obj, want) {
			t.Errorf("the object's page lacks %q", want)
		}
	}
	var passes []bosun.PassReport
	if err := json.Unmarshal([]byte(get(Path+"object?controller=r&namespace=ns&name=a&format=json")), &passes); err != nil {
		t.Fatal(err)
	}
	if len(passes) != 1 || passes[0].Steps[0].Name != "deploy" || passes[0].Trigger.Kind != "Watch" {
		t.Errorf("JSON passes = %+v", passes)
	}
	resp, err := http.Get(srv.URL + Path + "nothing")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET an unknown page: %s, want 404", resp.Status)
	}
}

func TestDrawGraph(t *testing.T) {
	g := bosun.Graph{Name: "shop", Steps: []bosun.GraphStep{
		{Name: "config<map>", Phases: []string{"do"}},
		{Name: "both", Kind: "Join", Phases: []string{"do"}, Steps: []bosun.GraphStep{
			{Name: "deployment", Phases: []string{"do", "cleanup"}, Conditions: []string{"Available"}},
			{Name: "service", Phases: []string{"do"}},
		}},
	}}
	svg := string(drawGraph(g))
	for _, want := range []string{"<svg", "config&lt;map&gt;", ">Join<", "deployment", "do · cleanup — owns Available", "service"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the drawing lacks %q:\n%s", want, svg)
		}
	}
	if strings.Contains(svg, "config<map>") {
		t.Errorf("a step name went into the SVG unescaped")
	}
}
