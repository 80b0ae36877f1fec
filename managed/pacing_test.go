package managed

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/figures"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// budget is what one change of an external resource may cost: calls of
// each operation the cloud sees, and writes of the object (its metadata
// and its status).
type budget struct {
	creates, updates, deletes, repairs, observes, writes int
}

// spent returns what the cloud and the API server saw since mark: calls
// of the object uid, every Observe, and the writes of Buckets.
func (e *env) spent(uid string, mark budget) budget {
	var b budget
	e.cloud.set(func(c *cloud) {
		b = budget{
			creates: c.creates[uid] - mark.creates, updates: c.updates[uid] - mark.updates, deletes: c.deletes[uid] - mark.deletes,
			repairs: c.repairs[uid] - mark.repairs, observes: c.observes - mark.observes,
		}
	})
	for _, w := range e.writes.Writes() {
		if w.Kind == "Bucket" {
			b.writes++
		}
	}
	return b
}

// over returns what of got exceeds max, or nil.
func (max budget) over(got budget) error {
	for _, x := range []struct {
		what     string
		got, max int
	}{
		{"creates", got.creates, max.creates}, {"updates", got.updates, max.updates}, {"deletes", got.deletes, max.deletes},
		{"credential repairs", got.repairs, max.repairs},
		{"observes", got.observes, max.observes}, {"object writes", got.writes, max.writes},
	} {
		if x.got > x.max {
			return fmt.Errorf("%d %s, want at most %d (spent %+v)", x.got, x.what, x.max, got)
		}
	}
	return nil
}

// TestSlowExternalChangesArePaced checks that a change the cloud takes
// seconds to make costs a few calls and writes, not a storm: the step's
// own writes bring passes at once (their events), and each such pass must
// not write again or call the cloud again beyond an Observe. Each case runs
// with a short interval of 1s and counts, from the change to the end, the
// calls of the cloud and the writes of the object; the counts do not
// depend on how fast the machine is, only on the cloud's delays.
func TestSlowExternalChangesArePaced(t *testing.T) {
	const short = time.Second
	for _, tc := range []pacedChange{
		{
			// The delete takes 6s: a Delete per short interval (7),
			// each after its fence (7 writes), and a status write or
			// two; Observes at the short interval and after each write.
			name:   "slow delete",
			cloud:  func(c *cloud) { c.deleteDelay = 6 * time.Second },
			change: func(e *env) { e.delete("paced") },
			done:   func(e *env) { e.waitGone("paced") },
			max:    budget{deletes: 7, writes: 10, observes: 24},
		},
		{
			// The cloud refuses deletes for 4s: the failures back off.
			name:   "refused deletes",
			cloud:  func(c *cloud) { c.refuseDeletesUntil = time.Now().Add(4 * time.Second) },
			change: func(e *env) { e.delete("paced") },
			done:   func(e *env) { e.waitGone("paced") },
			max:    budget{deletes: 6, writes: 10, observes: 40},
		},
		{
			// The update takes 4s to show: an Update per short
			// interval at most.
			name:   "slow update",
			cloud:  func(c *cloud) { c.updateDelay = 4 * time.Second },
			change: func(e *env) { e.change("paced", func(b *v1.Bucket) { b.Spec.Size = 2 }) },
			done: func(e *env) {
				e.wait("paced", converged)
				bosuntest.Eventually(e.t, func(context.Context) error {
					if got, _ := e.cloud.bucket(e.ns + ".paced"); got.size != 2 {
						return fmt.Errorf("cloud size %d, want 2", got.size)
					}
					return nil
				})
			},
			max: budget{updates: 7, writes: 6, observes: 24},
		},
		{
			// The cloud refuses updates for 4s: the failures back off.
			name:   "refused updates",
			cloud:  func(c *cloud) { c.refuseUpdatesUntil = time.Now().Add(4 * time.Second) },
			change: func(e *env) { e.change("paced", func(b *v1.Bucket) { b.Spec.Size = 2 }) },
			done:   func(e *env) { e.wait("paced", converged) },
			max:    budget{updates: 6, writes: 10, observes: 40},
		},
		{
			// The connection Secret is deleted and the cloud refuses to
			// set a new password for 4s: the failures back off.
			name:  "refused credential repairs",
			cloud: func(c *cloud) { c.refuseRepairsUntil = time.Now().Add(4 * time.Second) },
			change: func(e *env) {
				if err := e.c.Delete(e.t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "paced-conn"}}); err != nil {
					e.t.Fatal(err)
				}
			},
			done: func(e *env) {
				e.waitCredentials("paced-conn", e.ns+".paced")
				e.wait("paced", converged)
			},
			max: budget{repairs: 6, writes: 10, observes: 40},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.run(t, short)
			if err := tc.max.over(got); err != nil {
				t.Error(err)
			}
		})
	}
}

// pacedChange is a change of an external resource the cloud is slow to
// make or refuses for a while, and its budget.
type pacedChange struct {
	name string
	// cloud sets the cloud up before the change.
	cloud func(c *cloud)
	// change makes the change, done waits for its end.
	change func(e *env)
	done   func(e *env)
	max    budget
}

// run makes the change on a converged Bucket, under a step with the
// short interval short, and returns what it cost from the change to its
// end.
func (tc pacedChange) run(t *testing.T, short time.Duration) budget {
	t.Helper()
	cl := newCloud()
	e := start(t, cl, nil, WithTiming(Timing{Short: short}))
	e.create("paced", 1, "paced-conn", nil)
	uid := string(e.wait("paced", converged).UID)
	// Let the passes that follow the convergence settle: a few polls.
	o := cl.observed()
	bosuntest.Eventually(t, func(context.Context) error {
		if n := cl.observed() - o; n < 3 {
			return fmt.Errorf("%d polls so far, want 3", n)
		}
		return nil
	})
	e.writes.Reset()
	var mark budget
	cl.set(func(c *cloud) {
		tc.cloud(c)
		mark = budget{creates: c.creates[uid], updates: c.updates[uid], deletes: c.deletes[uid], repairs: c.repairs[uid], observes: c.observes}
	})
	tc.change(e)
	tc.done(e)
	got := e.spent(uid, mark)
	t.Logf("spent %+v, writes %v", got, e.writes.Counts())
	return got
}

// TestBatterySlowDelete is the battery's delete that takes its external
// system a minute (6s under `make test`), with a short interval of 5s
// (1s): the step calls Delete at most once per short interval, commits
// its fence before each call, and in between only observes. For a delete
// of n short intervals the budget is n+1 Deletes, n+4 writes and 4n
// Observes, whatever the machine's speed.
func TestBatterySlowDelete(t *testing.T) {
	delay, short := figures.Size(6*time.Second, time.Minute), figures.Size(time.Second, 5*time.Second)
	n := int(delay / short)
	tc := pacedChange{
		cloud:  func(c *cloud) { c.deleteDelay = delay },
		change: func(e *env) { e.delete("paced") },
		done:   func(e *env) { e.waitGone("paced", bosuntest.Timeout(delay+30*time.Second)) },
		max:    budget{deletes: n + 1, writes: n + 4, observes: 4 * n},
	}
	got := tc.run(t, short)
	if err := tc.max.over(got); err != nil {
		t.Error(err)
	}
	const row, ex = "external delete that takes a minute", "managed step"
	figures.Record(t,
		figures.Figure{Test: row, Example: ex, Name: "delete takes", Value: delay.String()},
		figures.Figure{Test: row, Example: ex, Name: "short interval", Value: short.String()},
		figures.Figure{Test: row, Example: ex, Name: "Deletes", Value: strconv.Itoa(got.deletes), Goal: "<= " + strconv.Itoa(tc.max.deletes)},
		figures.Figure{Test: row, Example: ex, Name: "object writes", Value: strconv.Itoa(got.writes), Goal: "<= " + strconv.Itoa(tc.max.writes)},
		figures.Figure{Test: row, Example: ex, Name: "Observes", Value: strconv.Itoa(got.observes), Goal: "<= " + strconv.Itoa(tc.max.observes)},
	)
}

// TestSlowCreateIsPaced checks the same of a create whose resource takes
// 4s to become available: one Create, the pending mark, the outcome, the
// first-available mark and a status write or two.
func TestSlowCreateIsPaced(t *testing.T) {
	cl := newCloud()
	cl.readyDelay = 4 * time.Second
	e := start(t, cl, nil, WithTiming(Timing{Short: time.Second}))
	e.create("paced", 1, "", nil)
	uid := string(e.wait("paced", converged).UID)
	got := e.spent(uid, budget{})
	t.Logf("spent %+v, writes %v", got, e.writes.Counts())
	if err := (budget{creates: 1, writes: 10, observes: 24}).over(got); err != nil {
		t.Error(err)
	}
}
