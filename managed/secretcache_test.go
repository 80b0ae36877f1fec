package managed

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
)

// TestCacheConnectionSecretsOnlyOptions checks the cache options
// CacheConnectionSecretsOnly leaves: the label required of Secrets, added
// to a selector already there, and other kinds' options kept.
func TestCacheConnectionSecretsOnlyOptions(t *testing.T) {
	tests := []struct {
		name string
		have map[client.Object]cache.ByObject
		// want are the selectors of Secrets and ConfigMaps, "" for none.
		want []string
	}{
		{"nothing before", nil, []string{LabelConnectionSecret, ""}},
		{"a selector of Secrets before", map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Label: labels.SelectorFromSet(labels.Set{"team": "a"})},
		}, []string{LabelConnectionSecret + ",team=a", ""}},
		{"another kind before", map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Label: labels.SelectorFromSet(labels.Set{"team": "a"})},
		}, []string{LabelConnectionSecret, "team=a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := cache.Options{ByObject: tt.have}
			CacheConnectionSecretsOnly(&o)
			got := []string{"", ""}
			for obj, by := range o.ByObject {
				i := 0
				if _, ok := obj.(*corev1.ConfigMap); ok {
					i = 1
				}
				if by.Label != nil {
					got[i] = by.Label.String()
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("selectors of Secrets and ConfigMaps (-want +got):\n%s", diff)
			}
			kinds := 1
			if tt.want[1] != "" {
				kinds = 2
			}
			if len(o.ByObject) != kinds {
				t.Errorf("%d entries in ByObject, want %d: one per kind", len(o.ByObject), kinds)
			}
		})
	}
}

// TestCacheConnectionSecretsOnlyCaches starts a cache with
// CacheConnectionSecretsOnly on the real API server: it lists the labelled
// Secret of a namespace and not the other one, which the API server holds.
func TestCacheConnectionSecretsOnlyCaches(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	for _, s := range []*corev1.Secret{
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "conn", Labels: map[string]string{LabelConnectionSecret: "true"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "unrelated"}},
	} {
		if err := cp.Client.Create(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	o := cache.Options{Scheme: cp.Scheme}
	CacheConnectionSecretsOnly(&o)
	c, err := cache.New(cp.Config, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = c.Start(ctx) }()
	var names []string
	bosuntest.Eventually(t, func(ctx context.Context) error {
		list := &corev1.SecretList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		names = nil
		for _, s := range list.Items {
			names = append(names, s.Name)
		}
		if len(names) == 0 {
			return fmt.Errorf("no Secret cached yet")
		}
		return nil
	})
	if diff := cmp.Diff([]string{"conn"}, names); diff != "" {
		t.Errorf("Secrets cached (-want +got):\n%s", diff)
	}
}

// TestLimitedSecretCacheLabelsAndRepairs runs the step with its manager's
// cache of Secrets limited by CacheConnectionSecretsOnly. The connection
// Secret it writes is labelled; one that loses the label (as one an
// older version wrote, which the cache does not hold) gets it back from
// the next pass, with the password unchanged and no repair; a deleted
// one is written again, labelled, with new credentials that work.
func TestLimitedSecretCacheLabelsAndRepairs(t *testing.T) {
	cl := newCloud()
	e := startRig(t, cl, rig{configure: func(o *ctrl.Options) { CacheConnectionSecretsOnly(&o.Cache) }})
	e.create("lim", 1, "lim-conn", nil)
	bucket := nameOf(e.wait("lim", converged))
	first := e.waitCredentials("lim-conn", bucket)
	e.waitLabelled("lim-conn")

	// The label goes: the Secret leaves the cache, and the next pass
	// finds it on the API server and labels it.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		s, err := e.secret(ctx, "lim-conn")
		if err != nil {
			return err
		}
		delete(s.Labels, LabelConnectionSecret)
		return e.c.Update(ctx, s)
	})
	s := e.waitLabelled("lim-conn")
	if !bytes.Equal(s.Data["password"], first) {
		t.Error("the password changed when the Secret was labelled, want it kept")
	}
	cl.set(func(c *cloud) {
		if n := sum(c.repairs); n != 0 {
			t.Errorf("%d repairs while labelling the Secret, want none", n)
		}
	})

	// A deleted Secret is written again.
	if err := e.c.Delete(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "lim-conn"}}); err != nil {
		t.Fatal(err)
	}
	second := e.waitCredentials("lim-conn", bucket)
	if bytes.Equal(second, first) {
		t.Error("the password of the Secret written again is the first one, want new credentials")
	}
	e.waitLabelled("lim-conn")
	e.wait("lim", converged)
}

// waitLabelled waits until the Secret name carries LabelConnectionSecret,
// and returns it.
func (e *env) waitLabelled(name string) *corev1.Secret {
	e.t.Helper()
	var s *corev1.Secret
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		var err error
		if s, err = e.secret(ctx, name); err != nil {
			return err
		}
		if !labelled(s) {
			return fmt.Errorf("secret %s has labels %v, want %s", name, s.Labels, LabelConnectionSecret)
		}
		return nil
	})
	return s
}
