// Package wiretest helps tests that stand between a client and the API
// server, on the wire: a RoundTripper from a function, and the API
// server's answer of a failure.
package wiretest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/bosunkit/bosun/controlplane"
)

// RoundTripFunc adapts a function to http.RoundTripper.
type RoundTripFunc func(*http.Request) (*http.Response, error)

// RoundTrip calls f.
func (f RoundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Status returns the answer the API server gives req when it fails with
// code and reason: a metav1.Status in JSON, which clients read as the
// matching error (apierrors.IsConflict for 409 Conflict, and so on).
func Status(req *http.Request, code int, reason metav1.StatusReason) *http.Response {
	body, _ := json.Marshal(metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Reason:   reason,
		Code:     int32(code),
		Message:  "answered by the test: " + string(reason),
	})
	return &http.Response{
		StatusCode: code,
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(bytes.NewReader(body)),
		Request:    req,
	}
}

// ConflictThenHold answers the first PATCH of Path, once armed, with 409
// Conflict, as when the object changed since the client read it, and
// holds the next PATCH of Path until Release is closed (a minute at
// most), so that a test sees what the client made of the conflict before
// the client writes again.
type ConflictThenHold struct {
	// Path is the request's URL path, such as
	// /api/v1/namespaces/ns/configmaps/name.
	Path    string
	Release chan struct{}
	armed   atomic.Bool
	seen    atomic.Int32
}

// Arm starts watching for the PATCH of Path.
func (c *ConflictThenHold) Arm() { c.armed.Store(true) }

// Wrap sends the requests on through send, but for those c answers or
// holds.
func (c *ConflictThenHold) Wrap(send http.RoundTripper) http.RoundTripper {
	return RoundTripFunc(func(req *http.Request) (*http.Response, error) {
		if !c.armed.Load() || req.Method != http.MethodPatch || req.URL.Path != c.Path {
			return send.RoundTrip(req)
		}
		switch c.seen.Add(1) {
		case 1:
			return Status(req, http.StatusConflict, metav1.StatusReasonConflict), nil
		case 2:
			select {
			case <-c.Release:
			case <-time.After(time.Minute):
			}
		}
		return send.RoundTrip(req)
	})
}

// Through returns cp as seen through wrap: the same control plane, whose
// Config sends every request (of a manager's cache, client and API
// reader) through the RoundTripper wrap makes. cp's Client is not wrapped.
func Through(cp *controlplane.ControlPlane, wrap func(http.RoundTripper) http.RoundTripper) *controlplane.ControlPlane {
	cfg := rest.CopyConfig(cp.Config)
	cfg.Wrap(wrap)
	return &controlplane.ControlPlane{Config: cfg, Client: cp.Client, Scheme: cp.Scheme, BinaryDir: cp.BinaryDir, CRDs: cp.CRDs, WebhookServer: cp.WebhookServer}
}
