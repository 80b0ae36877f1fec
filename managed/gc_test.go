package managed

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/bosuntest"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// TestGarbageCollectorCollectsConnectionSecret needs the garbage collector
// of the shared control plane (Options.ControllerManager, set in
// main_test.go). A Bucket moves its connection details to a Secret of
// another name; the step writes the new Secret and leaves the old one,
// which the Bucket still owns. When the Bucket is deleted, the step's
// Cleanup deletes the Secret it names, and the garbage collector the old
// one, which the step no longer knows about.
func TestGarbageCollectorCollectsConnectionSecret(t *testing.T) {
	cl := newCloud()
	e := start(t, cl, nil)
	b := e.create("moving", 1, "first-conn", nil)
	e.wait("moving", converged)
	bucket := e.ns + ".moving"
	e.waitCredentials("first-conn", bucket)

	e.change("moving", func(b *v1.Bucket) { b.Spec.ConnectionSecret = "second-conn" })
	e.waitCredentials("second-conn", bucket)
	for _, name := range []string{"first-conn", "second-conn"} {
		s, err := e.secret(t.Context(), name)
		if err != nil {
			t.Fatalf("connection secret %s: %v", name, err)
		}
		if !metav1.IsControlledBy(s, b) {
			t.Fatalf("connection secret %s owners %v, want controlled by the bucket", name, s.OwnerReferences)
		}
	}

	e.writes.Reset()
	e.delete("moving")
	e.waitGone("moving")
	bosuntest.Eventually(t, func(ctx context.Context) error {
		for _, name := range []string{"first-conn", "second-conn"} {
			_, err := e.secret(ctx, name)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return fmt.Errorf("reading connection secret %s: %w", name, err)
			default:
				return fmt.Errorf("connection secret %s still exists", name)
			}
		}
		return nil
	}, bosuntest.Timeout(time.Minute))
	var deleted []string
	for _, w := range e.writes.Writes() {
		if w.Verb == bosuntest.VerbDelete && w.Kind == "Secret" {
			deleted = append(deleted, w.Name)
		}
	}
	if diff := cmp.Diff([]string{"second-conn"}, deleted); diff != "" {
		t.Errorf("Secrets the step deleted (-want +got):\n%s", diff)
	}
}
