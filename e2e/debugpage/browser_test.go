package debugpage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/debugpage"
	"github.com/bosunkit/bosun/internal/testapi"
)

// double sets a Widget's result to twice its value.
type double struct{}

func (double) Name() string { return "double" }

func (double) Do(_ context.Context, p *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	p.Object.Status.Result = 2 * p.Object.Spec.Value
	return ctrl.Result{}, nil
}

// chromium finds a Chromium or Chrome binary: BOSUN_CHROMIUM, else one on
// the PATH.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BOSUN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium found for the browser test of the debug page: run `make chromium` " +
		"(it installs Debian's chromium package) or set BOSUN_CHROMIUM to a Chromium or Chrome binary")
	return ""
}

// TestDebugPageInBrowser: a real headless Chromium loads the debug page of
// a running reconciler, sees its graph drawn, follows the links to an
// object that was just reconciled and sees that pass: its trigger and its
// step.
func TestDebugPageInBrowser(t *testing.T) {
	browser := chromium(t)
	cpOpts, err := testapi.ControlPlaneOptions()
	if err != nil {
		t.Fatal(err)
	}
	cp := bosuntest.Start(t, cpOpts)
	ns := bosuntest.Namespace(t, cp.Client)
	var page *debugpage.Page
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		page = debugpage.Register(mgr)
		r := &bosun.Reconciler[*testapi.Widget]{Name: "doubler", Steps: []bosun.Step[*testapi.Widget]{double{}}}
		inNamespace := builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == ns }))
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).For(&testapi.Widget{}, inNamespace).Complete(r)
	})
	mux := http.NewServeMux()
	mux.Handle(debugpage.Path, page)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 4}}
	if err := cp.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+debugpage.Path+"object?controller=doubler&namespace="+ns+"&name=w&format=json", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var passes []bosun.PassReport
		if err := json.NewDecoder(resp.Body).Decode(&passes); err != nil {
			return err
		}
		if len(passes) == 0 {
			return errors.New("no pass of w on the page yet")
		}
		return nil
	})

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelTimeout()

	// eval evaluates a JavaScript expression on the page open in ctx.
	eval := func(js string) any {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
		if err != nil {
			t.Fatalf("evaluating %s in Chromium: %v", js, err)
		}
		return v
	}
	open := func(url string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
			t.Fatalf("opening %s in Chromium: %v", url, err)
		}
	}

	open(srv.URL + debugpage.Path)
	title, _ := eval(`document.querySelector('#r-doubler h2').textContent`).(string)
	if !strings.Contains(title, "doubler") || !strings.Contains(title, "Widget") {
		t.Errorf("the reconciler's heading is %q; want its name and kind", title)
	}
	graphWidth, _ := eval(`document.querySelector('#r-doubler svg.graph').getBoundingClientRect().width`).(float64)
	stepWidth, _ := eval(`document.querySelector('#r-doubler svg.graph g.step rect').getBoundingClientRect().width`).(float64)
	label, _ := eval(`document.querySelector('#r-doubler svg.graph g.step text').textContent`).(string)
	if graphWidth <= 0 || stepWidth <= 0 || !strings.Contains(label, "double") {
		t.Errorf("the graph is drawn %v pixels wide, its step %v pixels wide and labelled %q; want a visible drawing of the step double",
			graphWidth, stepWidth, label)
	}

	// Follow the links: the reconciler's page, then the object's.
	href, _ := eval(`document.querySelector('#r-doubler h2 a').href`).(string)
	open(href)
	href, _ = eval(`document.querySelector('table.objects a').href`).(string)
	open(href)
	// Passes are newest first: the last section is the first pass.
	trigger, _ := eval(`Array.from(document.querySelectorAll('section.pass .trigger')).pop().textContent`).(string)
	step, _ := eval(`document.querySelector('section.pass td.step').textContent`).(string)
	result, _ := eval(`document.querySelector('section.pass .result').textContent`).(string)
	if want := fmt.Sprintf("Watch Create test.bosun.dev/v1, Kind=Widget %s/w (For)", ns); trigger != want {
		t.Errorf("the first pass's trigger reads %q, want %q", trigger, want)
	}
	if step != "double" || result != "done" {
		t.Errorf("the newest pass shows step %q with result %q; want double, done", step, result)
	}
}
