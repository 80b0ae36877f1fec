package managed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/managed/changelog"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// ignoreTime leaves the entries' times out of comparisons.
var ignoreTime = cmpopts.IgnoreFields(changelog.Entry{}, "Time")

// waitChanges waits until the change log of the Bucket name is want, or
// one of the others, times aside, and returns the Bucket.
func (e *env) waitChanges(name string, want []changelog.Entry, others ...[]changelog.Entry) *v1.Bucket {
	e.t.Helper()
	var got *v1.Bucket
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		b := &v1.Bucket{}
		if err := e.c.Get(ctx, e.key(name), b); err != nil {
			return err
		}
		for _, o := range others {
			if cmp.Equal(o, b.Status.Changes, ignoreTime) {
				got = b
				return nil
			}
		}
		if diff := cmp.Diff(want, b.Status.Changes, ignoreTime); diff != "" {
			return fmt.Errorf("change log (-want +got):\n%s", diff)
		}
		got = b
		return nil
	})
	return got
}

// TestChangeLog checks that each Create, Update and Delete the step
// performs, failed or not, is recorded in the Bucket's status with who did
// it, on what, for which generation and how it ended, bounded to the
// configured length.
func TestChangeLog(t *testing.T) {
	cl := newCloud()
	cl.failCreate = errors.New("cloud is down")
	e := start(t, cl, nil, WithChangeLogLength(3))
	e.create("logged", 1, "", nil)
	ctrlName := "bucket-" + e.ns
	name := e.ns + ".logged"
	entry := func(op string, gen int64, out changelog.Outcome, msg string) changelog.Entry {
		return changelog.Entry{Controller: ctrlName, Operation: op, ExternalName: name, Generation: gen, Outcome: out, Message: msg}
	}
	failed := entry(opCreate, 1, changelog.OutcomeFailed, "cloud is down")
	// Retried after a short interval, the create may have failed again by
	// the time the log is read.
	e.waitChanges("logged", []changelog.Entry{failed}, []changelog.Entry{failed, failed}, []changelog.Entry{failed, failed, failed})

	cl.set(func(c *cloud) { c.failCreate = nil })
	e.change("logged", func(b *v1.Bucket) { b.Labels = map[string]string{"nudge": "1"} })
	e.wait("logged", converged)
	created := entry(opCreate, 1, changelog.OutcomeSucceeded, "")
	// The failed create is retried after its backoff of a short interval,
	// and may fail again before the cloud comes back, on a busy machine:
	// the log of three then holds two failed entries before the create.
	b := e.waitChanges("logged", []changelog.Entry{failed, created}, []changelog.Entry{failed, failed, created})
	if at := b.Status.Changes[len(b.Status.Changes)-1].Time; at.IsZero() {
		t.Error("the create's entry has no time")
	}

	e.change("logged", func(b *v1.Bucket) { b.Spec.Size = 2 })
	// The late-initialised region made generation 2, the size 3.
	gen := e.wait("logged", converged).Generation
	updated := entry(opUpdate, gen, changelog.OutcomeSucceeded, "")
	e.waitChanges("logged", []changelog.Entry{failed, created, updated})

	// A drift correction is an update too; the oldest entry goes.
	cl.set(func(c *cloud) { c.buckets[name].size = 5 })
	e.waitChanges("logged", []changelog.Entry{created, updated, updated})

	// The Delete, once, however many passes wait for the bucket to go;
	// another finalizer keeps the object to read it.
	cl.set(func(c *cloud) { c.deleteObserves = 3 })
	e.change("logged", func(b *v1.Bucket) { b.Finalizers = append(b.Finalizers, holder) })
	e.delete("logged")
	// Setting deletionTimestamp made generation gen+1.
	deleted := entry(opDelete, gen+1, changelog.OutcomeSucceeded, "")
	e.waitChanges("logged", []changelog.Entry{updated, updated, deleted})
	bosuntest.Eventually(t, func(ctx context.Context) error {
		b := &v1.Bucket{}
		if err := e.c.Get(ctx, e.key("logged"), b); err != nil {
			return err
		}
		if slices.Contains(b.Finalizers, finalizer) {
			return errors.New("the step's finalizer is still there")
		}
		return nil
	})
	e.waitChanges("logged", []changelog.Entry{updated, updated, deleted})
	e.change("logged", func(b *v1.Bucket) { b.Finalizers = nil })
	e.waitGone("logged")
}

// TestChangeLogSurvivesFailedStatusWrite fails the status write that
// carries the entry of a Create, once: the entry is written by a later
// pass, exactly once.
func TestChangeLogSurvivesFailedStatusWrite(t *testing.T) {
	cl := newCloud()
	var failed atomic.Bool
	loseOnce := func(c client.Client) client.Client {
		return interceptor.NewClient(asWithWatch(c), interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
				data, err := patch.Data(obj)
				if err == nil && sub == "status" && strings.Contains(string(data), `"operation":"create"`) && failed.CompareAndSwap(false, true) {
					return errors.New("injected: lost the status write")
				}
				return cl.SubResource(sub).Patch(ctx, obj, patch, opts...)
			},
		})
	}
	e := start(t, cl, loseOnce)
	e.create("kept", 1, "", nil)
	e.wait("kept", converged)
	if !failed.Load() {
		t.Fatal("no status write carried the create's entry")
	}
	created := changelog.Entry{Controller: "bucket-" + e.ns, Operation: opCreate, ExternalName: e.ns + ".kept", Generation: 1, Outcome: changelog.OutcomeSucceeded}
	e.waitChanges("kept", []changelog.Entry{created})
}

// TestRestoreChanges checks, entry by entry, what a pass does with the
// change-log entries the step added earlier: one the object holds (as the
// API server stores it, to the second) is saved and forgotten; one it lacks
// is put back in the order of time and kept until seen; one the bound of
// the log would drop anyway is forgotten.
func TestRestoreChanges(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	entry := func(sec int, op string) changelog.Entry {
		return changelog.Entry{Time: metav1.NewTime(t0.Add(time.Duration(sec)*time.Second + 300*time.Millisecond)), Controller: "c", Operation: op, Outcome: changelog.OutcomeSucceeded}
	}
	stored := func(e changelog.Entry) changelog.Entry {
		e.Time = metav1.NewTime(e.Time.Truncate(time.Second))
		return e
	}
	tests := []struct {
		name        string
		log         []changelog.Entry
		pending     []changelog.Entry
		wantLog     []changelog.Entry
		wantPending []changelog.Entry
	}{
		{
			name:    "saved",
			log:     []changelog.Entry{stored(entry(1, opCreate))},
			pending: []changelog.Entry{entry(1, opCreate)},
			wantLog: []changelog.Entry{stored(entry(1, opCreate))},
		},
		{
			name:        "lost",
			log:         []changelog.Entry{stored(entry(1, opCreate)), stored(entry(3, opUpdate))},
			pending:     []changelog.Entry{entry(2, opUpdate)},
			wantLog:     []changelog.Entry{stored(entry(1, opCreate)), entry(2, opUpdate), stored(entry(3, opUpdate))},
			wantPending: []changelog.Entry{entry(2, opUpdate)},
		},
		{
			name:    "beyond the bound",
			log:     []changelog.Entry{stored(entry(2, opUpdate)), stored(entry(3, opUpdate)), stored(entry(4, opUpdate))},
			pending: []changelog.Entry{entry(1, opCreate)},
			wantLog: []changelog.Entry{stored(entry(2, opUpdate)), stored(entry(3, opUpdate)), stored(entry(4, opUpdate))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStep[*v1.Bucket](NopConnector[*v1.Bucket](), WithChangeLogLength(3))
			b := &v1.Bucket{ObjectMeta: metav1.ObjectMeta{UID: "u"}}
			b.Status.Changes = tt.log
			s.memory.change(b, func(m *memo) { m.changes = tt.pending })
			s.log.restore(&bosun.Pass[*v1.Bucket]{Object: b, Log: logr.Discard()})
			if diff := cmp.Diff(tt.wantLog, b.Status.Changes, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("change log (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantPending, s.memory.get(b).changes, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("entries kept (-want +got):\n%s", diff)
			}
		})
	}
}
