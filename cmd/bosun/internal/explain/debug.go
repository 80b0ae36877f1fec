package explain

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/debugpage"
)

const (
	// debugTimeout bounds each read of the debug page.
	debugTimeout = 5 * time.Second
	// debugPasses is how many passes of each reconciler a Report keeps.
	debugPasses = 3
	// maxDebugBody bounds what is read of one answer of the page.
	maxDebugBody = 8 << 20
)

// DebugPageURL returns the address of the debug page of the metrics
// server at base: base with debugpage.Path, unless its path already ends
// with it. base must be an http or https URL with a host.
func DebugPageURL(base string) (*url.URL, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http or https address of a metrics server, such as http://127.0.0.1:8080", base)
	}
	p := strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(p+"/", debugpage.Path) {
		p += strings.TrimSuffix(debugpage.Path, "/")
	}
	u.Path, u.RawPath = p+"/", ""
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// reconcilerInfo is what the page's index says of a reconciler.
type reconcilerInfo struct {
	Name string
	GVK  schema.GroupVersionKind
}

// readDebugPage reads, from the debug page at opts.DebugURL, the last
// passes over the object at key of the reconcilers of kind gk.
func readDebugPage(ctx context.Context, opts Options, gk schema.GroupKind, key types.NamespacedName) *Debug {
	d := &Debug{URL: opts.DebugURL}
	page, err := DebugPageURL(opts.DebugURL)
	if err != nil {
		d.Err = err.Error()
		return d
	}
	d.URL = page.String()
	client := opts.HTTPClient
	if client == nil {
		if client, err = debugClient(page, opts.Config); err != nil {
			d.Err = err.Error()
			return d
		}
	}
	var index []reconcilerInfo
	if err := getJSON(ctx, client, page, url.Values{}, &index); err != nil {
		d.Err = err.Error()
		return d
	}
	for _, ri := range index {
		if ri.GVK.Group != gk.Group || ri.GVK.Kind != gk.Kind {
			continue
		}
		q := url.Values{"controller": {ri.Name}, "namespace": {key.Namespace}, "name": {key.Name}}
		var passes []bosun.PassReport
		if err := getJSON(ctx, client, page.JoinPath("object"), q, &passes); err != nil {
			d.Err = err.Error()
			return d
		}
		d.Reconcilers = append(d.Reconcilers, ReconcilerPasses{Name: ri.Name, Passes: passes[:min(len(passes), debugPasses)]})
	}
	if len(d.Reconcilers) == 0 {
		for _, ri := range index {
			d.Listed = append(d.Listed, ri.Name)
		}
	}
	return d
}

// getJSON reads u with query q and format=json into v.
func getJSON(ctx context.Context, client *http.Client, u *url.URL, q url.Values, v any) error {
	ctx, cancel := context.WithTimeout(ctx, debugTimeout)
	defer cancel()
	q.Set("format", "json")
	target := *u
	target.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", target.Redacted(), resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxDebugBody)).Decode(v); err != nil {
		return fmt.Errorf("GET %s: reading the answer: %w", target.Redacted(), err)
	}
	return nil
}

// debugClient returns the client that reads the page at u: over https it
// sends the credentials of cfg (the metrics server authenticates bearer
// tokens) and, on a loopback address, accepts the server's certificate
// unverified, since the metrics server serves a self-signed one unless
// given another and a port-forward ends there. Over http it sends no
// credentials.
//
// The client stays on u's scheme and host: it refuses a redirect off them,
// and sends the credentials to https on u's host only, whatever the request.
// The transport that client-go builds from cfg sets the Authorization header
// on every request it carries, a redirect's included, so the redirect to
// plain http or to another host that http.Client follows by default would
// get the token.
func debugClient(u *url.URL, cfg *rest.Config) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	client := &http.Client{Transport: tr, Timeout: debugTimeout, CheckRedirect: sameOrigin(u)}
	if u.Scheme != "https" {
		return client, nil
	}
	if loopback(u.Hostname()) {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // only to a loopback address: see above
	}
	if cfg == nil {
		return client, nil
	}
	rt, err := rest.HTTPWrappersForConfig(cfg, tr)
	if err != nil {
		return nil, fmt.Errorf("the credentials of the kubeconfig: %w", err)
	}
	client.Transport = &credentialsFor{host: u.Host, authed: rt, bare: tr}
	return client, nil
}

// errOffOrigin: the debug page redirected to another scheme or host.
var errOffOrigin = errors.New("the debug page is read from the scheme and host asked for only, which carry the kubeconfig's credentials")

// sameOrigin returns the redirect policy of a client of the page at u: a
// redirect is followed on u's scheme and host only, ten at most as
// http.Client's own policy.
func sameOrigin(u *url.URL) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != u.Scheme || req.URL.Host != u.Host {
			return fmt.Errorf("refusing a redirect from %s://%s to %s://%s: %w", u.Scheme, u.Host, req.URL.Scheme, req.URL.Host, errOffOrigin)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// credentialsFor sends a request through authed, which adds the
// kubeconfig's credentials, when it goes to host over https, and through
// bare otherwise.
type credentialsFor struct {
	host         string
	authed, bare http.RoundTripper
}

func (c *credentialsFor) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "https" && req.URL.Host == c.host {
		return c.authed.RoundTrip(req)
	}
	return c.bare.RoundTrip(req)
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
