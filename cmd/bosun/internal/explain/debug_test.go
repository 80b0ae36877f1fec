package explain

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/debugpage"
)

func TestDebugPageURL(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{in: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080/debug/bosun/"},
		{in: "https://localhost:8443/", want: "https://localhost:8443/debug/bosun/"},
		{in: "https://localhost:8443/debug/bosun", want: "https://localhost:8443/debug/bosun/"},
		{in: "http://op.example.com/proxy/debug/bosun/?format=json", want: "http://op.example.com/proxy/debug/bosun/"},
		{in: "http://host/metrics-proxy", want: "http://host/metrics-proxy/debug/bosun/"},
		{in: "localhost:8443", err: `"localhost:8443" is not an http or https address of a metrics server, such as http://127.0.0.1:8080`},
		{in: "ftp://host", err: `"ftp://host" is not an http or https address of a metrics server, such as http://127.0.0.1:8080`},
	}
	for _, tt := range tests {
		u, err := DebugPageURL(tt.in)
		switch {
		case tt.err != "":
			if err == nil || err.Error() != tt.err {
				t.Errorf("DebugPageURL(%q): error %v, want %q", tt.in, err, tt.err)
			}
		case err != nil:
			t.Errorf("DebugPageURL(%q): %v", tt.in, err)
		case u.String() != tt.want:
			t.Errorf("DebugPageURL(%q) = %s, want %s", tt.in, u, tt.want)
		}
	}
}

// TestReadDebugPage reads the passes of one object from a debug page that
// observed them: the reconcilers of the object's kind only, newest first,
// at most debugPasses of each.
func TestReadDebugPage(t *testing.T) {
	page := debugpage.New(debugpage.Options{})
	widget := schema.GroupKind{Group: "test.bosun.dev", Kind: "Widget"}
	key := types.NamespacedName{Namespace: "demo", Name: "w"}
	start := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	for i := range 5 {
		page.ObservePass(t.Context(), bosun.PassReport{
			Controller: "widgets", Object: key, Trigger: bosun.Trigger{Kind: "Requeue"},
			Start: start.Add(time.Duration(i) * time.Second), Error: "boom",
			Steps: []bosun.StepReport{{Name: "cleanup", Phase: "cleanup", Error: "boom"}},
		})
	}
	page.ObservePass(t.Context(), bosun.PassReport{Controller: "gadgets", Object: key, Start: start})
	// The index gives the kinds of the reconcilers a Builder set up on a
	// manager; without one, this test gives them itself, and the page
	// answers the rest. A reconciler known from its passes only has no
	// kind and is not the object's.
	index := `[{"Name": "widgets", "GVK": {"Group": "test.bosun.dev", "Version": "v1", "Kind": "Widget"}}, {"Name": "gadgets", "GVK": {}}]`
	mux := http.NewServeMux()
	mux.Handle(debugpage.Path, page)
	mux.HandleFunc(debugpage.Path+"{$}", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(index)) })
	srv := httptest.NewServer(http.StripPrefix("/metrics-proxy", mux))
	defer srv.Close()

	d := readDebugPage(t.Context(), Options{DebugURL: srv.URL + "/metrics-proxy"}, widget, key)
	if d.Err != "" {
		t.Fatalf("readDebugPage: %s", d.Err)
	}
	if d.URL != srv.URL+"/metrics-proxy"+debugpage.Path {
		t.Errorf("URL %s", d.URL)
	}
	var starts []time.Time
	for _, rp := range d.Reconcilers {
		if rp.Name != "widgets" {
			t.Errorf("reconciler %s is read, which is not of the kind", rp.Name)
		}
		for _, ps := range rp.Passes {
			starts = append(starts, ps.Start)
			if ps.Error != "boom" || len(ps.Steps) != 1 || ps.Steps[0].Name != "cleanup" {
				t.Errorf("pass %+v, want the error and the step observed", ps)
			}
		}
	}
	want := []time.Time{start.Add(4 * time.Second), start.Add(3 * time.Second), start.Add(2 * time.Second)}
	if diff := cmp.Diff(want, starts, cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("pass starts (-want +got):\n%s", diff)
	}

	gadget := schema.GroupKind{Group: "test.bosun.dev", Kind: "Gadget"}
	d = readDebugPage(t.Context(), Options{DebugURL: srv.URL + "/metrics-proxy/"}, gadget, key)
	if diff := cmp.Diff(&Debug{URL: srv.URL + "/metrics-proxy" + debugpage.Path, Listed: []string{"widgets", "gadgets"}}, d); diff != "" {
		t.Errorf("no reconciler of the kind (-want +got):\n%s", diff)
	}

	d = readDebugPage(t.Context(), Options{DebugURL: srv.URL + "/elsewhere"}, widget, key)
	if !strings.HasSuffix(d.Err, ": 404 Not Found") {
		t.Errorf("a page that is not there: %+v, want a 404", d)
	}
}

// TestDebugClient: over https to a loopback address the client takes the
// operator's self-signed certificate and sends the kubeconfig's token;
// over http it sends nothing.
func TestDebugClient(t *testing.T) {
	var gotAuth []string
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = append(gotAuth, r.Header.Get("Authorization"))
		_, _ = w.Write([]byte("[]"))
	})
	cfg := &rest.Config{BearerToken: "s3cret"}
	for _, srv := range []*httptest.Server{httptest.NewTLSServer(handler), httptest.NewServer(handler)} {
		defer srv.Close()
		u, err := url.Parse(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		client, err := debugClient(u, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var index []reconcilerInfo
		if err := getJSON(context.Background(), client, u, url.Values{}, &index); err != nil {
			t.Errorf("%s: %v", srv.URL, err)
		}
	}
	if diff := cmp.Diff([]string{"Bearer s3cret", ""}, gotAuth); diff != "" {
		t.Errorf("Authorization headers, https then http (-want +got):\n%s", diff)
	}
	if loopback("example.com") || !loopback("localhost") || !loopback("::1") || !loopback("127.0.0.2") {
		t.Error("loopback misjudges an address")
	}
}
