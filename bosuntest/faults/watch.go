package faults

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
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

// watchBody returns the body the watcher of p reads in place of body: the
// same events, with the plan's watch faults and stale reads applied.
func watchBody(p *Process, info requestInfo, initial bool, body io.ReadCloser) io.ReadCloser {
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
	w := &watchFilter{p: p, info: info, faults: faults, stale: stale, out: pw, upstream: body,
		wake: make(chan struct{}, 1), listed: make(chan struct{})}
	if initial {
		w.initial = true
	} else {
		close(w.listed)
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
	faults   WatchFaults
	stale    bool
	out      *io.PipeWriter
	upstream io.ReadCloser

	// initial is true while the watch streams its initial list, which
	// ends with a bookmark; listed is closed then.
	initial bool
	listed  chan struct{}

	mu     sync.Mutex
	queue  []*pending
	seen   map[string]int // events of each key read so far
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
			continue
		}
		frame := append(append([]byte{}, raw...), '\n')
		w.mu.Lock()
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

// deliver writes queued events to the watcher once they have been held
// long enough, and ends the stream with 410 Gone when a relist is due.
//
// apisize:own-wait: it is an event loop woken by new events, the end of
// the list and the relist as well as by the hold of the next event, not a
// poll.
func (w *watchFilter) deliver() {
	defer func() { _ = w.upstream.Close() }()
	var relist <-chan time.Time
	listed := w.listed
	for {
		w.mu.Lock()
		var next *pending
		for len(w.queue) > 0 && w.queue[0].skip {
			w.queue = w.queue[1:]
		}
		if len(w.queue) > 0 {
			next = w.queue[0]
		}
		closed, err := w.closed, w.err
		w.mu.Unlock()

		if next == nil && closed {
			if errors.Is(err, io.EOF) {
				err = nil
			}
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
					return
				}
				continue
			}
			timer = time.NewTimer(wait)
			due = timer.C
		}
		select {
		case <-listed:
			// The initial list is over: relists count from here.
			listed = nil
			if w.faults.Relist > 0 {
				t := time.NewTimer(w.faults.Relist)
				defer t.Stop()
				relist = t.C
			}
		case <-due:
		case <-w.wake:
		case <-relist:
			w.p.relists.Add(1)
			_, _ = w.out.Write(goneEvent)
			_ = w.out.Close()
			return
		case <-w.p.deadCh:
			_ = w.out.CloseWithError(ErrCrashed)
			return
		}
		if timer != nil {
			timer.Stop()
		}
	}
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
