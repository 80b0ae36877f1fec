package operator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/bosunkit/bosun/shard"
)

// dryRunGuard is the floor under every client of a --plan run: whatever
// the operator builds from the manager's rest.Config or HTTP client (a
// migration's client of its own, a client-go clientset, a runnable that
// writes), each write it sends to the API server goes as a dry run, and
// one the API server cannot dry-run is refused. The plan's own client
// asks for dry runs itself; the guard counts the others, which the plan
// reports, since their changes would have been real.
type dryRunGuard struct {
	mu sync.Mutex
	// forced are the writes the guard made dry runs, "VERB path".
	forced []string
	// refused are the writes it refused.
	refused []string
}

// config returns a copy of cfg whose transport goes through the guard.
func (g *dryRunGuard) config(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return dryRunTransport{next: rt, guard: g} })
	return cfg
}

// report writes what the guard did to w, if anything.
func (g *dryRunGuard) report(w io.Writer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.forced) > 0 {
		fmt.Fprintf(w, "writes of other clients of the operator, sent as dry runs: %d\n", len(g.forced))
		for _, f := range g.forced {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
	if len(g.refused) > 0 {
		fmt.Fprintf(w, "writes of other clients of the operator, refused (no dry run exists for them): %d\n", len(g.refused))
		for _, f := range g.refused {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
}

// note records the write method path in list.
func (g *dryRunGuard) note(list *[]string, method, path string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	*list = append(*list, method+" "+path)
}

// dryRunTransport is the guard's http.RoundTripper.
type dryRunTransport struct {
	next  http.RoundTripper
	guard *dryRunGuard
}

// connectSubresources are the subresources whose writes open a stream to
// a container or a proxy: the API server has no dry run for them.
var connectSubresources = []string{"exec", "attach", "portforward", "proxy"}

func (t dryRunTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return t.next.RoundTrip(req)
	}
	if connects(req.URL.Path) {
		t.guard.note(&t.guard.refused, req.Method, req.URL.Path)
		return nil, fmt.Errorf("--plan: %s %s refused: the API server has no dry run for it", req.Method, req.URL.Path)
	}
	q := req.URL.Query()
	hasBody := req.Method == http.MethodDelete && req.Body != nil && req.Body != http.NoBody
	if slices.Contains(q["dryRun"], "All") && !hasBody {
		return t.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	if hasBody {
		// The API server reads a delete's options from its body when it
		// has one, and the query then counts for nothing.
		if err := dryRunBody(req); err != nil {
			t.guard.note(&t.guard.refused, req.Method, req.URL.Path)
			return nil, fmt.Errorf("--plan: %s %s refused: %w", req.Method, req.URL.Path, err)
		}
	}
	if slices.Contains(q["dryRun"], "All") {
		// The plan's own delete, its body now saying so too.
		return t.next.RoundTrip(req)
	}
	t.guard.note(&t.guard.forced, req.Method, req.URL.Path)
	q.Set("dryRun", "All")
	req.URL.RawQuery = q.Encode()
	return t.next.RoundTrip(req)
}

// connects reports whether path, of a request to the API server, names a
// subresource that opens a stream to a container or passes the request on
// (connectSubresources), at any depth: /api/v1/nodes/n/proxy/metrics too.
func connects(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	return len(parts) >= 3 && slices.Contains(connectSubresources, parts[2])
}

// dryRunBody sets dryRun ["All"] in the DeleteOptions that are the body
// of req, a delete, sent as JSON or protobuf, and sends them as JSON.
func dryRunBody(req *http.Request) error {
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		return err
	}
	_ = req.Body.Close()
	opts := &metav1.DeleteOptions{}
	if len(bytes.TrimSpace(raw)) > 0 {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
		if err != nil {
			return fmt.Errorf("its options cannot be read, and so not made a dry run: %w", err)
		}
		var ok bool
		if opts, ok = obj.(*metav1.DeleteOptions); !ok {
			return fmt.Errorf("its body is a %T, not DeleteOptions", obj)
		}
	}
	opts.DryRun = []string{metav1.DryRunAll}
	opts.APIVersion, opts.Kind = "meta.k8s.io/v1", "DeleteOptions"
	body, err := json.Marshal(opts)
	if err != nil {
		return err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.Header.Set("Content-Type", "application/json")
	return nil
}

// unshard widens the label selectors of o that limit a kind to one shard
// member's share (package shard: keys under shard.LabelPrefix, such as
// shard.bosun.dev/<ring> and <ring>.in.shard.bosun.dev/<member>): a plan
// covers every object of the operator's kinds, whichever member holds it.
// The other requirements of each selector are kept.
func unshard(o *cache.Options) {
	o.DefaultLabelSelector = withoutShardLabels(o.DefaultLabelSelector)
	for obj, by := range o.ByObject {
		by.Label = withoutShardLabels(by.Label)
		o.ByObject[obj] = by
	}
}

// withoutShardLabels returns sel without its requirements on shard keys;
// nil when none is left.
func withoutShardLabels(sel labels.Selector) labels.Selector {
	if sel == nil {
		return nil
	}
	reqs, selectable := sel.Requirements()
	if !selectable {
		return sel
	}
	kept := labels.NewSelector()
	n := 0
	for _, r := range reqs {
		if strings.Contains(r.Key(), shard.LabelPrefix) {
			continue
		}
		kept = kept.Add(r)
		n++
	}
	if n == 0 {
		return nil
	}
	return kept
}
