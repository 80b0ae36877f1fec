package faults

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"testing"
	"time"
)

// TestRelistOnlyForWhatIsLost drives the kit's filter of one watch stream
// with events it drops or keeps by the plan's seed, and checks when it
// ends the watch with 410 Gone (WatchFaults.Relist): not for a lost event
// that a later event of the same object made good; Relist after a loss
// that nothing made good; on the next watch of the stream, when the one
// that lost the event ended first, unless that watch lists.
func TestRelistOnlyForWhatIsLost(t *testing.T) {
	const (
		relist = 50 * time.Millisecond
		// never is a Relist that no test run reaches: the watches that
		// must end or make a loss good before any relist use it.
		never   = time.Hour
		quiet   = 500 * time.Millisecond
		patient = 30 * time.Second
		stream  = "/apis/test.bosun.dev/v1/namespaces/ns/widgets"
		initial = true
	)
	p := &Process{name: "t", now: time.Now, deadCh: make(chan struct{}),
		plan: Plan{Seed: 9, Watch: WatchFaults{Drop: 0.5, Relist: relist}}}
	info := requestInfo{verb: verbWatch, group: "test.bosun.dev", resource: "widgets", namespace: "ns"}

	// w is one watch: the kit's body of it, and the API server's side.
	type w struct {
		events chan string // the type of each event the watcher reads
		up     *io.PipeWriter
		n      int // events sent so far
	}
	open := func(relistAfter time.Duration, initial bool) *w {
		p.plan.Watch.Relist = relistAfter
		up, upw := io.Pipe()
		body := watchBody(p, info, stream, initial, up)
		x := &w{events: make(chan string, 16), up: upw}
		go func() {
			defer close(x.events)
			sc := bufio.NewScanner(body)
			for sc.Scan() {
				var ev watchEvent
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
					t.Error(err)
					return
				}
				x.events <- ev.Type
			}
		}()
		return x
	}
	rv := 0
	frame := func(typ, name string) []byte {
		rv++
		return fmt.Appendf(nil, `{"type":%q,"object":{"metadata":{"namespace":"ns","name":%q,"uid":"u-%s","resourceVersion":"%d"}}}`+"\n", typ, name, name, rv)
	}
	// send sends the next event of name that the plan drops (drop) or
	// keeps, skipping the others' resourceVersions.
	send := func(x *w, name string, drop bool) {
		t.Helper()
		for {
			x.n++
			typ := "MODIFIED"
			b := frame(typ, name)
			dropped := chance(p.plan.Seed, "watch", "widgets/ns/"+name, "u-"+name, strconv.Itoa(rv), typ, strconv.Itoa(x.n)) < p.plan.Watch.Drop
			if dropped != drop {
				// An event the test does not want: its resourceVersion is
				// spent and the stream's count rewound.
				x.n--
				continue
			}
			if _, err := x.up.Write(b); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	// next returns the type of the next event the watcher reads, "" if
	// none within wait, "end" once the body has ended.
	next := func(x *w, wait time.Duration) string {
		select {
		case typ, ok := <-x.events:
			if !ok {
				return "end"
			}
			return typ
		case <-time.After(wait):
			return ""
		}
	}
	// end closes the API server's side of x and waits for its end.
	end := func(x *w) {
		t.Helper()
		if err := x.up.Close(); err != nil {
			t.Fatal(err)
		}
		if got := next(x, patient); got != "end" {
			t.Fatalf("read %q, want the end of the watch", got)
		}
	}

	// A lost event made good by the next one of its object: nothing is
	// owed, neither by this watch nor by the next.
	x := open(never, !initial)
	send(x, "a", true)
	send(x, "a", false)
	if got := next(x, patient); got != "MODIFIED" {
		t.Fatalf("read %q, want the event that made the loss good", got)
	}
	end(x)
	if _, ok := p.losses.take(stream); ok {
		t.Fatal("a loss made good was left to the next watch")
	}
	// A loss nothing makes good: 410 Gone, Relist after it.
	x = open(relist, !initial)
	send(x, "b", true)
	if got := next(x, patient); got != "ERROR" {
		t.Fatalf("read %q after a loss not made good, want 410 Gone (ERROR)", got)
	}
	if got := next(x, patient); got != "end" {
		t.Fatalf("read %q after 410 Gone, want the end of the watch", got)
	}
	if got := p.relists.Load(); got != 1 {
		t.Errorf("%d relists, want 1", got)
	}

	// A watch that ends with a loss: the next one, resumed at once,
	// relists.
	x = open(never, !initial)
	send(x, "c", false)
	send(x, "c", true)
	if got := next(x, patient); got != "MODIFIED" {
		t.Fatalf("read %q, want the event kept", got)
	}
	end(x)
	x = open(relist, !initial)
	if got := next(x, patient); got != "ERROR" {
		t.Fatalf("resumed watch: read %q, want 410 Gone (ERROR) for the loss of the one before", got)
	}
	// The same, but the next watch lists: nothing to relist.
	x = open(never, !initial)
	send(x, "d", true)
	end(x)
	x = open(relist, initial)
	if _, err := x.up.Write([]byte(`{"type":"BOOKMARK","object":{"metadata":{"annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if got := next(x, patient); got != "BOOKMARK" {
		t.Fatalf("listing watch: read %q, want the bookmark that ends its list", got)
	}
	if got := next(x, quiet); got != "" {
		t.Fatalf("listing watch: read %q, want nothing: its list brought what the one before lost", got)
	}
	if got := p.relists.Load(); got != 2 {
		t.Errorf("%d relists, want 2", got)
	}
}
