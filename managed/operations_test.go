package managed

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/managed/changelog"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// waitOperation waits until the Bucket name records a long operation of
// kind that the cloud has polled, and returns its token.
func (e *env) waitOperation(name, kind string) string {
	e.t.Helper()
	var token string
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		b := &v1.Bucket{}
		if err := e.c.Get(ctx, e.key(name), b); err != nil {
			return err
		}
		v, ok := b.Annotations[annotationOperation]
		if !ok || !strings.HasPrefix(v, kind+":") {
			return fmt.Errorf("annotation %s is %q, want a %s operation", annotationOperation, v, kind)
		}
		token = strings.TrimPrefix(v, kind+":")
		if e.cloud.pollsOf(token) == 0 {
			return fmt.Errorf("operation %s not polled yet", token)
		}
		return nil
	})
	return token
}

// TestLongOperationsResumeAfterRestart checks that a create the cloud goes
// on with after Create returned is recorded on the object and polled, that
// an operator started again after a stop polls the same operation rather
// than creating again, and that a long update shows Updating with the
// bucket Available until it ends.
func TestLongOperationsResumeAfterRestart(t *testing.T) {
	cl := newCloud()
	cl.async = true
	ns := bosuntest.Namespace(t, shared.ControlPlane(t).Client)
	creating := map[string]cond{
		conditions.TypeReady:      {metav1.ConditionFalse, ReasonCreating},
		defaultConditionAvailable: {metav1.ConditionFalse, ReasonCreating},
		defaultConditionSynced:    {metav1.ConditionTrue, ReasonReconcileSuccess},
	}

	var token string
	t.Run("first process", func(t *testing.T) {
		e := startRig(t, cl, rig{ns: ns})
		e.create("slow", 1, "slow-conn", nil)
		token = e.waitOperation("slow", opCreate)
		e.wait("slow", creating)
	}) // The first operator stops here, its create still running.

	e := startRig(t, cl, rig{ns: ns})
	before := cl.pollsOf(token)
	bosuntest.Eventually(t, func(context.Context) error {
		if n := cl.pollsOf(token); n <= before {
			return fmt.Errorf("%d polls of %s, want more than the %d of the first process", n, token, before)
		}
		return nil
	})
	e.wait("slow", creating)
	if c, _, _ := cl.counts(); c != 1 {
		t.Fatalf("%d creates, want 1: the second process polls the first one's operation", c)
	}

	cl.finish(token)
	b := e.wait("slow", converged)
	if v, ok := b.Annotations[annotationOperation]; ok {
		t.Errorf("annotation %s = %q after the operation ended, want it gone", annotationOperation, v)
	}
	if _, err := e.secret(t.Context(), "slow-conn"); err != nil {
		t.Errorf("connection secret: %v", err)
	}

	// A long update: Synced and Ready say Updating, the bucket stays
	// Available, until the cloud is done.
	e.change("slow", func(b *v1.Bucket) { b.Spec.Size = 2 })
	update := e.waitOperation("slow", opUpdate)
	b = e.wait("slow", map[string]cond{
		conditions.TypeReady:      {metav1.ConditionFalse, ReasonUpdating},
		defaultConditionSynced:    {metav1.ConditionFalse, ReasonUpdating},
		defaultConditionAvailable: {metav1.ConditionTrue, ReasonAvailable},
	})
	gen := b.Generation
	cl.finish(update)
	b = e.wait("slow", converged)
	if got, _ := cl.bucket(ns + ".slow"); got.size != 2 {
		t.Errorf("cloud size %d, want 2", got.size)
	}
	cl.set(func(c *cloud) {
		if len(c.ops) != 2 {
			t.Errorf("%d operations started, want 2 (one create, one update)", len(c.ops))
		}
	})
	var got []string
	for _, c := range b.Status.Changes {
		got = append(got, fmt.Sprintf("%s %s %d", c.Operation, c.Outcome, c.Generation))
	}
	want := []string{
		"create " + string(changelog.OutcomeStarted) + " 1",
		"create " + string(changelog.OutcomeSucceeded) + " 1",
		fmt.Sprintf("update %s %d", changelog.OutcomeStarted, gen),
		fmt.Sprintf("update %s %d", changelog.OutcomeSucceeded, gen),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("change log (-want +got):\n%s", diff)
	}
}
