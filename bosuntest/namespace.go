package bosuntest

import (
	"context"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/controlplane"
)

// maxPrefix bounds the name prefix taken from the test name, leaving room for
// the random suffix the API server adds within the 63 characters of a
// namespace name.
const maxPrefix = 40

// cleanupTimeout bounds the delete request Namespace makes when its test
// ends.
const cleanupTimeout = 10 * time.Second

// Namespace creates a namespace with a unique name derived from the test's
// name and returns that name.
//
// When the control plane runs the namespace controller (see
// controlplane.Options.ControllerManager), the namespace is deleted when the
// test ends, which deletes everything in it. The test does not wait for it
// to go: objects whose finalizers nobody removes any more (their
// controller has stopped with the test) keep it terminating until the
// control plane stops. Without the namespace controller a namespace never
// finishes terminating, so it is left in place.
func Namespace(t TB, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: namePrefix(t.Name())}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatalf("bosuntest: creating namespace for %s: %v", t.Name(), err)
	}
	controllers, err := controlplane.RunningControllers(t.Context(), c)
	if err != nil && !apierrors.IsForbidden(err) {
		t.Fatalf("bosuntest: %v", err)
	}
	if slices.Contains(controllers, controlplane.NamespaceController) {
		t.Cleanup(func() {
			// t.Context() is done by now.
			ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
			defer cancel()
			if err := c.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("bosuntest: deleting namespace %s: %v", ns.Name, err)
			}
		})
	}
	return ns.Name
}

// namePrefix turns a test name into a GenerateName prefix: lower-case letters,
// digits and single dashes, at most maxPrefix characters, ending in a dash.
func namePrefix(testName string) string {
	var b strings.Builder
	dash := true // no leading dash
	for _, r := range strings.ToLower(testName) {
		if b.Len() >= maxPrefix {
			break
		}
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	prefix := strings.TrimSuffix(b.String(), "-")
	if prefix == "" {
		prefix = "test"
	}
	return prefix + "-"
}
