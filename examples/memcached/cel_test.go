package memcached

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	cachev1 "github.com/bosunkit/bosun/examples/memcached/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/memcached/config/policy"
)

// Messages of the CEL rules of the Memcached CRD, as the markers of
// package v1alpha1 write them.
const (
	portImmutable   = "port is immutable; delete and recreate the Memcached to change it"
	imageTagMessage = "image must name a tag or a digest"
)

// wantInvalid fails the test unless err is a 422 Invalid whose message
// names each of parts.
func wantInvalid(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != http.StatusUnprocessableEntity {
		t.Errorf("%s: error = %v, want a 422 Invalid", what, err)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not name %q", what, err, p)
		}
	}
}

// TestCELPortIsImmutable checks the transition rule of spec.port: the API
// server refuses a new port with the rule's message, and lets other fields
// change.
func TestCELPortIsImmutable(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	m := &cachev1.Memcached{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"},
		Spec:       cachev1.MemcachedSpec{Size: 1, Port: 11311},
	}
	if err := cp.Client.Create(t.Context(), m); err != nil {
		t.Fatalf("creating memcached: %v", err)
	}

	changed := m.DeepCopy()
	changed.Spec.Port = 11312
	wantInvalid(t, "new port", cp.Client.Update(t.Context(), changed), "spec.port", portImmutable)

	// Removing the port is a change too: the API server defaults it again
	// to 11211.
	removed := m.DeepCopy()
	removed.Spec.Port = 0
	wantInvalid(t, "port removed", cp.Client.Update(t.Context(), removed), "spec.port", portImmutable)

	resized := m.DeepCopy()
	resized.Spec.Size = 2
	if err := cp.Client.Update(t.Context(), resized); err != nil {
		t.Errorf("new size, same port: %v, want it accepted", err)
	}
}

// TestCELImageNeedsTagOrDigest checks the rule of spec.image: an image
// names a tag or a digest; a registry's port is not a tag.
func TestCELImageNeedsTagOrDigest(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	digest := "sha256:" + strings.Repeat("ab", 32)
	tests := []struct {
		name, image string
		valid       bool
	}{
		{"tag", "memcached:1.6", true},
		{"registry-port-and-tag", "registry.example:5000/cache/memcached:1.6.38-alpine", true},
		{"digest", "memcached@" + digest, true},
		{"tag-and-digest", "memcached:1.6@" + digest, true},
		{"bare", "memcached", false},
		{"registry-port-only", "registry.example:5000/memcached", false},
		{"short-digest", "memcached@sha256:abc", false},
	}
	for _, tt := range tests {
		m := &cachev1.Memcached{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tt.name},
			Spec:       cachev1.MemcachedSpec{Size: 1, Image: tt.image},
		}
		err := cp.Client.Create(t.Context(), m)
		switch {
		case tt.valid && err != nil:
			t.Errorf("image %s: %v, want it accepted", tt.image, err)
		case !tt.valid:
			wantInvalid(t, "image "+tt.image, err, "spec.image", imageTagMessage)
		}
	}

	// The rule holds on updates as well.
	m := &cachev1.Memcached{}
	if err := cp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "tag"}, m); err != nil {
		t.Fatal(err)
	}
	m.Spec.Image = "memcached"
	wantInvalid(t, "image changed to a bare name", cp.Client.Update(t.Context(), m), "spec.image", imageTagMessage)
}

// TestPolicyProductionSize installs the ValidatingAdmissionPolicy of
// config/policy and its binding, and checks that in a namespace labelled
// environment=production a Memcached of one server is refused and one of
// two accepted, while elsewhere one server is fine. The policy and binding
// are deleted when the test ends; no other test labels its namespace.
func TestPolicyProductionSize(t *testing.T) {
	cp := shared.ControlPlane(t)
	p, err := policy.Policy()
	if err != nil {
		t.Fatal(err)
	}
	b, err := policy.Binding()
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{p, b} {
		if err := cp.Client.Create(t.Context(), obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := cp.Client.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting %T %s: %v", obj, obj.GetName(), err)
			}
		})
	}

	prod := bosuntest.Namespace(t, cp.Client)
	ns := &corev1.Namespace{}
	if err := cp.Client.Get(t.Context(), client.ObjectKey{Name: prod}, ns); err != nil {
		t.Fatal(err)
	}
	base := ns.DeepCopy()
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[policy.LabelKey] = policy.LabelValue
	if err := cp.Client.Patch(t.Context(), ns, client.MergeFrom(base)); err != nil {
		t.Fatalf("labelling namespace %s: %v", prod, err)
	}
	plain := bosuntest.Namespace(t, cp.Client)

	memcached := func(ns string, size int32) *cachev1.Memcached {
		return &cachev1.Memcached{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: fmt.Sprintf("size%d-", size)},
			Spec:       cachev1.MemcachedSpec{Size: size},
		}
	}

	// The API server loads a new policy and binding a moment after they
	// are created: until then a single server gets in, and is removed.
	var refused error
	bosuntest.Eventually(t, func(ctx context.Context) error {
		m := memcached(prod, 1)
		err := cp.Client.Create(ctx, m)
		if err == nil {
			if err := cp.Client.Delete(ctx, m); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting %s, admitted before the policy was loaded: %w", m.Name, err)
			}
			return errors.New("a Memcached of one server was admitted in a production namespace")
		}
		refused = err
		return nil
	})
	t.Logf("refused: %v", refused)
	wantInvalid(t, "size 1 in production", refused, "runs at least 2 servers", p.Name)

	if err := cp.Client.Create(t.Context(), memcached(prod, 2)); err != nil {
		t.Errorf("size 2 in production: %v, want it accepted", err)
	}
	if err := cp.Client.Create(t.Context(), memcached(plain, 1)); err != nil {
		t.Errorf("size 1 in a namespace without the label: %v, want it accepted", err)
	}
}

// TestCRDValidationRules checks that the generated CRD carries the CEL
// rules of the Memcached spec.
func TestCRDValidationRules(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	spec := crds[0].Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	for _, tt := range []struct{ field, rule, message string }{
		{"port", "self == oldSelf", portImmutable},
		{"image", "self.matches(", imageTagMessage},
	} {
		rules := spec.Properties[tt.field].XValidations
		found := false
		for _, r := range rules {
			if strings.HasPrefix(r.Rule, tt.rule) && strings.HasPrefix(r.Message, tt.message) {
				found = true
			}
		}
		if !found {
			t.Errorf("spec.%s: rules %+v, want one %q with message %q", tt.field, rules, tt.rule, tt.message)
		}
	}
}
