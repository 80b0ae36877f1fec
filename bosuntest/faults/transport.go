package faults

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ErrCrashed is the error every call of a process gets once it has died.
var ErrCrashed = errors.New("faults: the process has crashed")

// ErrDeleteRefused is what an external delete returns while
// Process.FailDeletes holds deletes back.
var ErrDeleteRefused = errors.New("faults: the external system refuses deletes")

// errResponseLost is (wrapped in) the error of a call that took effect and
// whose answer the kit threw away. It wraps io.ErrUnexpectedEOF, which is
// what a connection that breaks mid-answer gives.
var errResponseLost = fmt.Errorf("faults: the connection broke before the answer arrived: %w", io.ErrUnexpectedEOF)

// conflictMessage is the API server's message for a write with a stale
// resourceVersion.
const conflictMessage = "the object has been modified; please apply your changes to the latest version and try again"

// transport passes a process's API requests to the API server, or not,
// under its plan.
type transport struct {
	p    *Process
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (rt *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	p := rt.p
	if p.dead() {
		return nil, ErrCrashed
	}
	info, ok := parseRequest(req)
	if !ok {
		return rt.next.RoundTrip(req)
	}
	stream := ""
	if info.verb == verbWatch && (p.plan.Watch.active() || p.plan.Stale.Lag > 0) {
		stream = streamOf(req)
		// The kit reads watch events, which it can only do in JSON.
		req = req.Clone(req.Context())
		req.Header.Set("Accept", jsonOnly(req.Header.Get("Accept")))
	}
	recorded := info.write() && !info.bookkeeping()
	if recorded {
		// The kit reads whom a write wrote from its answer, in JSON: a
		// write that asks for metadata only (the engine's status write)
		// would otherwise be answered in protobuf.
		req = req.Clone(req.Context())
		req.Header.Set("Accept", jsonOnly(req.Header.Get("Accept")))
	}
	fault, resp, err := rt.intercept(req, info, recorded)
	if resp != nil || err != nil {
		return resp, err
	}

	var precondition types.UID
	if recorded && info.verb == verbDelete {
		if precondition, err = uidPrecondition(req); err != nil {
			return nil, err
		}
	}
	if recorded {
		p.foreign.write(req, info, p.plan.Foreign, p.plan.Seed)
	}
	resp, err = rt.next.RoundTrip(req)
	call := Call{Verb: info.verb, Group: info.group, Resource: info.resourcePath(), Namespace: info.namespace, Name: info.name, Precondition: precondition}
	if p.dead() {
		// The process died while the request was out: whatever the
		// server did, nobody hears of it.
		if resp != nil {
			_ = resp.Body.Close()
		}
		if recorded {
			call.Status, call.AfterCrash, call.Err = statusOf(resp), true, ErrCrashed.Error()
			p.record(call)
		}
		return nil, ErrCrashed
	}
	if err != nil {
		if recorded {
			call.Err = err.Error()
			p.record(call)
		}
		return nil, err
	}
	if info.verb == verbWatch && resp.StatusCode == http.StatusOK {
		initial := req.URL.Query().Get("sendInitialEvents") == "true"
		resp.Body = watchBody(p, info, stream, initial, resp.Body)
		return resp, nil
	}
	if !recorded {
		return resp, nil
	}

	return rt.answered(resp, call, fault)
}

// jsonOnly returns accept, the Accept header of a request, with its JSON
// media types only, each with its parameters: a watch or a write of
// metadata only asks for
// application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1 and can
// decode nothing else. Plain JSON when it names none.
func jsonOnly(accept string) string {
	var kept []string
	for _, t := range strings.Split(accept, ",") {
		t = strings.TrimSpace(t)
		if media, _, _ := strings.Cut(t, ";"); strings.TrimSpace(media) == "application/json" {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return "application/json"
	}
	return strings.Join(kept, ",")
}

// answered records the write call, which the API server answered with
// resp, and applies to it what the plan says: a lost answer (fault), or a
// crash at the plan's crash point.
func (rt *transport) answered(resp *http.Response, call Call, fault Fault) (*http.Response, error) {
	p := rt.p
	body, rerr := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	call.Status = resp.StatusCode
	call.UID, call.Owners = identityOf(body)
	if rerr != nil {
		call.Err = rerr.Error()
		p.record(call)
		return nil, fmt.Errorf("faults: reading an answer: %w", rerr)
	}
	if resp.StatusCode >= 300 {
		call.Err = http.StatusText(resp.StatusCode)
	}
	if fault == ResponseLost {
		call.Fault, call.Err = ResponseLost, errResponseLost.Error()
		p.record(call)
		return nil, errResponseLost
	}
	if p.record(call) {
		if p.plan.Crash.During {
			p.Crash()
			return nil, errResponseLost
		}
		p.Crash()
	}
	return resp, nil
}

// uidPrecondition returns the UID precondition of the delete request req,
// if its body has one, and leaves the body to be read again.
func uidPrecondition(req *http.Request) (types.UID, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return "", nil
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return "", fmt.Errorf("faults: reading a delete request: %w", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	var opts metav1.DeleteOptions
	if json.Unmarshal(body, &opts) == nil && opts.Preconditions != nil && opts.Preconditions.UID != nil {
		return *opts.Preconditions.UID, nil
	}
	return "", nil
}

// intercept answers req when the plan does not let it through: the
// process is cut off, or a rule injects a fault that answers in the API
// server's place. Otherwise it returns the fault, if any, that acts on the
// request once it passed (ResponseLost).
func (rt *transport) intercept(req *http.Request, info requestInfo, recorded bool) (Fault, *http.Response, error) {
	p := rt.p
	call := Call{Verb: info.verb, Group: info.group, Resource: info.resourcePath(), Namespace: info.namespace, Name: info.name}
	if err := p.net.connect(req.Context(), p.deadCh); err != nil {
		if recorded {
			call.Err = err.Error()
			p.record(call)
		}
		return "", nil, err
	}
	fault := p.decide(info)
	switch fault {
	case Conflict, TooManyRequests, InternalError, Timeout:
		resp, err := rt.inject(req, info, fault)
		if recorded {
			call.Status, call.Fault, call.Err = statusOf(resp), fault, errText(resp, err)
			p.record(call)
		}
		return fault, resp, err
	}
	return fault, nil, nil
}

// inject answers req with fault without passing it on.
func (rt *transport) inject(req *http.Request, info requestInfo, fault Fault) (*http.Response, error) {
	switch fault {
	case Conflict:
		return statusResponse(req, http.StatusConflict, metav1.StatusReasonConflict,
			fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", qualified(info), info.name, conflictMessage), info), nil
	case TooManyRequests:
		resp := statusResponse(req, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests,
			"the server has received too many requests and has asked us to try again later", info)
		resp.Header.Set("Retry-After", "1")
		return resp, nil
	case InternalError:
		return statusResponse(req, http.StatusInternalServerError, metav1.StatusReasonInternalError,
			"Internal error occurred: injected by bosuntest/faults", info), nil
	default: // Timeout
		delay := rt.p.plan.TimeoutDelay
		if delay <= 0 {
			delay = time.Second
		}
		timer := time.NewTimer(delay)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
		return statusResponse(req, http.StatusGatewayTimeout, metav1.StatusReasonTimeout,
			"the server was unable to return a response in the time allotted, but may still be processing the request", info), nil
	}
}

// qualified names the resource of info as the API server does in messages:
// "widgets.testapi.bosun.dev".
func qualified(info requestInfo) string {
	if info.group == "" {
		return info.resource
	}
	return info.resource + "." + info.group
}

// statusResponse is an answer of the API server carrying a failure Status.
func statusResponse(req *http.Request, code int, reason metav1.StatusReason, msg string, info requestInfo) *http.Response {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  msg,
		Reason:   reason,
		Code:     int32(code),
		Details:  &metav1.StatusDetails{Name: info.name, Group: info.group, Kind: info.resource},
	}
	if reason == metav1.StatusReasonTooManyRequests {
		st.Details.RetryAfterSeconds = 1
	}
	body, _ := json.Marshal(st) // a Status always encodes
	return &http.Response{
		Status:        strconv.Itoa(code) + " " + http.StatusText(code),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}

// statusOf is resp's status code, zero without a response.
func statusOf(resp *http.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

// errText is what the caller of a request learns went wrong, "" for
// success.
func errText(resp *http.Response, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case resp != nil && resp.StatusCode >= 300:
		return http.StatusText(resp.StatusCode)
	}
	return ""
}

// identityOf reads metadata.uid and the owners' UIDs from a JSON object;
// empty for anything else.
func identityOf(body []byte) (types.UID, []types.UID) {
	var obj struct {
		Metadata struct {
			UID             types.UID `json:"uid"`
			OwnerReferences []struct {
				UID types.UID `json:"uid"`
			} `json:"ownerReferences"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &obj) != nil {
		return "", nil
	}
	var owners []types.UID
	for _, o := range obj.Metadata.OwnerReferences {
		owners = append(owners, o.UID)
	}
	return obj.Metadata.UID, owners
}
