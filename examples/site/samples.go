package site

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
)

// Samples returns the Sites the demo creates in namespace: "docs", with the
// pages index and guide and the theme of SampleThemes, and "notes", with a
// single page and no theme. Both become Ready once PrepareSamples has made
// the theme Secret. Each call returns new objects.
func Samples(namespace string) []client.Object {
	site := func(name, title, theme string, pages ...string) *sitev1.Site {
		return &sitev1.Site{
			TypeMeta:   metav1.TypeMeta{APIVersion: sitev1.GroupVersion.String(), Kind: "Site"},
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec:       sitev1.SiteSpec{Title: title, Pages: pages, ThemeSecret: theme},
		}
	}
	return []client.Object{
		site("docs", "bosun docs", "docs-theme", "index", "guide"),
		site("notes", "Notes & sketches", "", "index"),
	}
}

// SampleThemes returns the theme Secrets the Samples name, in namespace.
// Each call returns new objects.
func SampleThemes(namespace string) []*corev1.Secret {
	return []*corev1.Secret{{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "docs-theme"},
		Type:       corev1.SecretTypeOpaque,
		StringData: map[string]string{
			sitev1.ThemeKey: "body { font-family: sans-serif; max-width: 40em; margin: auto; }\nh1 { color: #2b5797; }\n",
		},
	}}
}

// PrepareSamples creates the Secrets of SampleThemes in namespace, which
// must exist. Secrets that already exist are left as they are.
func PrepareSamples(ctx context.Context, c client.Client, namespace string) error {
	for _, s := range SampleThemes(namespace) {
		if err := c.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("site: create theme secret %s: %w", s.Name, err)
		}
	}
	return nil
}
