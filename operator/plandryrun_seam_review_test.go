package operator

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// seamRecorder is the API server behind a dryRunTransport: it records what
// reaches it.
type seamRecorder struct{ got []*http.Request }

func (r *seamRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = append(r.got, req)
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("{}")), Request: req}, nil
}

// TestSeamReviewPlanGuardRefusesProxyWithAPath: under --plan, a write
// that an operator's own client sends through the API server's proxy to a
// Service, Pod or Node (an admin API of the managed application, reached
// as services/<name>/proxy/<path>) has no dry run: the API server hands
// the request, dryRun query and all, to the application, which acts on
// it. The guard refuses ".../proxy" only when it is the last segment.
func TestSeamReviewPlanGuardRefusesProxyWithAPath(t *testing.T) {
	for _, path := range []string{
		"/api/v1/namespaces/db/services/postgres-admin:8080/proxy/api/v1/users",
		"/api/v1/namespaces/db/pods/postgres-0/proxy/admin/reset",
		"/api/v1/nodes/node-1/proxy/configz",
	} {
		var g dryRunGuard
		next := &seamRecorder{}
		tr := dryRunTransport{next: next, guard: &g}
		req, _ := http.NewRequest(http.MethodPost, "https://api.example"+path, strings.NewReader(`{"name":"alice"}`))
		resp, err := tr.RoundTrip(req)
		if resp != nil {
			_ = resp.Body.Close()
		}
		if err == nil || len(next.got) > 0 {
			t.Errorf("POST %s under --plan: reached the API server (err %v, sent %d), which proxies it to the application as a real write; want it refused like POST .../proxy", path, err, len(next.got))
		}
	}
}

// TestSeamReviewPlanGuardDeleteWithBodyAndQuery: the API server reads a
// delete's options from its body when it has one and ignores the query
// then; the guard passes any request whose query says dryRun=All, so a
// delete that sends dryRun in the query and DeleteOptions (a propagation
// policy) in the body is a real delete.
func TestSeamReviewPlanGuardDeleteWithBodyAndQuery(t *testing.T) {
	var g dryRunGuard
	next := &seamRecorder{}
	tr := dryRunTransport{next: next, guard: &g}
	req, _ := http.NewRequest(http.MethodDelete, "https://api.example/api/v1/namespaces/db/configmaps/c?dryRun=All",
		strings.NewReader(`{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground"}`))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return // refused: nothing deleted
	}
	_ = resp.Body.Close()
	if len(next.got) != 1 {
		t.Fatalf("sent %d requests", len(next.got))
	}
	body, _ := io.ReadAll(next.got[0].Body)
	if !strings.Contains(string(body), `"dryRun"`) {
		t.Errorf("DELETE ?dryRun=All with body %s reached the API server, which reads the body and ignores the query: a real delete under --plan", body)
	}
}
