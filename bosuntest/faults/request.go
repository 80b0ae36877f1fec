package faults

import (
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// requestInfo is what the kit reads from the path and method of an API
// request.
type requestInfo struct {
	verb        string
	group       string
	resource    string
	subresource string
	namespace   string
	name        string
}

// parseRequest describes req; ok is false for paths that are not resources
// (discovery, /healthz, /version).
func parseRequest(req *http.Request) (info requestInfo, ok bool) {
	segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		segs = segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		info.group = segs[1]
		segs = segs[3:]
	default:
		return info, false
	}
	switch {
	case len(segs) >= 3 && segs[0] == "namespaces" && (len(segs) != 3 || (segs[2] != "status" && segs[2] != "finalize")):
		info.namespace, info.resource = segs[1], segs[2]
		segs = segs[3:]
	default:
		info.resource = segs[0]
		segs = segs[1:]
	}
	if len(segs) > 0 {
		info.name = segs[0]
	}
	if len(segs) > 1 {
		info.subresource = segs[1]
	}
	info.verb = verbOf(req, info.name != "")
	return info, info.verb != ""
}

// verbOf maps the method of req to the API verb.
func verbOf(req *http.Request, named bool) string {
	switch req.Method {
	case http.MethodGet:
		switch {
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			return verbWatch
		case named:
			return verbGet
		default:
			return verbList
		}
	case http.MethodPost:
		return verbCreate
	case http.MethodPut:
		return verbUpdate
	case http.MethodPatch:
		if strings.HasPrefix(req.Header.Get("Content-Type"), "application/apply-patch") {
			return verbApply
		}
		return verbPatch
	case http.MethodDelete:
		if named {
			return verbDelete
		}
		return verbDeleteCollection
	}
	return ""
}

// write reports whether the request may change something.
func (r requestInfo) write() bool {
	switch r.verb {
	case verbCreate, verbUpdate, verbPatch, verbApply, verbDelete, verbDeleteCollection:
		return true
	}
	return false
}

// bookkeeping reports whether the request is one the kit neither counts as
// a write nor crashes at: Events, which are written asynchronously and
// dropped under load, and Leases, which leader election renews on a timer.
func (r requestInfo) bookkeeping() bool {
	return r.resource == "events" || (r.resource == "leases" && r.group == "coordination.k8s.io")
}

// resourcePath is the resource with its subresource: "widgets/status".
func (r requestInfo) resourcePath() string {
	if r.subresource == "" {
		return r.resource
	}
	return r.resource + "/" + r.subresource
}

// Call is one mutating call a process made, to the API server or to an
// external system through a managed step's Client.
type Call struct {
	// Seq numbers the process's calls from 1, in the order they
	// returned.
	Seq int
	// External is true for a call of a managed step's Client.
	External bool
	// Verb is the API verb (see Rule.Verbs) or, for an external call,
	// the operation ("create" and the others).
	Verb string
	// Group is the API group of the resource; empty for the core group and
	// external calls.
	Group string
	// Resource is the API resource with its subresource ("widgets/status"),
	// or the managed step's name for an external call.
	Resource string
	// Namespace and Name identify the object written, or the object an
	// external call was for.
	Namespace, Name string
	// ExternalName is the external resource's name, for external calls.
	ExternalName string
	// Precondition is the UID a delete was made conditional on, if any.
	Precondition types.UID
	// UID is the UID of the object the API server wrote or deleted, when
	// its answer said, or of the object an external call was for.
	UID types.UID
	// Owners are the UIDs of the owners of the object the API server wrote
	// or deleted, when its answer said.
	Owners []types.UID
	// Status is the HTTP status of an API call; zero when it got none.
	Status int
	// Fault is the fault the kit injected into the call, if any.
	Fault Fault
	// Err is the error the caller got, "" for success.
	Err string
	// At is when the call returned.
	At time.Time
	// AfterCrash is true for a call that returned after the process had
	// died: it may have taken effect, but nobody saw its answer.
	AfterCrash bool
}

// TookEffect reports whether the call changed something as far as the kit
// knows: an API call the server accepted (whatever the caller was told), or
// an external call that returned without error or whose answer the kit
// threw away.
func (c Call) TookEffect() bool {
	if c.External {
		return c.Err == "" || c.Fault == ResponseLost
	}
	return c.Status >= 200 && c.Status < 300
}

// String describes the call on one line.
func (c Call) String() string {
	var b strings.Builder
	if c.External {
		b.WriteString("external ")
	}
	b.WriteString(c.Verb + " " + c.Resource + " " + c.Namespace + "/" + c.Name)
	if c.ExternalName != "" {
		b.WriteString(" (" + c.ExternalName + ")")
	}
	if c.Fault != "" {
		b.WriteString(" fault=" + string(c.Fault))
	}
	if c.Err != "" {
		b.WriteString(" err=" + c.Err)
	}
	if c.AfterCrash {
		b.WriteString(" after-crash")
	}
	return b.String()
}
