package managed

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// TestDeleteOfStaleCopyKeepsNewerResource deletes a Bucket, creates a new
// one of the same name (same external name, new UID) and lets it make its
// bucket, then runs a pass on a stale copy of the old, deleting Bucket, as
// a cache that still holds it would. The cloud keeps no owner marks, so
// only the fence before Delete can tell: its write fails, and the newer
// Bucket's bucket survives.
func TestDeleteOfStaleCopyKeepsNewerResource(t *testing.T) {
	cl := newCloud()
	cl.noMarks = true
	e := start(t, cl, nil)
	e.create("shop", 1, "", nil)
	stale := e.wait("shop", converged)
	e.delete("shop")
	e.waitGone("shop")
	e.create("shop", 2, "", nil)
	fresh := e.wait("shop", converged)
	bucket := ExternalName(fresh)
	if bucket != ExternalName(stale) {
		t.Fatalf("external names %q and %q differ: the test needs them equal", ExternalName(stale), bucket)
	}

	// The stale copy: the old Bucket as it was when its deletion began.
	now := metav1.Now()
	stale.DeletionTimestamp = &now
	var (
		mu      sync.Mutex
		patches []error
	)
	direct, err := client.NewWithWatch(e.cp.Config, client.Options{Scheme: e.cp.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	reads := interceptor.NewClient(direct, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if b, ok := obj.(*v1.Bucket); ok && key == e.key("shop") {
				stale.DeepCopyInto(b)
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			err := c.Patch(ctx, obj, patch, opts...)
			if _, ok := obj.(*v1.Bucket); ok {
				mu.Lock()
				patches = append(patches, err)
				mu.Unlock()
			}
			return err
		},
	})
	r := &bosun.Reconciler[*v1.Bucket]{
		Name:      "stale-" + e.ns,
		Steps:     []bosun.Step[*v1.Bucket]{NewStep[*v1.Bucket](cl, testOpts()...)},
		Finalizer: finalizer,
		Client:    reads,
	}
	var deletes0 int
	cl.set(func(c *cloud) { deletes0 = c.deletes[string(stale.UID)] })
	if _, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: e.key("shop")}); err != nil {
		t.Errorf("reconcile of the stale copy: %v, want a quiet requeue", err)
	}

	if got, ok := cl.bucket(bucket); !ok || got.size != 2 {
		t.Errorf("the newer Bucket's bucket: %+v, exists %v; want it untouched", got, ok)
	}
	cl.set(func(c *cloud) {
		if n := c.deletes[string(stale.UID)] - deletes0; n != 0 {
			t.Errorf("%d deletes from the stale copy reached the cloud, want none", n)
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if len(patches) != 1 || !apierrors.IsConflict(patches[0]) && !apierrors.IsNotFound(patches[0]) {
		t.Errorf("patches of the stale copy: %v, want one fence write refused with Conflict or NotFound", patches)
	}
	e.wait("shop", converged)
}

// TestAmbiguousCreateErrorAdopts makes the cloud's Create make the bucket
// and then answer with a timeout, on a cloud that shows new buckets late
// and keeps no owner marks: the step does not record a failure, does not
// create again, and adopts the one bucket once it shows.
func TestAmbiguousCreateErrorAdopts(t *testing.T) {
	cl := newCloud()
	cl.noMarks = true
	cl.lag = time.Second
	cl.lostAnswer = &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
	e := start(t, cl, nil, WithTiming(Timing{CreationGrace: 2 * time.Second}))
	e.create("amb", 1, "", nil)
	b := e.wait("amb", converged)
	if _, ok := b.Annotations[annotationCreateFailed]; ok {
		t.Errorf("annotations %v record a failed create after an answer that was lost", b.Annotations)
	}
	cl.set(func(c *cloud) {
		if sum(c.creates) != 1 || c.made != 1 {
			t.Errorf("%d creates made %d buckets, want exactly one", sum(c.creates), c.made)
		}
	})
}

// TestAmbiguousCreateErrorWithProviderNamesStops makes the cloud's Create
// make a bucket with a name it assigns and then answer with a timeout: the
// step cannot know what was made, so it stops with CreateIncomplete and
// does not create again.
func TestAmbiguousCreateErrorWithProviderNamesStops(t *testing.T) {
	cl := newCloud()
	cl.assignNames = true
	cl.lostAnswer = OutcomeUnknown(errors.New("the cloud hung up"))
	e := start(t, cl, nil, WithProviderNames(), WithTiming(Timing{CreationGrace: 200 * time.Millisecond}))
	e.create("lost", 1, "", nil)
	b := e.wait("lost", map[string]cond{
		conditions.TypeReady:   {metav1.ConditionFalse, ReasonCreateIncomplete},
		defaultConditionSynced: {metav1.ConditionFalse, ReasonCreateIncomplete},
	})
	if _, ok := b.Annotations[annotationCreateFailed]; ok {
		t.Errorf("annotations %v record a failed create after an answer that was lost", b.Annotations)
	}
	// A change of the object brings a pass: it stops again.
	o0 := cl.observed()
	e.change("lost", func(b *v1.Bucket) { b.Labels = map[string]string{"nudge": "1"} })
	bosuntest.Eventually(t, func(context.Context) error {
		if cl.observed() == o0 {
			return errors.New("no pass since the change")
		}
		return nil
	})
	e.wait("lost", map[string]cond{defaultConditionSynced: {metav1.ConditionFalse, ReasonCreateIncomplete}})
	if c, _, _ := cl.counts(); c != 1 {
		t.Errorf("%d creates, want 1", c)
	}
}

// TestOutcomeUnknown checks which create errors leave the outcome unknown.
func TestOutcomeUnknown(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"plain", errors.New("quota exceeded"), false},
		{"invalid spec", InvalidSpec(errors.New("bad")), false},
		{"marked", OutcomeUnknown(errors.New("the server went away")), true},
		{"marked and wrapped", errors.Join(errors.New("x"), OutcomeUnknown(errors.New("y"))), true},
		{"deadline", context.DeadlineExceeded, true},
		{"canceled", context.Canceled, true},
		{"net timeout", &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, true},
		{"unexpected EOF", errors.Join(errors.New("reading"), io.ErrUnexpectedEOF), true},
		{"connection reset", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true},
		{"connection refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := outcomeUnknown(tt.err); got != tt.want {
				t.Errorf("outcomeUnknown(%v) = %v, want %v", tt.err, got, tt.want)
			}
			if tt.name == "marked" && !errors.Is(tt.err, ErrOutcomeUnknown) {
				t.Errorf("OutcomeUnknown(err) does not wrap ErrOutcomeUnknown")
			}
		})
	}
}
