package scaffold

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/bosunkit/bosun/cmd/bosun/dsl"
)

var (
	shop    = Project{Name: "shop", Repo: "github.com/me/shop", Domain: "example.com"}
	release = InitOptions{BosunVersion: "v0.3.0", GoVersion: "1.26.0"}
)

// newProject returns a directory holding the shop project.
func newProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := Init(dir, shop, release); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tree returns every file under dir by its slash-separated path.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// missing returns the strings of want that text lacks.
func missing(text string, want []string) []string {
	var out []string
	for _, w := range want {
		if !strings.Contains(text, w) {
			out = append(out, w)
		}
	}
	return out
}

func TestInit(t *testing.T) {
	files := tree(t, newProject(t))
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"go.mod", []string{"module github.com/me/shop\n", "go 1.26.0\n", "require github.com/bosunkit/bosun v0.3.0\n"}},
		{"PROJECT", []string{"name: shop\n", "repo: github.com/me/shop\n", "domain: example.com\n"}},
		{"cmd/dev.go", []string{"//go:build bosundev\n", `import _ "github.com/bosunkit/bosun/operator/dev"`}},
		{"cmd/main.go", []string{"operator.Main(operator.Options{", `Name:        "shop"`, "CRDs:        crd.CRDs", "Samples:     samples.Objects",
			"// +bosun:scaffold:imports", "// +bosun:scaffold:scheme", "// +bosun:scaffold:setup", "// +bosun:scaffold:options\n\t})"}},
		{"Makefile", []string{"CONTROLLER_GEN ?= $(GO) run " + ControllerGen, "object paths=./...", "$(GO) generate ./...", "rbac:roleName=manager-role",
			"rbac:roleName=manager-role webhook paths=./...", "output:webhook:artifacts:config=config/webhook",
			"\ngenerate: bosun\n", "\nmanifests:", "\ntest:", "\nrun:", "\ndev:", "\nbuild:", "$(GO) run -tags bosundev ./cmd --dev",
			"BOSUN ?= $(CURDIR)/bin/bosun\n", "\nbosun:\n", "\nimage: bosun\n", "\ninstall.yaml: bosun\n", "\nchart: bosun\n", "chart --dir config/default --output bin/chart",
			"$(GO) list -m -f '{{with .Replace}}{{.Dir}}{{end}}' github.com/bosunkit/bosun",
			`$(GO) build -C "$$dir/cmd/bosun" -o "$(CURDIR)/bin/bosun" .`,
			"install github.com/bosunkit/bosun/cmd/bosun@$$($(GO) list -m -f '{{.Version}}' github.com/bosunkit/bosun)"}},
		{"internal/controller/doc.go", []string{"package controller", "+kubebuilder:rbac:groups=\"\",resources=namespaces,verbs=get;list;watch",
			"+kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch"}},
		{"config/crd/crd.go", []string{"//go:embed *.yaml", "manifest.DecodeCRDs"}},
		{"config/crd/kustomization.yaml", []string{"resources:\n# +bosun:scaffold:crds"}},
		{"config/samples/kustomization.yaml", []string{"resources:\n# +bosun:scaffold:samples"}},
		{"config/rbac/role.yaml", []string{"kind: ClusterRole", "name: manager-role", "- namespaces", "- events"}},
		{"config/rbac/role_binding.yaml", []string{"kind: ClusterRoleBinding", "name: manager-role", "name: controller-manager"}},
		{"config/rbac/service_account.yaml", []string{"kind: ServiceAccount", "name: controller-manager"}},
		{"config/rbac/leader_election_role.yaml", []string{"kind: Role", "coordination.k8s.io", "leases"}},
		{"config/rbac/leader_election_role_binding.yaml", []string{"kind: RoleBinding"}},
		{"config/manager/manager.yaml", []string{"kind: Deployment", "--leader-elect", "livenessProbe:", "readinessProbe:", "path: /healthz",
			"path: /readyz", "resources:", "runAsNonRoot: true", "readOnlyRootFilesystem: true", "image: shop:dev"}},
		{"config/default/kustomization.yaml", []string{"namespace: shop-system", "namePrefix: shop-", "- ../crd", "- ../rbac", "- ../manager\n# +bosun:scaffold:resources\n"}},
		{".gitignore", []string{"/bin/"}},
		{"README.md", []string{"# shop", "bosun dev", "bosun create api --group shop", "--owns Deployment,Service", "After a change of the types"}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			text, ok := files[tc.path]
			if !ok {
				t.Fatalf("Init did not write %s", tc.path)
			}
			if diff := cmp.Diff([]string(nil), missing(text, tc.want)); diff != "" {
				t.Errorf("%s lacks (-want +got):\n%s\n%s", tc.path, diff, text)
			}
		})
	}
}

func TestInitGoMod(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts InitOptions
		want []string
		not  []string
	}{
		// No tool directive: the bosun command would bring the
		// dependencies of all its subcommands into the module.
		{"release", InitOptions{BosunVersion: "v1.2.3", GoVersion: "1.26.0"},
			[]string{"require github.com/bosunkit/bosun v1.2.3"}, []string{"replace", "tool"}},
		{"checkout", InitOptions{BosunVersion: "v0.0.0-00010101000000-000000000000", BosunReplace: "/src/bosun", GoVersion: "1.26.1"},
			[]string{"go 1.26.1\n", "replace github.com/bosunkit/bosun => /src/bosun\n"}, []string{"tool"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Init(dir, shop, tc.opts); err != nil {
				t.Fatal(err)
			}
			gomod := tree(t, dir)["go.mod"]
			if diff := cmp.Diff([]string(nil), missing(gomod, tc.want)); diff != "" {
				t.Errorf("go.mod lacks (-want +got):\n%s\n%s", diff, gomod)
			}
			for _, n := range tc.not {
				if strings.Contains(gomod, n) {
					t.Errorf("go.mod holds %q:\n%s", n, gomod)
				}
			}
		})
	}
}

func TestCreateAPI(t *testing.T) {
	for _, tc := range []struct {
		name string
		api  API
		want map[string][]string
		not  map[string][]string // what files must not hold
		none []string            // files that must not be written
	}{
		{
			name: "Go step",
			api:  API{Group: "shop", Version: "v1", Kind: "Widget"},
			want: map[string][]string{
				"api/v1/groupversion_info.go": {"package v1", "+groupName=shop.example.com", "+kubebuilder:object:generate=true"},
				"api/v1/widget_types.go": {
					"type Widget struct", "type WidgetList struct", "Conditions []metav1.Condition",
					"+kubebuilder:subresource:status",
					"+kubebuilder:resource:path=widgets,scope=Namespaced,categories=bosun;shop,shortName=widg",
					`+kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 246",message="metadata.name must be at most 246 characters`, `fieldPath=".metadata"`,
					"Message string `json:\"message\"`",
					`+kubebuilder:printcolumn:name="Ready"`, `+kubebuilder:printcolumn:name="Reason"`, `+kubebuilder:printcolumn:name="Age"`,
				},
				"internal/controller/widget_controller.go": {
					"func WidgetSteps() []bosun.Step[*shopv1.Widget]", "func NewWidgetReconciler()", "func SetupWidgetWithManager(",
					"children.NewStep(widgetSet, widgetChildren, widgetChildKinds())", "children.Of(&corev1.ConfigMap{})",
					`Data:       map[string]string{"message": o.Spec.Message}`,
					"+kubebuilder:rbac:groups=shop.example.com,resources=widgets,verbs=get;list;watch;update;patch",
					"+kubebuilder:rbac:groups=shop.example.com,resources=widgets/finalizers,verbs=update",
					`+kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch;delete`,
				},
				"internal/controller/widget_sample_test.go":     {"func widgetSample(t testing.TB, ns, name string) *shopv1.Widget", "samples.Objects(ns)"},
				"internal/controller/widget_controller_test.go": {"unit.Run(", "func TestWidgetSteps(", "unit.ChildOf(t, scheme, o, widgetSet, c)", `widgetSample(t, "ns", "a")`},
				"internal/controller/widget_envtest_test.go": {"bosuntest.Start(", "func TestWidgetOnAPIServer(", "crd.CRDs()",
					"controlplane.Options{Scheme: scheme, CRDs: crds})", `widgetSample(t, ns, "a")`},
				"config/samples/shop_v1_widget.yaml": {"apiVersion: shop.example.com/v1\nkind: Widget\n", "name: widget-sample", "message: Hello from shop\n"},
				"config/samples/kustomization.yaml":  {"- shop_v1_widget.yaml\n# +bosun:scaffold:samples"},
				"config/crd/kustomization.yaml":      {"- shop.example.com_widgets.yaml\n# +bosun:scaffold:crds"},
				"cmd/main.go": {`shopv1 "github.com/me/shop/api/v1"`, `"github.com/me/shop/internal/controller"`,
					"shopv1.AddToScheme,\n", "controller.SetupWidgetWithManager,\n"},
			},
			none: []string{"internal/controller/widget.bosun"},
			not: map[string][]string{
				"internal/controller/widget_controller.go": {"controllerutil", "appsv1"},
				"api/v1/widget_types.go":                   {"Size", "Image", "ReadyReplicas"},
			},
		},
		{
			name: "owns a Deployment and a Service",
			api:  API{Group: "cache", Version: "v1alpha1", Kind: "Memcached", Owns: []string{"service", "Deployment"}},
			want: map[string][]string{
				"api/v1alpha1/memcached_types.go": {"shortName=memc", `rule="size(self.metadata.name) <= 53"`,
					"Size int32 `json:\"size\"`", "Image string `json:\"image\"`", "Port int32 `json:\"port\"`",
					"ReadyReplicas int32 `json:\"readyReplicas,omitempty\"`", `+kubebuilder:printcolumn:name="Ready Replicas"`},
				"config/samples/cache_v1alpha1_memcached.yaml": {"  size: 2\n", "  image: ", "  port: 8080\n"},
				"internal/controller/memcached_controller.go": {
					"{Object: &appsv1.Deployment{}, Readiness: memcachedDeploymentReady},\n\t\tchildren.Of(&corev1.Service{}),",
					"Replicas: ptr.To(o.Spec.Size)", "Selector: labels,", "ContainerPort: o.Spec.Port",
					"case d.Status.ReadyReplicas != want:", `bosun.NewStep("status", memcachedStatus)`,
					"p.Object.Status.ReadyReplicas = w.Status.ReadyReplicas",
					"condition (DeploymentReady, ServiceReady)",
					"+kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch;delete",
					`+kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch;delete`,
				},
				"internal/controller/memcached_controller_test.go": {`Name:             "is Ready when spec.size replicas are"`,
					"memcachedWith(obj.Spec.Size - 1)", "unit.ChildOf(t, scheme, obj, memcachedSet, old)"},
				"internal/controller/memcached_envtest_test.go": {"ControllerManager: true, Nodes: 2",
					"obj.Status.ReadyReplicas != obj.Spec.Size", "memcachedReadyPods(ctx, cp.Client, ns, obj.Name)",
					`client.FieldOwner("someone-else")`, "cp.Client.Delete(t.Context(), obj)", "apierrors.IsNotFound(err)"},
			},
			not: map[string][]string{
				"api/v1alpha1/memcached_types.go":             {"Message"},
				"internal/controller/memcached_controller.go": {"ConfigMap"},
			},
		},
		{
			name: "owns a Job, a Secret and a ConfigMap",
			api:  API{Group: "batch", Version: "v1", Kind: "Task", Owns: []string{"Secret,ConfigMap", "job"}},
			want: map[string][]string{
				"api/v1/task_types.go": {"Message string", "Image string", "Message is written to the Task's ConfigMap and Secret."},
				"internal/controller/task_controller.go": {
					"\t\tchildren.Of(&batchv1.Job{}),\n\t\tchildren.Of(&corev1.ConfigMap{}),\n\t\tchildren.Of(&corev1.Secret{}),",
					"RestartPolicy: corev1.RestartPolicyOnFailure", `map[string][]byte{"message": []byte(o.Spec.Message)}`,
					"+kubebuilder:rbac:groups=batch,resources=jobs,verbs=", `+kubebuilder:rbac:groups="",resources=configmaps;secrets,verbs=`,
				},
				"internal/controller/task_envtest_test.go": {"ControllerManager: true, Nodes: 2", "cp.Client.Delete(t.Context(), obj)"},
			},
			not: map[string][]string{
				"api/v1/task_types.go":                   {"Size", "ReadyReplicas"},
				"internal/controller/task_controller.go": {"appsv1", "Status.ReadyReplicas"},
			},
		},
		{
			name: "DSL",
			api:  API{Group: "batch", Version: "v1alpha1", Kind: "Policy", ShortName: "pol", DSL: true},
			want: map[string][]string{
				"api/v1alpha1/policy_types.go": {"+kubebuilder:resource:path=policies,scope=Namespaced,categories=bosun;shop,shortName=pol"},
				"internal/controller/policy.bosun": {
					"bind batch.example.com/v1alpha1 github.com/me/shop/api/v1alpha1\n",
					"alias Policy batch.example.com/v1alpha1/Policy\n",
					"decl PolicyManager for Policy {", "name=${target.Name}-policy", "WriteConfigMap(configMap) writes ConfigMap(create, update)",
				},
				"internal/controller/policy_controller.go": {
					"//go:generate bosun gen policy.bosun", "NewPolicyManagerSteps(", "func (a *policyActions) WriteConfigMap(",
					"func PolicySteps() []bosun.Step[*batchv1alpha1.Policy]", "func SetupPolicyWithManager(",
				},
				"config/samples/batch_v1alpha1_policy.yaml":     {"apiVersion: batch.example.com/v1alpha1\nkind: Policy\n", "message: Hello from shop\n"},
				"internal/controller/policy_controller_test.go": {`policySample(t, "ns", "a")`, `"message": obj.Spec.Message`},
				"internal/controller/policy_envtest_test.go":    {`policySample(t, ns, "a")`},
				"internal/controller/policy_sample_test.go":     {"func policySample("},
				"config/crd/kustomization.yaml":                 {"- batch.example.com_policies.yaml\n"},
				"cmd/main.go":                                   {"batchv1alpha1.AddToScheme,\n", "controller.SetupPolicyWithManager,\n"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := newProject(t)
			if err := CreateAPI(dir, tc.api); err != nil {
				t.Fatal(err)
			}
			files := tree(t, dir)
			for path, want := range tc.want {
				if diff := cmp.Diff([]string(nil), missing(files[path], want)); diff != "" {
					t.Errorf("%s lacks (-want +got):\n%s\n%s", path, diff, files[path])
				}
			}
			for path, not := range tc.not {
				for _, n := range not {
					if strings.Contains(files[path], n) {
						t.Errorf("%s holds %q:\n%s", path, n, files[path])
					}
				}
			}
			for _, path := range tc.none {
				if _, ok := files[path]; ok {
					t.Errorf("CreateAPI wrote %s", path)
				}
			}
		})
	}
}

// TestCreateAPITwoKinds: a second kind of the same version adds its own
// files and registrations, and keeps the first's.
func TestCreateAPITwoKinds(t *testing.T) {
	dir := newProject(t)
	for _, kind := range []string{"Widget", "Gadget"} {
		if err := CreateAPI(dir, API{Group: "shop", Version: "v1", Kind: kind}); err != nil {
			t.Fatal(err)
		}
	}
	main := tree(t, dir)["cmd/main.go"]
	got := []int{
		strings.Count(main, `shopv1 "github.com/me/shop/api/v1"`),
		strings.Count(main, `"github.com/me/shop/internal/controller"`),
		strings.Count(main, "shopv1.AddToScheme,"),
		strings.Count(main, "controller.SetupWidgetWithManager,"),
		strings.Count(main, "controller.SetupGadgetWithManager,"),
	}
	if diff := cmp.Diff([]int{1, 1, 1, 1, 1}, got); diff != "" {
		t.Errorf("registrations in cmd/main.go (-want +got):\n%s\n%s", diff, main)
	}
}

// TestDocumentCanonical: the .bosun document of --dsl parses and is in the
// form bosun fmt writes.
func TestDocumentCanonical(t *testing.T) {
	dir := newProject(t)
	if err := CreateAPI(dir, API{Group: "shop", Version: "v1", Kind: "Gadget", DSL: true}); err != nil {
		t.Fatal(err)
	}
	src := tree(t, dir)["internal/controller/gadget.bosun"]
	f, err := dsl.Parse("gadget.bosun", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(src, string(dsl.Format(f))); diff != "" {
		t.Errorf("gadget.bosun is not in canonical form (-scaffolded +formatted):\n%s", diff)
	}
}

// TestDeterministic: the same arguments write the same files.
func TestDeterministic(t *testing.T) {
	var trees []map[string]string
	for range 2 {
		dir := newProject(t)
		for _, a := range []API{{Group: "shop", Version: "v1", Kind: "Widget"}, {Group: "shop", Version: "v1", Kind: "Gadget", DSL: true},
			{Group: "shop", Version: "v2", Kind: "Widget"}} {
			if err := CreateAPI(dir, a); err != nil {
				t.Fatal(err)
			}
		}
		for _, w := range []Webhook{{Kind: "Widget", Defaulting: true, Conversion: true}, {Kind: "Gadget", Validation: true}} {
			if err := CreateWebhook(dir, w); err != nil {
				t.Fatal(err)
			}
		}
		trees = append(trees, tree(t, dir))
	}
	if diff := cmp.Diff(trees[0], trees[1]); diff != "" {
		t.Errorf("two runs wrote different files (-first +second):\n%s", diff)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(dir string) error
		want error
	}{
		{"init over a module", func(dir string) error {
			if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
				return err
			}
			return Init(dir, shop, release)
		}, ErrModuleExists},
		{"init twice", func(dir string) error {
			if err := Init(dir, shop, release); err != nil {
				return err
			}
			return Init(dir, shop, release)
		}, ErrModuleExists},
		{"no repo", func(dir string) error { return Init(dir, Project{Name: "shop", Domain: "example.com"}, release) }, ErrInvalid},
		{"bad name", func(dir string) error {
			return Init(dir, Project{Name: "Shop", Repo: "x", Domain: "example.com"}, release)
		}, ErrInvalid},
		{"bad domain", func(dir string) error { return Init(dir, Project{Name: "shop", Repo: "x", Domain: "example"}, release) }, ErrInvalid},
		{"no bosun version", func(dir string) error { return Init(dir, shop, InitOptions{GoVersion: "1.26.0"}) }, ErrInvalid},
		{"create outside a project", func(dir string) error { return CreateAPI(dir, API{Group: "shop", Version: "v1", Kind: "Widget"}) }, ErrNotProject},
		{"duplicate kind", func(dir string) error {
			if err := Init(dir, shop, release); err != nil {
				return err
			}
			if err := CreateAPI(dir, API{Group: "shop", Version: "v1", Kind: "Widget"}); err != nil {
				return err
			}
			return CreateAPI(dir, API{Group: "shop", Version: "v1", Kind: "Widget"})
		}, ErrKindExists},
		{"new version with dsl", func(dir string) error {
			if err := Init(dir, shop, release); err != nil {
				return err
			}
			if err := CreateAPI(dir, API{Group: "shop", Version: "v1", Kind: "Widget"}); err != nil {
				return err
			}
			return CreateAPI(dir, API{Group: "shop", Version: "v2", Kind: "Widget", DSL: true})
		}, ErrInvalid},
		{"new version with owns", func(dir string) error {
			if err := createIn(dir, API{Group: "shop", Version: "v1", Kind: "Widget"}); err != nil {
				return err
			}
			return CreateAPI(dir, API{Group: "shop", Version: "v2", Kind: "Widget", Owns: []string{"Secret"}})
		}, ErrInvalid},
		{"new version in another group", func(dir string) error {
			if err := createIn(dir, API{Group: "shop", Version: "v1", Kind: "Widget"}); err != nil {
				return err
			}
			return CreateAPI(dir, API{Group: "batch", Version: "v2", Kind: "Widget"})
		}, ErrInvalid},
		{"versions without a hub", func(dir string) error {
			if err := createIn(dir, API{Group: "shop", Version: "v1", Kind: "Widget"}); err != nil {
				return err
			}
			if err := CreateAPI(dir, API{Group: "shop", Version: "v2", Kind: "Widget"}); err != nil {
				return err
			}
			if err := os.Remove(filepath.Join(dir, "api", "v1", "widget_conversion.go")); err != nil {
				return err
			}
			return CreateAPI(dir, API{Group: "shop", Version: "v3", Kind: "Widget"})
		}, ErrInvalid},
		{"a version twice", func(dir string) error {
			if err := createIn(dir, API{Group: "shop", Version: "v1", Kind: "Widget"}); err != nil {
				return err
			}
			if err := CreateAPI(dir, API{Group: "shop", Version: "v2", Kind: "Widget"}); err != nil {
				return err
			}
			return CreateAPI(dir, API{Group: "shop", Version: "v2", Kind: "Widget"})
		}, ErrKindExists},
		{"another group in a version", func(dir string) error {
			if err := Init(dir, shop, release); err != nil {
				return err
			}
			if err := CreateAPI(dir, API{Group: "shop", Version: "v1", Kind: "Widget"}); err != nil {
				return err
			}
			return CreateAPI(dir, API{Group: "batch", Version: "v1", Kind: "Job"})
		}, ErrInvalid},
		{"lower-case kind", func(dir string) error { return createIn(dir, API{Group: "shop", Version: "v1", Kind: "widget"}) }, ErrInvalid},
		{"kind with a dash", func(dir string) error { return createIn(dir, API{Group: "shop", Version: "v1", Kind: "My-Widget"}) }, ErrInvalid},
		{"bad version", func(dir string) error { return createIn(dir, API{Group: "shop", Version: "1", Kind: "Widget"}) }, ErrInvalid},
		{"bad group", func(dir string) error { return createIn(dir, API{Group: "shop.io", Version: "v1", Kind: "Widget"}) }, ErrInvalid},
		{"no group", func(dir string) error { return createIn(dir, API{Version: "v1", Kind: "Widget"}) }, ErrInvalid},
		{"bad short name", func(dir string) error {
			return createIn(dir, API{Group: "shop", Version: "v1", Kind: "Widget", ShortName: "W"})
		}, ErrInvalid},
		{"owns an unknown kind", func(dir string) error {
			return createIn(dir, API{Group: "shop", Version: "v1", Kind: "Widget", Owns: []string{"Pod"}})
		}, ErrInvalid},
		{"owns two workloads", func(dir string) error {
			return createIn(dir, API{Group: "shop", Version: "v1", Kind: "Widget", Owns: []string{"Deployment", "StatefulSet"}})
		}, ErrInvalid},
		{"owns with dsl", func(dir string) error {
			return createIn(dir, API{Group: "shop", Version: "v1", Kind: "Widget", Owns: []string{"ConfigMap"}, DSL: true})
		}, ErrInvalid},
		{"marker removed", func(dir string) error {
			if err := Init(dir, shop, release); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "config", "samples", "kustomization.yaml"), []byte("resources: []\n"), 0o644); err != nil {
				return err
			}
			return CreateAPI(dir, API{Group: "shop", Version: "v1", Kind: "Widget"})
		}, ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run(t.TempDir())
			if diff := cmp.Diff(tc.want, err, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

// createIn starts the shop project in dir and adds a.
func createIn(dir string, a API) error {
	if err := Init(dir, shop, release); err != nil {
		return err
	}
	return CreateAPI(dir, a)
}

// TestRefusedKindWritesNothing: a refused kind leaves the project as it
// was.
func TestRefusedKindWritesNothing(t *testing.T) {
	dir := newProject(t)
	if err := CreateAPI(dir, API{Group: "shop", Version: "v1", Kind: "Widget"}); err != nil {
		t.Fatal(err)
	}
	before := tree(t, dir)
	for _, a := range []API{{Group: "shop", Version: "v1", Kind: "Widget"}, {Group: "shop", Version: "v1", Kind: "widget"}, {Group: "other", Version: "v1", Kind: "Gadget"},
		{Group: "shop", Version: "v1", Kind: "Gadget", Owns: []string{"Deployment", "DaemonSet"}}} {
		if err := CreateAPI(dir, a); err == nil {
			t.Fatalf("CreateAPI(%+v) succeeded", a)
		}
	}
	if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
		t.Errorf("refused kinds changed the project (-before +after):\n%s", diff)
	}
}

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		kind, plural, short string
	}{
		{"Widget", "widgets", "widg"},
		{"Memcached", "memcacheds", "memc"},
		{"Policy", "policies", "pol"},
		{"Deployment", "deployments", "depl"},
		{"RedisFailover", "redisfailovers", "redfail"},
		{"DBCluster", "dbclusters", "dbclust"},
		{"Postgres15", "postgres15s", "postgr"},
		{"Proxy", "proxies", "prox"},
		{"Order", "orders", "ord"},
		{"Key", "keys", ""},      // as long as the kind
		{"Class", "classes", ""}, // one syllable
		{"Box", "boxes", ""},     // one syllable
		{"Batch", "batches", ""}, // one syllable
		{"Queue", "queues", ""},  // no consonant after the vowels
		{"DB", "dbs", ""},        // no vowel
		{"A", "as", ""},          // too short
		{"NetworkPolicy", "networkpolicies", "netwpol"},
		{"Ingot", "ingots", ""}, // kubectl's ing, of Ingress
	} {
		got := []string{pluralize(strings.ToLower(tc.kind)), shortName(tc.kind)}
		if diff := cmp.Diff([]string{tc.plural, tc.short}, got); diff != "" {
			t.Errorf("%s: plural and short name (-want +got):\n%s", tc.kind, diff)
		}
		if tc.short != "" && !shortNameRE.MatchString(tc.short) {
			t.Errorf("%s: short name %q is not lower-case letters and digits", tc.kind, tc.short)
		}
	}
}

// TestShortNames: the default short name of any kind is a valid one,
// shorter than the kind, and made of the kind's letters in order.
func TestShortNames(t *testing.T) {
	for _, kind := range []string{"Memcached", "HTTPRoute", "V2Thing", "X", "Ab", "Rhythm", "ServiceMonitor", "ABC", "Gadget99", "TLSCertificateRequest"} {
		s := shortName(kind)
		if s == "" {
			continue
		}
		if !shortNameRE.MatchString(s) || len(s) >= len(kind) || builtinShortNames[s] {
			t.Errorf("shortName(%s) = %q: not a short name of its own", kind, s)
		}
		rest := strings.ToLower(kind)
		for _, r := range s {
			i := strings.IndexRune(rest, r)
			if i < 0 {
				t.Errorf("shortName(%s) = %q: not the kind's letters in order", kind, s)
				break
			}
			rest = rest[i+1:]
		}
	}
}

func TestGenerateCommands(t *testing.T) {
	var lines []string
	for _, c := range GenerateCommands() {
		lines = append(lines, strings.Join(c, " "))
	}
	want := []string{
		"go mod tidy",
		"go run " + ControllerGen + " object paths=./...",
		"go generate ./...",
		"go run " + ControllerGen + " crd rbac:roleName=manager-role webhook paths=./... output:crd:artifacts:config=config/crd output:rbac:artifacts:config=config/rbac output:webhook:artifacts:config=config/webhook",
		"go mod tidy",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	// The Makefile runs the same generators.
	makefile := tree(t, newProject(t))["Makefile"]
	for _, l := range lines[1:4] {
		l = strings.Replace(l, "go run "+ControllerGen, "$(CONTROLLER_GEN)", 1)
		l = strings.Replace(l, "go generate", `PATH="$(CURDIR)/bin:$$PATH" $(GO) generate`, 1)
		if !slices.Contains(strings.Split(makefile, "\n"), "\t"+l) {
			t.Errorf("the Makefile lacks the line %q:\n%s", l, makefile)
		}
	}
}

// TestCreateAPIOwnsEach: every kind --owns accepts, alone and with a
// Service, makes Go that parses (CreateAPI formats it) and a controller
// that declares the kind and asks for the right to keep it.
func TestCreateAPIOwnsEach(t *testing.T) {
	for _, k := range ownable {
		for _, owns := range [][]string{{k.Kind}, {strings.ToLower(k.Kind), "Service"}} {
			t.Run(strings.Join(owns, ","), func(t *testing.T) {
				dir := newProject(t)
				if err := CreateAPI(dir, API{Group: "shop", Version: "v1", Kind: "Widget", Owns: owns}); err != nil {
					t.Fatal(err)
				}
				files := tree(t, dir)
				groups := k.Group
				if groups == "" {
					groups = `""`
				}
				want := []string{"&" + k.Alias + "." + k.Kind + "{", k.Kind + "Ready", "+kubebuilder:rbac:groups=" + groups + ",resources="}
				if diff := cmp.Diff([]string(nil), missing(files["internal/controller/widget_controller.go"], want)); diff != "" {
					t.Errorf("the controller lacks (-want +got):\n%s", diff)
				}
				if k.Workload != strings.Contains(files["internal/controller/widget_envtest_test.go"], "ControllerManager: true, Nodes: 2") {
					t.Errorf("the envtest test of a kind owning %v runs kube-controller-manager and nodes: %t, want %t", owns, !k.Workload, k.Workload)
				}
			})
		}
	}
}
