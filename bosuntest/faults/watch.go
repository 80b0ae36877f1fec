package faults

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// watchEvent is one frame of a JSON watch stream.
type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// eventMeta is the part of an event's object the kit looks at.
type eventMeta struct {
	Metadata struct {
		Namespace       string `json:"namespace"`
		Name            string `json:"name"`
		UID             string `json:"uid"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

// goneEvent ends a watch the way the API server does when the version the
// watcher resumes from is no longer in its history.
var goneEvent = []byte(`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},` +
	`"status":"Failure","message":"too old resource version (injected by bosuntest/faults)","reason":"Expired","code":410}}` + "\n")

// pending is an event waiting to be delivered.
type pending struct {
	frame   []byte
	key     string
	typ     string
	arrived time.Time
	// seq numbers the events of key, from 1.
	seq  int
	skip bool
	// late is set once the event is held back for stale reads.
	late bool
	// listing is set for the events of a watch's initial list, which
	// are never held back: a list is read whole.
	listing bool
}

// streamOf names the informer a watch request of a process comes from:
// its path (resource and namespace), selectors and the form of object it
// asks for (whole or metadata only). A watch that resumes an earlier one
// has the same name.
func streamOf(req *http.Request) string {
	q := req.URL.Query()
	return strings.Join([]string{req.URL.Path, q.Get("labelSelector"), q.Get("fieldSelector"), req.Header.Get("Accept")}, "\x00")
}

// losses holds, by stream (streamOf), when the first event lost on an
// earlier watch of that stream was dropped, for the watches that ended
// with a loss nothing made good: the next watch of the stream relists for
// it unless it lists anyway.
type losses struct {
	mu       sync.Mutex
	byStream map[string]time.Time
}

// put records that a watch of stream ended with a loss dropped at since.
func (l *losses) put(stream string, since time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byStream == nil {
		l.byStream = map[string]time.Time{}
	}
	if old, ok := l.byStream[stream]; !ok || since.Before(old) {
		l.byStream[stream] = since
	}
}

// take returns and forgets the loss recorded for stream, if any.
func (l *losses) take(stream string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	since, ok := l.byStream[stream]
	delete(l.byStream, stream)
	return since, ok
}

// earlierWatch is the key under which a watch holds the loss of an earlier
// watch of its stream: no object's key, so no event makes it good.
const earlierWatch = ""

// watchBody returns the body the watcher of p reads in place of body: the
// same events, with the plan's watch faults and stale reads applied.
// stream names the watch's informer (streamOf); initial is set for a watch
// that streams a list first.
func watchBody(p *Process, info requestInfo, stream string, initial bool, body io.ReadCloser) io.ReadCloser {
	faults := p.plan.Watch
	if !faults.matches(info.resource) {
		faults = WatchFaults{}
	}
	stale := p.plan.Stale.matches(info.resource)
	_, epoch, _ := p.net.state()
	if !faults.active() && !stale {
		return &gatedBody{p: p, ReadCloser: body, epoch: epoch}
	}
	pr, pw := io.Pipe()
	w := &watchFilter{p: p, info: info, stream: stream, faults: faults, stale: stale, out: pw, upstream: body,
		wake: make(chan struct{}, 1), listed: make(chan struct{}), lost: map[string]time.Time{}}
	if initial {
		// A watch that lists leaves an earlier watch's loss where it is:
		// it may be a one-off list of another reader of the stream.
		w.initial = true
	} else {
		close(w.listed)
		// A resumed watch owes the relist of an earlier watch's loss.
		if since, ok := p.losses.take(stream); ok {
			w.lost[earlierWatch] = since
		}
	}
	go w.read()
	go w.deliver()
	return &gatedBody{p: p, ReadCloser: pr, epoch: epoch}
}

// gatedBody fails reads once the process has died, and hangs them through
// a partition that began after the watch did (see Partition).
type gatedBody struct {
	p *Process
	io.ReadCloser
	epoch int
}

// Read implements io.Reader.
func (b *gatedBody) Read(buf []byte) (int, error) {
	if b.p.dead() {
		return 0, ErrCrashed
	}
	if err := b.p.net.hangIfCut(b.epoch, b.p.deadCh); err != nil {
		return 0, err
	}
	n, err := b.ReadCloser.Read(buf)
	if cerr := b.p.net.hangIfCut(b.epoch, b.p.deadCh); cerr != nil {
		// What arrived during the partition never reached the watcher.
		return 0, cerr
	}
	return n, err
}

// watchFilter moves events from the API server's stream to the watcher's.
type watchFilter struct {
	p        *Process
	info     requestInfo
	stream   string
	faults   WatchFaults
	stale    bool
	out      *io.PipeWriter
	upstream io.ReadCloser

	// initial is true while the watch streams its initial list, which
	// ends with a bookmark; listed is closed then.
	initial bool
	listed  chan struct{}

	mu    sync.Mutex
	queue []*pending
	seen  map[string]int // events of each key read so far
	// lost holds, by key, when the first event of the object that no
	// later event has made good was dropped (see WatchFaults.Relist).
	lost   map[string]time.Time
	closed bool
	err    error
	wake   chan struct{}
}

// wait returns how long the event at the head of the queue must still be
// held: for the Delay and Coalesce windows, and under stale reads until
// Lag newer events of its object have arrived, or MaxAge has passed. Events
// leave in the order they came, so the cache stays consistent, only late.
func (w *watchFilter) wait(next *pending) time.Duration {
	wait := time.Until(next.arrived.Add(max(w.faults.Delay, w.faults.Coalesce)))
	if !w.stale || next.listing || next.typ == "BOOKMARK" || next.typ == "ERROR" {
		return wait
	}
	w.mu.Lock()
	newer := w.seen[next.key] - next.seq
	w.mu.Unlock()
	if newer >= w.p.plan.Stale.Lag {
		return wait
	}
	stale := time.Until(next.arrived.Add(w.p.plan.Stale.maxAge()))
	if stale > 0 && !next.late {
		next.late = true
		w.p.stale.Add(1)
	}
	return max(wait, stale)
}

// read decodes the upstream events into the queue.
func (w *watchFilter) read() {
	dec := json.NewDecoder(w.upstream)
	n := 0
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			w.finish(err)
			return
		}
		var ev watchEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			w.finish(err)
			return
		}
		n++
		if w.initial && ev.Type == "BOOKMARK" && initialEventsEnd(ev.Object) {
			w.initial = false
			close(w.listed)
		}
		var meta eventMeta
		_ = json.Unmarshal(ev.Object, &meta)
		m := meta.Metadata
		key := w.info.resource + "/" + m.Namespace + "/" + m.Name
		api := ev.Type == "ADDED" || ev.Type == "MODIFIED" || ev.Type == "DELETED"
		if api && !w.initial && w.faults.Drop > 0 &&
			chance(w.p.plan.Seed, "watch", key, m.UID, m.ResourceVersion, ev.Type, strconv.Itoa(n)) < w.faults.Drop {
			w.p.dropped.Add(1)
			w.mu.Lock()
			if _, ok := w.lost[key]; !ok {
				w.lost[key] = w.p.now()
			}
			w.mu.Unlock()
			// The relist it may call for is due from now.
			w.signal()
			continue
		}
		frame := append(append([]byte{}, raw...), '\n')
		w.mu.Lock()
		if api {
			// The object's state as of this event reaches the cache: what
			// its lost events carried no longer matters.
			delete(w.lost, key)
		}
		if api && !w.initial && ev.Type == "MODIFIED" && w.faults.Coalesce > 0 {
			for _, q := range w.queue {
				if !q.skip && q.key == key && q.typ == "MODIFIED" {
					q.skip = true
					w.p.coalesced.Add(1)
				}
			}
		}
		if w.seen == nil {
			w.seen = map[string]int{}
		}
		w.seen[key]++
		w.queue = append(w.queue, &pending{frame: frame, key: key, typ: ev.Type, arrived: w.p.now(), seq: w.seen[key], listing: w.initial})
		w.mu.Unlock()
		w.signal()
	}
}

// finish records the end of the upstream stream.
func (w *watchFilter) finish(err error) {
	w.mu.Lock()
	w.closed, w.err = true, err
	w.mu.Unlock()
	w.signal()
}

// signal wakes deliver.
func (w *watchFilter) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// firstLoss returns when the earliest loss that nothing made good was
// dropped; false when there is none.
func (w *watchFilter) firstLoss() (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var first time.Time
	for _, since := range w.lost {
		if first.IsZero() || since.Before(first) {
			first = since
		}
	}
	return first, !first.IsZero()
}

// relistDue returns when the watch must be ended for a relist: Relist
// after its first loss (firstLoss); false when none is due.
func (w *watchFilter) relistDue() (time.Time, bool) {
	first, ok := w.firstLoss()
	if !ok || w.faults.Relist <= 0 {
		return time.Time{}, false
	}
	return first.Add(w.faults.Relist), true
}

// deliver writes queued events to the watcher once they have been held
// long enough, and ends the stream with 410 Gone when a relist is due. A
// watch that ends otherwise, with a loss nothing made good, leaves it to
// the next watch of its stream.
//
// apisize:own-wait: it is an event loop woken by new events, the end of
// the list and the relist as well as by the hold of the next event, not a
// poll.
func (w *watchFilter) deliver() {
	defer func() { _ = w.upstream.Close() }()
	listed := w.listed
	for {
		next, closed, err := w.head()
		if next == nil && closed {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			// The loss is recorded before the watcher sees the end: it
			// may resume at once.
			w.leaveLoss()
			_ = w.out.CloseWithError(err)
			return
		}
		var due <-chan time.Time
		var timer *time.Timer
		if next != nil {
			wait := w.wait(next)
			if wait <= 0 {
				w.mu.Lock()
				skip := next.skip
				w.queue = w.queue[1:]
				w.mu.Unlock()
				if skip {
					continue
				}
				if _, err := w.out.Write(next.frame); err != nil {
					// The watcher has gone.
					w.leaveLoss()
					return
				}
				continue
			}
			timer = time.NewTimer(wait)
			due = timer.C
		}
		// No relist while the initial list streams.
		var relist <-chan time.Time
		var relistTimer *time.Timer
		if at, ok := w.relistDue(); ok && listed == nil {
			relistTimer = time.NewTimer(time.Until(at))
			relist = relistTimer.C
		}
		select {
		case <-listed:
			listed = nil
		case <-due:
		case <-w.wake:
		case <-relist:
			if at, ok := w.relistDue(); ok && !w.p.now().Before(at) {
				w.p.relists.Add(1)
				_, _ = w.out.Write(goneEvent)
				_ = w.out.Close()
				return
			}
		case <-w.p.deadCh:
			_ = w.out.CloseWithError(ErrCrashed)
			return
		}
		if timer != nil {
			timer.Stop()
		}
		if relistTimer != nil {
			relistTimer.Stop()
		}
	}
}

// leaveLoss hands a loss that nothing made good to the next watch of the
// stream (see losses); a dead process leaves none.
func (w *watchFilter) leaveLoss() {
	if w.p.dead() {
		return
	}
	if since, ok := w.firstLoss(); ok {
		w.p.losses.put(w.stream, since)
	}
}

// head drops the skipped events at the front of the queue and returns
// the next one to deliver (nil for none), and whether the upstream has
// ended, with its error.
func (w *watchFilter) head() (next *pending, closed bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.queue) > 0 && w.queue[0].skip {
		w.queue = w.queue[1:]
	}
	if len(w.queue) > 0 {
		next = w.queue[0]
	}
	return next, w.closed, w.err
}

// initialEventsEnd reports whether a bookmark's object carries the
// annotation that ends a watch's initial list.
func initialEventsEnd(obj json.RawMessage) bool {
	var m struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	return json.Unmarshal(obj, &m) == nil && m.Metadata.Annotations["k8s.io/initial-events-end"] == "true"
}
