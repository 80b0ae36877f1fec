package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
)

// stamps records when each Widget was first reconciled.
type stamps struct {
	mu    sync.Mutex
	first map[string]time.Time
}

func (s *stamps) step(name string, result int64) bosun.Step[*testapi.Widget] {
	return bosun.NewStep(name, func(_ context.Context, p *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		s.mu.Lock()
		if _, ok := s.first[p.Object.Name]; !ok {
			s.first[p.Object.Name] = time.Now()
		}
		s.mu.Unlock()
		p.Object.Status.Result = result
		return ctrl.Result{}, nil
	})
}

func (s *stamps) at(name string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.first[name]
	return t, ok
}

// TestEnqueuer runs controllers whose watch of Widgets lets no event
// through, so that only what their Enqueuers are given is reconciled:
// keys enqueued before the manager starts, a delayed key no sooner than
// its delay after the call, keys enqueued from many goroutines at once,
// and keys given to an Enqueuer that was first asked for after Complete.
func TestEnqueuer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := &stamps{first: map[string]time.Time{}}
	key := func(name string) client.ObjectKey { return client.ObjectKey{Namespace: f.ns, Name: name} }
	noEvents := builder.WithPredicates(predicate.NewPredicateFuncs(func(client.Object) bool { return false }))
	for _, name := range []string{"early", "late", "never"} {
		f.create(name, 1, 1, nil)
	}
	const delay = 2 * time.Second
	var enq, late *bosun.Enqueuer
	var delayedAt time.Time
	mgr := bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{Namespaces: []string{f.ns}}, func(mgr ctrl.Manager) error {
		b := bosun.ControllerManagedBy[*testapi.Widget](mgr).For(nil, noEvents)
		enq = b.Enqueuer()
		enq.Enqueue(key("early"))
		enq.Enqueue(key("early"))
		delayedAt = time.Now()
		enq.EnqueueAfter(key("late"), delay)
		r := &bosun.Reconciler[*testapi.Widget]{Name: "enqueued", Options: bosun.Options{IgnoreNamespacePolicy: true}, Steps: []bosun.Step[*testapi.Widget]{s.step("stamp", 1)}}
		if err := b.Complete(r); err != nil {
			return err
		}
		if b.Enqueuer() != enq {
			return errors.New("Enqueuer after Complete returned another Enqueuer")
		}
		// A second controller whose Enqueuer is first asked for after
		// Complete: it is wired to the controller then.
		b2 := bosun.ControllerManagedBy[*testapi.Widget](mgr).For(nil, noEvents)
		r2 := &bosun.Reconciler[*testapi.Widget]{Name: "enqueued-late", Options: bosun.Options{IgnoreNamespacePolicy: true}, Steps: []bosun.Step[*testapi.Widget]{s.step("stamp", 2)}}
		if err := b2.Complete(r2); err != nil {
			return err
		}
		late = b2.Enqueuer()
		return nil
	})

	var many []string
	for i := range 20 {
		name := fmt.Sprintf("many-%d", i)
		f.create(name, 1, 1, nil)
		many = append(many, name)
	}
	f.create("other", 1, 1, nil)
	// A key enqueued before the cache holds its object would find nothing
	// to reconcile.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		for _, name := range append([]string{"other"}, many...) {
			if err := mgr.GetCache().Get(ctx, key(name), &testapi.Widget{}); err != nil {
				return err
			}
		}
		return nil
	})
	var wg sync.WaitGroup
	for _, name := range many {
		for range 3 {
			wg.Go(func() { enq.Enqueue(key(name)) })
		}
	}
	wg.Go(func() { late.Enqueue(key("other")) })
	wg.Wait()

	results := func(ctx context.Context, names ...string) (map[string]int64, error) {
		got := map[string]int64{}
		for _, name := range names {
			w, err := f.get(ctx, name)
			if err != nil {
				return nil, err
			}
			got[name] = w.Status.Result
		}
		return got, nil
	}
	want := map[string]int64{"early": 1, "late": 1, "other": 2}
	for _, name := range many {
		want[name] = 1
	}
	names := append([]string{"early", "late", "other"}, many...)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		got, err := results(ctx, names...)
		if err != nil {
			return err
		}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("results (-want +got):\n%s", diff)
		}
		return nil
	})
	if at, ok := s.at("late"); !ok || at.Sub(delayedAt) < delay {
		t.Errorf("the delayed Widget was reconciled %s after EnqueueAfter, want at least %s", at.Sub(delayedAt), delay)
	}
	// Every other Widget was reconciled: had the watch let events through,
	// "never" would have been too.
	if got, err := results(t.Context(), "never"); err != nil || got["never"] != 0 {
		t.Errorf("the Widget no Enqueuer was given was reconciled: %v, %v", got, err)
	}
}
