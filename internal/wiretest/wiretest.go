// Package wiretest helps tests that stand between a client and the API
// server, on the wire: a RoundTripper from a function, and the API
// server's answer of a failure.
package wiretest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
