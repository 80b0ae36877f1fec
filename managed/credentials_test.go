package managed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// cancelling is the managed step with a context that the test can cancel
// in the middle of a pass, as a manager that stops does.
type cancelling struct {
	*Step[*v1.Bucket]
	mu     sync.Mutex
	cancel context.CancelFunc
}

func (c *cancelling) Do(ctx context.Context, req *bosun.Pass[*v1.Bucket]) (ctrl.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.mu.Lock()
	c.cancel = cancel
	c.mu.Unlock()
	return c.Step.Do(ctx, req)
}

// stop cancels the context of the pass under way.
func (c *cancelling) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
}

// waitCredentials waits until Secret name holds the password that opens
// bucket, and returns it.
func (e *env) waitCredentials(name, bucket string) []byte {
	e.t.Helper()
	var pw []byte
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		s, err := e.secret(ctx, name)
		if err != nil {
			return err
		}
		pw = s.Data["password"]
		if !e.cloud.login(bucket, pw) {
			return fmt.Errorf("secret %s: password %q does not open bucket %s (keys %v)", name, pw, bucket, sortedKeys(s.Data))
		}
		return nil
	})
	return pw
}

// TestCreateOutcomeSurvivesCancel cancels the pass's context right after
// Create returns, as a manager stopping for a rollout does: the outcome and
// the password (which only Create returns, the cloud cannot repair it) are
// written all the same.
func TestCreateOutcomeSurvivesCancel(t *testing.T) {
	cl := newCloud()
	cl.noRepair = true
	var wrapped *cancelling
	cl.afterCreate = func(*v1.Bucket) { wrapped.stop() }
	e := startRig(t, cl, rig{step: func(s *Step[*v1.Bucket]) bosun.Step[*v1.Bucket] {
		wrapped = &cancelling{Step: s}
		return wrapped
	}})
	e.create("cut", 1, "cut-conn", nil)
	e.waitCredentials("cut-conn", e.waitName("cut"))
	bosuntest.Eventually(t, func(context.Context) error {
		b := e.get("cut")
		if _, ok := b.Annotations[annotationCreateSucceeded]; !ok {
			return fmt.Errorf("annotations %v lack %s", b.Annotations, annotationCreateSucceeded)
		}
		return nil
	})
	e.wait("cut", converged)
	if c, _, _ := cl.counts(); c != 1 {
		t.Errorf("%d creates, want 1", c)
	}
}

// TestDeletedSecretIsRepaired deletes the connection Secret of a converged
// Bucket: while the cloud refuses to set new credentials the Bucket is not
// Ready, and then the Secret comes back with a new password that works.
func TestDeletedSecretIsRepaired(t *testing.T) {
	cl := newCloud()
	e := start(t, cl, nil)
	e.create("rep", 1, "rep-conn", nil)
	bucket := nameOf(e.wait("rep", converged))
	first := e.waitCredentials("rep-conn", bucket)

	cl.set(func(c *cloud) { c.failRepair = errors.New("the cloud is read-only today") })
	if err := e.c.Delete(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "rep-conn"}}); err != nil {
		t.Fatal(err)
	}
	e.wait("rep", map[string]cond{
		conditions.TypeReady:      {metav1.ConditionFalse, ReasonCredentialRepairFailed},
		defaultConditionSynced:    {metav1.ConditionFalse, ReasonCredentialRepairFailed},
		defaultConditionAvailable: {metav1.ConditionFalse, ReasonCredentialsMissing},
	})

	cl.set(func(c *cloud) { c.failRepair = nil })
	e.wait("rep", converged)
	second := e.waitCredentials("rep-conn", bucket)
	if string(second) == string(first) {
		t.Errorf("password %q unchanged, want a new one set by the repair", second)
	}
}

// TestCrashBeforePublishIsRepaired loses the write of the connection Secret
// that follows Create, as if the process stopped between the two: the next
// pass sets new credentials, and they work.
func TestCrashBeforePublishIsRepaired(t *testing.T) {
	cl := newCloud()
	var lost atomic.Bool
	dropFirstPassword := func(c client.Client) client.Client {
		return interceptor.NewClient(asWithWatch(c), interceptor.Funcs{
			Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if s, ok := obj.(*corev1.Secret); ok && s.Data["password"] != nil && lost.CompareAndSwap(false, true) {
					return errors.New("injected: the process stopped before the secret was written")
				}
				return cl.Create(ctx, obj, opts...)
			},
		})
	}
	e := start(t, cl, dropFirstPassword)
	e.create("crash", 1, "crash-conn", nil)
	bucket := nameOf(e.wait("crash", converged))
	pw := e.waitCredentials("crash-conn", bucket)
	if !lost.Load() {
		t.Fatal("no secret write was lost: the test did not exercise the crash")
	}
	if string(pw) == "pw-"+bucket+"-s3cr3t" {
		t.Errorf("the secret holds Create's password, want repaired credentials")
	}
	cl.set(func(c *cloud) {
		if sum(c.creates) != 1 || sum(c.repairs) != 1 {
			t.Errorf("%d creates and %d repairs, want 1 and 1", sum(c.creates), sum(c.repairs))
		}
	})
}

// TestInvalidSecretName names a connection Secret no Secret can have (254
// characters): the spec is invalid, so the step makes nothing, sets no
// credentials and writes nothing on a pass that finds nothing new, rather
// than retrying a create of the Secret the API server refuses, and setting
// new credentials on each try; a valid name then converges.
func TestInvalidSecretName(t *testing.T) {
	cl := newCloud()
	e := start(t, cl, nil)
	e.create("badname", 1, strings.Repeat("s", 254), nil)
	invalid := map[string]cond{
		conditions.TypeReady:   {metav1.ConditionFalse, ReasonInvalidSpec},
		defaultConditionSynced: {metav1.ConditionFalse, ReasonInvalidSpec},
	}
	e.wait("badname", invalid)
	e.touch("badname", "settled")
	writes := e.writes.Total()
	e.touch("badname", "again")
	if w := e.writes.Writes()[writes:]; len(w) > 0 {
		t.Errorf("a pass that found nothing new wrote %v", w)
	}
	uid := string(e.get("badname").UID)
	cl.set(func(c *cloud) {
		if c.creates[uid] != 0 || c.repairs[uid] != 0 {
			t.Errorf("%d creates and %d credential repairs for an invalid spec, want none", c.creates[uid], c.repairs[uid])
		}
	})

	e.change("badname", func(b *v1.Bucket) { b.Spec.ConnectionSecret = "good-conn" })
	e.waitCredentials("good-conn", e.waitName("badname"))
	e.wait("badname", converged)
}
