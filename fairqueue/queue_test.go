package fairqueue_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"github.com/bosunkit/bosun/fairqueue"
)

// clock is a fake clock for the queue.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Step(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// group is the part of "group/name" before the slash.
func group(s string) string {
	for i := range s {
		if s[i] == '/' {
			return s[:i]
		}
	}
	return s
}

func newQueue(c *clock) *fairqueue.Queue[string] {
	return fairqueue.New("test", fairqueue.Options[string]{
		Key:         group,
		Now:         c.Now,
		RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Second, time.Minute),
		Metrics:     nopMetrics{},
	})
}

// drain gets every ready item, marking each Done.
func drain(q *fairqueue.Queue[string]) []string {
	var out []string
	for q.Len() > 0 {
		item, _ := q.Get()
		out = append(out, item)
		q.Done(item)
	}
	return out
}

func TestOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		add  func(q *fairqueue.Queue[string])
		want []string
	}{
		{
			name: "groups take turns, oldest first within a group",
			add: func(q *fairqueue.Queue[string]) {
				for i := range 5 {
					q.Add(fmt.Sprintf("big/%d", i))
				}
				q.Add("small/0")
				q.Add("small/1")
			},
			want: []string{"big/0", "small/0", "big/1", "small/1", "big/2", "big/3", "big/4"},
		},
		{
			name: "an item is queued once",
			add: func(q *fairqueue.Queue[string]) {
				q.Add("a/x")
				q.Add("a/x")
				q.Add("a/y")
				q.Add("a/x")
			},
			want: []string{"a/x", "a/y"},
		},
		{
			name: "higher priorities first, turns within a priority",
			add: func(q *fairqueue.Queue[string]) {
				q.Add("a/low")
				q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(-100)}, "b/lower")
				q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(10)}, "a/high", "a/high2", "b/high")
			},
			want: []string{"a/high", "b/high", "a/high2", "a/low", "b/lower"},
		},
		{
			name: "raising the priority of a queued item moves it",
			add: func(q *fairqueue.Queue[string]) {
				q.Add("a/1")
				q.Add("a/2")
				q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(1)}, "a/2")
				q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(-1)}, "a/1")
			},
			want: []string{"a/2", "a/1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newQueue(&clock{now: time.Unix(1000, 0)})
			defer q.ShutDown()
			tc.add(q)
			if diff := cmp.Diff(tc.want, drain(q)); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDelays(t *testing.T) {
	c := &clock{now: time.Unix(1000, 0)}
	q := newQueue(c)
	defer q.ShutDown()
	q.AddAfter("a/later", 2*time.Second)
	q.AddRateLimited("a/failing") // 1 s: the limiter's first delay
	q.AddAfter("a/sooner", 3*time.Second)
	q.AddAfter("a/sooner", time.Second/2) // the sooner time wins
	if got := q.Len(); got != 3 {
		t.Fatalf("Len = %d, want 3 waiting", got)
	}
	var got []string
	for range 3 {
		c.Step(time.Second)
		q.Tick()
		got = append(got, drainReady(q)...)
	}
	want := []string{"a/sooner", "a/failing", "a/later"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	q.AddRateLimited("a/failing")
	if n := q.NumRequeues("a/failing"); n != 2 {
		t.Errorf("NumRequeues = %d, want 2", n)
	}
	q.Forget("a/failing")
	if n := q.NumRequeues("a/failing"); n != 0 {
		t.Errorf("NumRequeues after Forget = %d, want 0", n)
	}
}

// drainReady gets the items ready now, without waiting.
func drainReady(q *fairqueue.Queue[string]) []string {
	var out []string
	for {
		got := make(chan string, 1)
		go func() {
			item, shutdown := q.Get()
			if !shutdown {
				got <- item
			}
			close(got)
		}()
		select {
		case item, ok := <-got:
			if !ok {
				return out
			}
			out = append(out, item)
			q.Done(item)
		case <-time.After(100 * time.Millisecond):
			// Nothing ready: stop the Get above with an item of its own.
			q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(1 << 30)}, "zz/stop")
			if item := <-got; item != "zz/stop" {
				out = append(out, item)
			}
			q.Done("zz/stop")
			return out
		}
	}
}

func TestAddWhileHeld(t *testing.T) {
	q := newQueue(&clock{now: time.Unix(1000, 0)})
	defer q.ShutDown()
	q.Add("a/x")
	item, _ := q.Get()
	q.Add("a/x")
	q.Add("a/x")
	if n := q.Len(); n != 0 {
		t.Fatalf("Len while held = %d, want 0: the item waits for Done", n)
	}
	q.Done(item)
	if n := q.Len(); n != 1 {
		t.Fatalf("Len after Done = %d, want 1", n)
	}
	if diff := cmp.Diff([]string{"a/x"}, drain(q)); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
}

func TestShutDownWithDrain(t *testing.T) {
	q := newQueue(&clock{now: time.Unix(1000, 0)})
	q.Add("a/x")
	item, _ := q.Get()
	drained := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(drained)
	}()
	for !q.ShuttingDown() {
		time.Sleep(time.Millisecond)
	}
	select {
	case <-drained:
		t.Fatal("ShutDownWithDrain returned while an item was held")
	default:
	}
	q.Add("a/y") // ignored after shutdown
	q.Done(item)
	<-drained
	if _, shutdown := q.Get(); !shutdown {
		t.Error("Get after shutdown handed out an item")
	}
}

// TestNoItemHeldTwice runs workers and adders at once and checks that no
// item is ever held by two workers and that every item added is handed
// out after its last add.
func TestNoItemHeldTwice(t *testing.T) {
	q := fairqueue.New("stress", fairqueue.Options[string]{Key: group, Metrics: nopMetrics{}})
	var held sync.Map
	var twice, processed atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				if _, loaded := held.LoadOrStore(item, true); loaded {
					twice.Add(1)
				}
				processed.Add(1)
				held.Delete(item)
				q.Done(item)
			}
		}()
	}
	var adders sync.WaitGroup
	for a := range 4 {
		adders.Add(1)
		go func() {
			defer adders.Done()
			for i := range 2000 {
				q.AddWithOpts(priorityqueue.AddOpts{Priority: ptr.To(i % 3)}, fmt.Sprintf("g%d/%d", a, i%50))
			}
		}()
	}
	adders.Wait()
	for q.Len() > 0 {
		time.Sleep(time.Millisecond)
	}
	q.ShutDownWithDrain()
	wg.Wait()
	if n := twice.Load(); n != 0 {
		t.Errorf("%d items were held by two workers at once", n)
	}
	if processed.Load() < 200 {
		t.Errorf("%d items processed, want at least one per distinct item", processed.Load())
	}
}

type nopMetrics struct{}

func (nopMetrics) NewDepthMetric(string) workqueue.GaugeMetric            { return nop{} }
func (nopMetrics) NewAddsMetric(string) workqueue.CounterMetric           { return nop{} }
func (nopMetrics) NewLatencyMetric(string) workqueue.HistogramMetric      { return nop{} }
func (nopMetrics) NewWorkDurationMetric(string) workqueue.HistogramMetric { return nop{} }
func (nopMetrics) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return nop{}
}
func (nopMetrics) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return nop{}
}
func (nopMetrics) NewRetriesMetric(string) workqueue.CounterMetric { return nop{} }

type nop struct{}

func (nop) Inc()            {}
func (nop) Dec()            {}
func (nop) Set(float64)     {}
func (nop) Observe(float64) {}
