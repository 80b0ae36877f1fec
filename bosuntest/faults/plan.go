package faults

import (
	"hash/fnv"
	"slices"
	"time"
)

// Fault is what the kit does to an API request instead of, or besides,
// passing it to the API server.
type Fault string

// The faults a Rule can inject into API requests.
const (
	// Conflict answers 409 Conflict without passing the request on: what
	// a write with a stale resourceVersion gets.
	Conflict Fault = "conflict"
	// TooManyRequests answers 429 with a Retry-After of one second without
	// passing the request on. client-go waits and sends it again, so the
	// caller usually sees only the delay.
	TooManyRequests Fault = "too-many-requests"
	// InternalError answers 500 without passing the request on.
	InternalError Fault = "internal-error"
	// Timeout holds the request for Plan.TimeoutDelay, then answers 504
	// with reason Timeout, without passing it on.
	Timeout Fault = "timeout"
	// ResponseLost passes the request on, so the API server applies it,
	// then throws the answer away and fails the call as a broken
	// connection would. Only writes get it.
	ResponseLost Fault = "response-lost"
)

// Request verbs as Rule.Verbs names them: the Kubernetes API verbs, with
// "apply" for a server-side apply patch.
const (
	verbGet              = "get"
	verbList             = "list"
	verbWatch            = "watch"
	verbCreate           = "create"
	verbUpdate           = "update"
	verbPatch            = "patch"
	verbApply            = "apply"
	verbDelete           = "delete"
	verbDeleteCollection = "deletecollection"
)

// Rule injects one Fault into a share of the API requests it matches.
type Rule struct {
	// Fault is what happens to a matched request.
	Fault Fault
	// Rate is the share of matched requests that get the fault, from 0
	// to 1.
	Rate float64
	// Resources are the plural resource names the rule matches, such as
	// "configmaps" or "widgets", with "/status" for the status
	// subresource ("widgets/status"). Empty matches every resource.
	Resources []string
	// Verbs are the verbs the rule matches, as the Kubernetes API names
	// them: "get", "list", "watch", "create", "update", "patch",
	// "delete", "deletecollection", and "apply" for a server-side
	// apply patch. Empty matches every write: create, update, patch,
	// apply, delete and deletecollection.
	Verbs []string
}

// matches reports whether r applies to a request.
func (r Rule) matches(info requestInfo) bool {
	if len(r.Verbs) == 0 {
		if !info.write() {
			return false
		}
	} else if !slices.Contains(r.Verbs, info.verb) {
		return false
	}
	if r.Fault == ResponseLost && !info.write() {
		return false
	}
	if len(r.Resources) == 0 {
		return true
	}
	return slices.Contains(r.Resources, info.resourcePath())
}

// WatchFaults act on the events of the watches a manager's caches hold.
// Events are those of the API (added, modified, deleted); bookmarks and
// errors always pass, and so does the initial list a watch streams when it
// starts (client-go lists through a watch), since a list is complete or
// fails as a whole.
type WatchFaults struct {
	// Resources limits the faults to the watches of these plural resource
	// names. Empty means every watch.
	Resources []string
	// Drop is the share of events, from 0 to 1, that never reach the
	// cache. A later event of the same object makes the loss good; else
	// only a relist (see Relist) brings what they carried.
	Drop float64
	// Delay holds every event this long before the cache sees it, in
	// order.
	Delay time.Duration
	// Coalesce delivers only the last of the modifications of one object
	// that arrive within this window, as a slow watcher would. It holds
	// events for the window, like Delay.
	Coalesce time.Duration
	// Relist is how long a dropped event may stay lost: a watch that
	// dropped an event of an object and has had no later event of that
	// object for this long is ended with 410 Gone, as the API server does
	// when its history was compacted: the cache lists everything again
	// and learns what dropped events carried. A loss outlives its watch:
	// the next watch of the same informer, resumed rather than listed,
	// is ended in its place. Watches that lost nothing, or whose every
	// loss a later event made good, are never ended: a relist is not
	// free, as client-go's reflector waits a backoff before each one
	// that doubles from 0.8s to 30s (jittered up to twice that) while it
	// relists within two minutes, and a cache relisted every few seconds
	// would be blind, its Leases seen expired, for most of a minute at a
	// time. Zero means never.
	Relist time.Duration
}

// active reports whether any watch fault is set.
func (w WatchFaults) active() bool {
	return w.Drop > 0 || w.Delay > 0 || w.Coalesce > 0 || w.Relist > 0
}

// matches reports whether the faults apply to the watch of resource.
func (w WatchFaults) matches(resource string) bool {
	return len(w.Resources) == 0 || slices.Contains(w.Resources, resource)
}

// StaleReads make a manager's cache, which its client reads, lag behind
// the API server: while an object changes, the cache holds it as it was
// Lag versions earlier; an object deleted and made again under its name is
// seen as its earlier self for a while ("time travel"). The cache is late
// by at most MaxAge, and stays consistent: it receives every event, in
// order, only later, as a slow watch would deliver them, so a controller
// still converges. The initial list of a watch is never held back.
type StaleReads struct {
	// Resources limits the lag to these plural resource names. Empty means
	// every cached resource.
	Resources []string
	// Lag is how many versions of an object the cache holds back while
	// it changes. Zero turns stale reads off.
	Lag int
	// MaxAge is the longest an event is held back. Zero means
	// two seconds.
	MaxAge time.Duration
}

// defaultMaxAge is the longest stale reads hold an event back when
// StaleReads.MaxAge is zero.
const defaultMaxAge = 2 * time.Second

// matches reports whether the lag applies to resource.
func (s StaleReads) matches(resource string) bool {
	return s.Lag > 0 && (len(s.Resources) == 0 || slices.Contains(s.Resources, resource))
}

// maxAge returns MaxAge or its default.
func (s StaleReads) maxAge() time.Duration {
	if s.MaxAge > 0 {
		return s.MaxAge
	}
	return defaultMaxAge
}

// CrashPoint stops a process at a write: the manager's context is
// cancelled and every call it makes afterwards fails, to the API server
// and to external systems alike, as if the process had died.
type CrashPoint struct {
	// After is the number of the write, counting from 1, after which the
	// process dies. Zero means never.
	After int
	// During makes the write number After take effect and lose its
	// answer: the caller gets an error and the process dies before it can
	// look again. Without it, the caller gets the answer and the process
	// dies right after.
	During bool
	// Match, when set, limits the writes that count to those it accepts;
	// for example the external creates, to kill a process in the middle
	// of one.
	Match func(Call) bool
}

// Plan is the faults a Process runs under. The zero Plan injects nothing
// and only records.
type Plan struct {
	// Seed makes the choices of Rules repeatable: the n-th request of a
	// verb for an object of a given name gets the same fault in every run
	// with the same seed, in whatever namespace. It seeds WatchFaults.Drop
	// too.
	Seed uint64
	// Rules inject faults into API requests: each rule that matches a
	// request gets its chance in turn, and the first that fires decides.
	Rules []Rule
	// TimeoutDelay is how long a Timeout fault holds a request; zero means
	// one second.
	TimeoutDelay time.Duration
	// Watch faults act on the events the caches receive.
	Watch WatchFaults
	// Stale makes reads from the cache lag.
	Stale StaleReads
	// Crash kills the process at a write.
	Crash CrashPoint
	// Foreign writes change the objects the process writes, between its
	// read and its write.
	Foreign ForeignWrites
	// SlowExternal holds every call of the process's managed steps to
	// their external systems this long before it goes out, as a slow
	// cloud API would. A call whose context ends first fails with the
	// context's error.
	SlowExternal time.Duration
}

// ForeignWrites stand for another actor (a user, another controller)
// that changes an object while the operator is about to write it: before
// a share of the process's updates and patches (server-side applies
// included) of an existing object reach the API server, the kit sets the
// annotation "faults.bosun.dev/foreign" of that object to a new value, through a
// connection of its own. The operator's write then meets a newer object
// than the one it read ("intermediate states"): it must not undo the
// other actor's change, nor lose its own.
type ForeignWrites struct {
	// Rate is the share of matching writes, from 0 to 1, that a foreign
	// write precedes.
	Rate float64
	// Resources limits the foreign writes to these plural resource names
	// (without "/status": the foreign write goes to the object itself,
	// before writes of its status too). Empty means every resource.
	Resources []string
}

// foreignAnnotation is the annotation ForeignWrites set.
const foreignAnnotation = "faults.bosun.dev/foreign"

// chance returns a number in [0, 1) that depends only on the seed and the
// parts, so the decision for a given request repeats from run to run.
func chance(seed uint64, parts ...string) float64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	_, _ = h.Write(b[:])
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	// Mix the bits so that neighbouring inputs spread over the range.
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	return float64(x>>11) / float64(1<<53)
}
