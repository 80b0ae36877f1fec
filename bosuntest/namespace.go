package bosuntest

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxPrefix bounds the name prefix taken from the test name, leaving room for
// the random suffix the API server adds within the 63 characters of a
// namespace name.
const maxPrefix = 40

// Namespace creates a namespace with a unique name derived from the test's
// name and returns that name. The namespace is not deleted afterwards: without
// a kube-controller-manager a namespace never finishes terminating.
func Namespace(t testing.TB, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: namePrefix(t.Name())}}
	if err := c.Create(t.Context(), ns); err != nil {
		t.Fatalf("bosuntest: creating namespace for %s: %v", t.Name(), err)
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
