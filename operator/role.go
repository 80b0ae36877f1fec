package operator

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/bosunkit/bosun"
)

// roleName is the name of the ClusterRole --role prints, the one
// controller-gen gives config/rbac/role.yaml.
const roleName = "manager-role"

// printRole sets the operator's controllers up on a manager that never
// starts and has no cluster behind it, and prints the ClusterRole its bosun
// reconcilers derive from their steps, in the layout of controller-gen's
// config/rbac/role.yaml.
func printRole(opts Options, out io.Writer) error {
	scheme, err := opts.scheme()
	if err != nil {
		return err
	}
	mapper, err := offlineMapper(opts, scheme)
	if err != nil {
		return err
	}
	mopts := ctrl.Options{
		Scheme:                 scheme,
		MapperProvider:         func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mapper, nil },
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	}
	if opts.Manager != nil {
		opts.Manager(&mopts)
	}
	mopts.LeaderElection = false
	// Nothing is ever sent there: the manager does not start, and the
	// mapper answers from the scheme.
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://role.invalid"}, mopts)
	if err != nil {
		return fmt.Errorf("operator %q: --role: making the manager: %w", opts.Name, err)
	}
	obs := new(bosun.Observation)
	var declarers []declarer
	if err := opts.Setup(obs.Attach(roleManager{mgr, &declarers})); err != nil {
		return fmt.Errorf("operator %q: --role: setting up its controllers: %w", opts.Name, err)
	}
	infos := obs.Reconcilers()
	if len(infos) == 0 {
		return fmt.Errorf("operator %q: --role: Setup set up no bosun reconciler; a controller-runtime reconciler's role comes from its +kubebuilder:rbac markers", opts.Name)
	}
	for _, info := range infos {
		declarers = append(declarers, declarerFunc(info.PolicyRules))
	}
	var rules []rbacv1.PolicyRule
	for _, d := range declarers {
		more, err := d.PolicyRules(scheme)
		if err != nil {
			return fmt.Errorf("operator %q: --role: %w", opts.Name, err)
		}
		rules = append(rules, more...)
	}
	data, err := yaml.Marshal(roleFile{
		APIVersion: rbacv1.SchemeGroupVersion.String(),
		Kind:       "ClusterRole",
		Metadata:   roleMeta{Name: roleName},
		Rules:      mergeRules(rules),
	})
	if err != nil {
		return fmt.Errorf("operator %q: --role: %w", opts.Name, err)
	}
	_, err = fmt.Fprintf(out, "---\n%s", data)
	return err
}

// roleFile is a ClusterRole as controller-gen writes it: no empty
// creationTimestamp, the fields in its order.
type roleFile struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Metadata   roleMeta            `json:"metadata"`
	Rules      []rbacv1.PolicyRule `json:"rules"`
}

type roleMeta struct {
	Name string `json:"name"`
}

// mergeRules returns rules granting what rules grant, each verb of a
// resource once, laid out as controller-gen lays out its role: per API
// group and resource names, the resources that share their verbs in one
// rule, the verbs and resources sorted, the rules sorted by group,
// resources and resource names. Rules of non-resource URLs come last, as
// they are.
func mergeRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type resource struct{ group, resource, names string }
	verbs := map[resource][]string{}
	var urls []rbacv1.PolicyRule
	for _, r := range rules {
		if len(r.NonResourceURLs) > 0 {
			urls = append(urls, r)
			continue
		}
		names := slices.Clone(r.ResourceNames)
		slices.Sort(names)
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				k := resource{g, res, strings.Join(slices.Compact(names), ",")}
				verbs[k] = append(verbs[k], r.Verbs...)
			}
		}
	}
	type rule struct{ group, names, verbs string }
	merged := map[rule]*rbacv1.PolicyRule{}
	for res, vs := range verbs {
		slices.Sort(vs)
		vs = slices.Compact(vs)
		k := rule{res.group, res.names, strings.Join(vs, ",")}
		r := merged[k]
		if r == nil {
			r = &rbacv1.PolicyRule{APIGroups: []string{res.group}, Verbs: vs}
			if res.names != "" {
				r.ResourceNames = strings.Split(res.names, ",")
			}
			merged[k] = r
		}
		r.Resources = append(r.Resources, res.resource)
	}
	out := make([]rbacv1.PolicyRule, 0, len(merged)+len(urls))
	for _, r := range merged {
		slices.Sort(r.Resources)
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b rbacv1.PolicyRule) int {
		if c := strings.Compare(a.APIGroups[0], b.APIGroups[0]); c != 0 {
			return c
		}
		if c := slices.Compare(a.Resources, b.Resources); c != 0 {
			return c
		}
		return slices.Compare(a.ResourceNames, b.ResourceNames)
	})
	return append(out, urls...)
}

// declarer is what declares the RBAC rules it needs: a step, or a
// runnable an operator's Setup adds to the manager.
type declarer interface {
	PolicyRules(*runtime.Scheme) ([]rbacv1.PolicyRule, error)
}

// declarerFunc is a function that declares rules.
type declarerFunc func(*runtime.Scheme) ([]rbacv1.PolicyRule, error)

func (f declarerFunc) PolicyRules(s *runtime.Scheme) ([]rbacv1.PolicyRule, error) { return f(s) }

// roleManager is the manager Setup sees under --role: it keeps the
// runnables Setup adds, to ask those that declare rules for them.
type roleManager struct {
	ctrl.Manager
	declarers *[]declarer
}

// Add keeps r when it declares its rules, and adds it to the manager.
func (m roleManager) Add(r manager.Runnable) error {
	if d, ok := r.(declarer); ok {
		*m.declarers = append(*m.declarers, d)
	}
	return m.Manager.Add(r)
}

// clusterScoped are the built-in kinds an operator may use that are not
// namespaced.
var clusterScoped = map[schema.GroupKind]bool{
	{Kind: "Namespace"}:                                                             true,
	{Kind: "Node"}:                                                                  true,
	{Kind: "PersistentVolume"}:                                                      true,
	{Group: rbacv1.GroupName, Kind: "ClusterRole"}:                                  true,
	{Group: rbacv1.GroupName, Kind: "ClusterRoleBinding"}:                           true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                 true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                             true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   true,
	{Group: apiextensionsv1.GroupName, Kind: "CustomResourceDefinition"}:            true,
}

// offlineMapper maps the kinds of scheme to resources without asking a
// cluster: the operator's own kinds scoped as its CRDs say, the built-in
// ones as they are served.
func offlineMapper(o Options, scheme *runtime.Scheme) (meta.RESTMapper, error) {
	scopes := map[schema.GroupKind]bool{}
	for gk := range clusterScoped {
		scopes[gk] = true
	}
	if o.CRDs != nil {
		crds, err := o.CRDs()
		if err != nil {
			return nil, fmt.Errorf("operator %q: --role: reading its CRDs: %w", o.Name, err)
		}
		for _, crd := range crds {
			gk := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
			scopes[gk] = crd.Spec.Scope == apiextensionsv1.ClusterScoped
		}
	}
	mapper := meta.NewDefaultRESTMapper(scheme.PrioritizedVersionsAllGroups())
	for gvk := range scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		scope := meta.RESTScopeNamespace
		if scopes[gvk.GroupKind()] {
			scope = meta.RESTScopeRoot
		}
		mapper.Add(gvk, scope)
	}
	return mapper, nil
}
