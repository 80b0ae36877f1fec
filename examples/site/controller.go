package site

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/conditions"
	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
	"github.com/bosunkit/bosun/watch"
)

// What the controller uses, as bosun.Reconciler.PolicyRules derives it:
// Sites and their status (the engine loads, claims and saves them); update
// on the Sites' finalizers, which the API server asks of whoever sets
// blockOwnerDeletion on an owner reference to a Site, as the children step
// does; the children, applied with server-side apply and pruned; theme
// Secrets, only read; and what the engine needs (see package bosun):
// namespaces for the reconcile policy, and events.
//
// +kubebuilder:rbac:groups=site.bosun.dev,resources=sites,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=site.bosun.dev,resources=sites/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=site.bosun.dev,resources=sites/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps;services,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

const (
	// ControllerName is the name of the Site controller in logs, metrics
	// and events, of its children set (the children.LabelSet label) and
	// the field manager of its applies.
	ControllerName = "site"

	// PageKey is the key of a page's ConfigMap that holds the page.
	PageKey = "index.html"

	// LabelName is the label, on every child of a Site, that holds the
	// Site's name; the Service selects the pods of the web server by it.
	LabelName = "app.kubernetes.io/name"

	// LabelPage is the label, on the ConfigMap of a page, that holds the
	// page's name.
	LabelPage = "site.bosun.dev/page"

	// ThemeSecretIndex is the name of the cache index of Sites by
	// spec.themeSecret, which maps a Secret to the Sites it themes.
	ThemeSecretIndex = "spec.themeSecret"
)

// Kinds are the kinds of the children of a Site: ConfigMaps, one per page,
// and a Service. The children step reports them in the conditions
// ConfigMapReady and ServiceReady.
func Kinds() []children.Kind {
	return []children.Kind{children.Of(&corev1.ConfigMap{}), children.Of(&corev1.Service{})}
}

// ConfigMapName returns the name of the ConfigMap of page in site s:
// "<site>-<page>".
func ConfigMapName(s *sitev1.Site, page string) string { return s.Name + "-" + page }

// URL returns the in-cluster address of the Service of s.
func URL(s *sitev1.Site) string { return fmt.Sprintf("http://%s.%s.svc", s.Name, s.Namespace) }

// Generate returns the children of the Site of req: the ConfigMap of each
// page, whose PageKey holds the page as Render makes it, and a Service
// named after the Site. It sets status.url and status.pages.
//
// It reads the theme Secret, if the Site names one, through req.Client. A
// missing Secret is a terminal error with reason ReasonThemeNotFound, and
// one without the key "css", or whose style sheet CheckTheme refuses, a
// terminal error with reason ReasonInvalidTheme: retrying cannot help, and
// the watch on Secrets brings the Site back when the Secret changes. The
// reconciler of Generating discards the status edits of a failed call, so
// status.url and status.pages keep their earlier values; so do the
// children.
func Generate(ctx context.Context, req *bosun.Pass[*sitev1.Site]) ([]client.Object, error) {
	s := req.Object
	s.Status.URL = URL(s)
	s.Status.Pages = int32(len(s.Spec.Pages))

	css, err := theme(ctx, req.Client, s)
	if err != nil {
		return nil, err
	}
	objs := make([]client.Object, 0, len(s.Spec.Pages)+1)
	for _, page := range s.Spec.Pages {
		html, err := Render(Page{Title: s.Spec.Title, Name: page, Pages: s.Spec.Pages, CSS: css})
		if err != nil {
			return nil, err
		}
		objs = append(objs, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name:   ConfigMapName(s, page),
				Labels: map[string]string{LabelName: s.Name, LabelPage: page},
			},
			Data: map[string]string{PageKey: html},
		})
	}
	objs = append(objs, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: map[string]string{LabelName: s.Name}},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{LabelName: s.Name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	})
	return objs, nil
}

// theme returns the style sheet of the theme Secret of s, or "" when s
// names none.
func theme(ctx context.Context, c client.Reader, s *sitev1.Site) (string, error) {
	name := s.Spec.ThemeSecret
	if name == "" {
		return "", nil
	}
	var secret corev1.Secret
	err := c.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: name}, &secret)
	switch {
	case apierrors.IsNotFound(err):
		return "", conditions.Terminalf(sitev1.ReasonThemeNotFound, "theme secret %q not found", name)
	case err != nil:
		return "", fmt.Errorf("reading theme secret %q: %w", name, err)
	}
	css, ok := secret.Data[sitev1.ThemeKey]
	if !ok {
		return "", conditions.Terminalf(sitev1.ReasonInvalidTheme, "theme secret %q has no key %q", name, sitev1.ThemeKey)
	}
	if err := CheckTheme(string(css)); err != nil {
		return "", conditions.Terminalf(sitev1.ReasonInvalidTheme, "theme secret %q: %w", name, err)
	}
	return string(css), nil
}

// themeSecrets returns the name of the theme Secret of s, for the
// ThemeSecretIndex.
func themeSecrets(s *sitev1.Site) []string { return []string{s.Spec.ThemeSecret} }

// NewReconciler returns the engine reconciler for Sites, named
// ControllerName, whose one step keeps the children Generate returns and
// wires its own watches: the children's kinds, so that a child changed or
// deleted behind the operator's back is put back, and Secrets, so that a
// change of a theme Secret re-renders the pages of every Site that names
// it (found through the ThemeSecretIndex field index). Besides the
// children's kinds, the step declares reading Secrets (see
// themedChildren), so that the reconciler's PolicyRules name them. The
// reconciler's clients and recorder are filled in by SetupWithManager, or
// by the caller.
func NewReconciler() *bosun.Reconciler[*sitev1.Site] {
	r := children.Generating(ControllerName, Kinds(), Generate)
	r.Steps[0] = themedChildren{r.Steps[0].(*children.Step[*sitev1.Site])}
	return r
}

// themedChildren is the children step of children.Generating with what
// Generate reads besides the children: theme Secrets. It watches them and
// declares reading them; the rest is the children step's.
type themedChildren struct {
	*children.Step[*sitev1.Site]
}

// SetupWithBuilder sets up the children step, and watches Secrets through
// the ThemeSecretIndex field index (see watch.Referenced).
func (s themedChildren) SetupWithBuilder(b *bosun.Builder[*sitev1.Site]) error {
	if err := s.Step.SetupWithBuilder(b); err != nil {
		return err
	}
	return watch.Referenced(&corev1.Secret{}, ThemeSecretIndex, themeSecrets).SetupWithBuilder(b)
}

// PolicyRules returns the children step's rules (see
// bosun.Reconciler.PolicyRules) and get, list and watch on Secrets, which
// Generate reads through the cache and SetupWithBuilder watches.
func (s themedChildren) PolicyRules(scheme *runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	rules, err := s.Step.PolicyRules(scheme)
	if err != nil {
		return nil, err
	}
	return append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list", "watch"}}), nil
}

// SetupWithManager registers NewReconciler's reconciler with mgr. The
// manager's scheme must hold the types of AddToScheme.
func SetupWithManager(mgr ctrl.Manager) error {
	return setup(mgr)
}

// setup is SetupWithManager with preds on every watch: on Sites, on their
// children and on Secrets. The tests restrict each controller to its own
// namespace this way.
func setup(mgr ctrl.Manager, preds ...predicate.Predicate) error {
	if err := bosun.ControllerManagedBy[*sitev1.Site](mgr).WithEventFilter(predicate.And(preds...)).Complete(NewReconciler()); err != nil {
		return fmt.Errorf("site: %w", err)
	}
	return nil
}
