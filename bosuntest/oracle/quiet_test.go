package oracle_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/internal/testapi"
)

// signalLog is a WriteLog that closes read the first time Writes is
// called, so that a test can make writes that Quiet is sure to count.
type signalLog struct {
	oracle.WriteLog
	once sync.Once
	read chan struct{}
}

func newSignalLog(log oracle.WriteLog) *signalLog {
	return &signalLog{WriteLog: log, read: make(chan struct{})}
}

func (l *signalLog) Writes() []bosuntest.Write {
	w := l.WriteLog.Writes()
	l.once.Do(func() { close(l.read) })
	return w
}

func TestQuiet(t *testing.T) {
	cp := shared.ControlPlane(t)
	counter := &bosuntest.WriteCounter{}
	c := counter.Wrap(cp.Client)
	ns := bosuntest.Namespace(t, c)
	createWidget(t, c, ns, "before") // part of the baseline

	// quiet runs Quiet over the counter while write makes its writes.
	quiet := func(write func(ctx context.Context) error) ([]bosuntest.Write, error) {
		log := newSignalLog(counter)
		done := make(chan error, 1)
		go func() {
			<-log.read
			done <- write(t.Context())
		}()
		writes, err := oracle.Quiet(t.Context(), log, 2*time.Second)
		if werr := <-done; werr != nil {
			t.Fatalf("writing during the quiet period: %v", werr)
		}
		return writes, err
	}
	eventAndLease := func(ctx context.Context) error {
		e := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: ns, GenerateName: "ev-"},
			InvolvedObject: corev1.ObjectReference{Kind: "Widget", Namespace: ns, Name: "before"},
			Reason:         "Synced", Message: "synced", Type: corev1.EventTypeNormal,
		}
		if err := c.Create(ctx, e); err != nil {
			return err
		}
		return c.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "leader-"}})
	}

	writes, err := quiet(eventAndLease)
	if err != nil || len(writes) != 0 {
		t.Errorf("Quiet with only an Event and a Lease written = %v, %v; want no writes", writes, err)
	}

	writes, err = quiet(func(ctx context.Context) error {
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "during"}}
		if err := c.Create(ctx, w); err != nil {
			return err
		}
		w.Status.Result = 1
		if err := c.Status().Update(ctx, w); err != nil {
			return err
		}
		return eventAndLease(ctx)
	})
	want := []bosuntest.Write{
		{Verb: bosuntest.VerbCreate, Kind: "Widget", Namespace: ns, Name: "during"},
		{Verb: bosuntest.VerbUpdate, Subresource: "status", Kind: "Widget", Namespace: ns, Name: "during"},
	}
	if diff := cmp.Diff(want, writes); diff != "" {
		t.Errorf("writes during the quiet period (-want +got):\n%s", diff)
	}
	checkErr(t, err, []error{oracle.ErrNotQuiet}, []string{
		"(2 in 2s)",
		"create Widget " + ns + "/during",
		"update status Widget " + ns + "/during",
	})
	unwanted(t, err, []string{"/before", "Event", "Lease"})
}

// fakeLog is a WriteLog whose writes a test sets.
type fakeLog struct {
	mu     sync.Mutex
	writes []bosuntest.Write
	calls  int
	next   []bosuntest.Write // what Writes returns from its second call on
}

func (l *fakeLog) Writes() []bosuntest.Write {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if l.calls > 1 {
		return l.next
	}
	return l.writes
}

func TestQuietAfterReset(t *testing.T) {
	old := []bosuntest.Write{{Verb: "create", Kind: "Widget", Name: "a"}, {Verb: "patch", Kind: "Widget", Name: "a"}}
	fresh := []bosuntest.Write{{Verb: "delete", Kind: "Widget", Name: "b"}}
	writes, err := oracle.Quiet(t.Context(), &fakeLog{writes: old, next: fresh}, time.Millisecond)
	if diff := cmp.Diff(fresh, writes); diff != "" {
		t.Errorf("writes after a reset (-want +got):\n%s", diff)
	}
	checkErr(t, err, []error{oracle.ErrNotQuiet}, []string{"delete Widget b"})
}

func TestQuietStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	log := &fakeLog{next: []bosuntest.Write{{Verb: "create", Kind: "Widget", Name: "a"}}}
	writes, err := oracle.Quiet(ctx, log, time.Hour)
	if !errors.Is(err, context.Canceled) || len(writes) != 1 {
		t.Errorf("Quiet = %v, %v; want the write so far and context.Canceled", writes, err)
	}
}
