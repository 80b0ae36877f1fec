package scaffold

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// withKinds returns the shop project with the kinds apis added.
func withKinds(t *testing.T, apis ...API) string {
	t.Helper()
	dir := newProject(t)
	for _, a := range apis {
		if err := CreateAPI(dir, a); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var (
	// widget owns a Deployment: its webhooks are about spec.image.
	widget   = API{Group: "shop", Version: "v1", Kind: "Widget", Owns: []string{"Deployment"}}
	widgetV2 = API{Group: "shop", Version: "v2", Kind: "Widget"}
	// memcached owns a Service: spec.port.
	memcached = API{Group: "shop", Version: "v1", Kind: "Memcached", Owns: []string{"Deployment", "Service"}}
	// gadget is declared in a .bosun document: spec.message.
	gadget = API{Group: "shop", Version: "v1", Kind: "Gadget", DSL: true}
)

const notDeleting = "patch=`{\"matchConditions\":[{\"name\":\"not-being-deleted\",\"expression\":\"!has(object.metadata.deletionTimestamp)\"}]}`"

func TestCreateWebhook(t *testing.T) {
	for _, tc := range []struct {
		name    string
		apis    []API
		webhook Webhook
		want    map[string][]string
		not     map[string][]string
		none    []string
	}{
		{
			name:    "defaulting and validation",
			apis:    []API{widget},
			webhook: Webhook{Group: "shop", Version: "v1", Kind: "Widget", Defaulting: true, Validation: true},
			want: map[string][]string{
				"internal/controller/widget_webhook.go": {
					"func SetupWidgetWebhookWithManager(mgr ctrl.Manager) error", "webhook.Kind[*shopv1.Widget]{", "Prefer CEL",
					"Default:  defaultWidget,\n\t\tValidate: validateWidget,\n\t\t// +bosun:scaffold:webhook",
					"// +kubebuilder:webhook:path=/mutate-shop-example-com-v1-widget,mutating=true,failurePolicy=fail,sideEffects=None,groups=shop.example.com," +
						"resources=widgets,verbs=create;update,versions=v1,name=mwidget-v1.shop.example.com,admissionReviewVersions=v1," + notDeleting + "\n\n",
					"// +kubebuilder:webhook:path=/validate-shop-example-com-v1-widget,mutating=false,failurePolicy=fail,sideEffects=None,groups=shop.example.com," +
						"resources=widgets,verbs=create;update,versions=v1,name=vwidget-v1.shop.example.com,admissionReviewVersions=v1," + notDeleting + "\n\n",
					`const widgetDefaultImage = "registry.k8s.io/pause:3.10"`, "if o.Spec.Image == \"\" {",
					"func validateWidget(_ context.Context, old, o *shopv1.Widget) (webhook.Warnings, field.ErrorList)",
					`field.Invalid(field.NewPath("spec", "image"), o.Spec.Image,`, "func widgetImagePinned(image string) bool",
					"import (\n\t\"context\"\n\t\"strings\"\n\n\t\"k8s.io/apimachinery/pkg/util/validation/field\"\n\tctrl \"sigs.k8s.io/controller-runtime\"\n\n" +
						"\t\"github.com/bosunkit/bosun/webhook\"\n\n\tshopv1 \"github.com/me/shop/api/v1\"\n)",
				},
				"internal/controller/widget_webhook_test.go": {
					"func TestWidgetWebhooks(t *testing.T)", "webhook.Configurations()", "controlplane.Options{Scheme: scheme, CRDs: crds, Webhooks: hooks}",
					"bosuntest.RunManager(t, cp, SetupWidgetWebhookWithManager)",
					`t.Run("defaults spec.image", func(t *testing.T) { testWidgetDefaulting(t, cp.Client, ns) })`,
					`t.Run("refuses a wrong spec.image with a field error", func(t *testing.T) { testWidgetValidation(t, cp.Client, ns) })`,
					"obj.Spec.Image = \"\"", "obj.Spec.Image != widgetDefaultImage", `bad.Spec.Image = "registry.k8s.io/pause:latest"`,
					`causes[0].Field != "spec.image"`, "apierrors.IsInvalid(err)",
				},
				"config/webhook/service.yaml": {"kind: Service", "name: webhook-service", "namespace: system", "port: 443", "targetPort: 9443",
					"selector:\n    app.kubernetes.io/name: shop"},
				"config/webhook/kustomization.yaml": {"- service.yaml\n- manifests.yaml\n# +bosun:scaffold:webhooks\n"},
				"config/webhook/webhook.go":         {"package webhook", "//go:embed *.yaml", "func Configurations() ([]client.Object, error)", "manifest.DecodeWebhooks(manifests)"},
				"config/certmanager/issuer.yaml":    {"kind: Issuer", "name: selfsigned-issuer", "selfSigned: {}"},
				"config/certmanager/certificate.yaml": {"kind: Certificate", "name: serving-cert", "secretName: webhook-server-cert",
					"- SERVICE_NAME.SERVICE_NAMESPACE.svc\n", "name: selfsigned-issuer"},
				"config/certmanager/kustomization.yaml":          {"- issuer.yaml", "- certificate.yaml", "- kustomizeconfig.yaml"},
				"config/certmanager/kustomizeconfig.yaml":        {"path: spec/issuerRef/name"},
				"config/default/webhook_manager_patch.yaml":      {"containerPort: 9443", "mountPath: /tmp/k8s-webhook-server/serving-certs", "readOnly: true", "secretName: webhook-server-cert"},
				"config/default/webhook_manager_args_patch.yaml": {"path: /spec/template/spec/containers/0/args/-", "value: --webhook-cert-path=/tmp/k8s-webhook-server/serving-certs"},
				"config/default/kustomization.yaml": {"- ../manager\n- ../webhook\n- ../certmanager\n# +bosun:scaffold:resources\n",
					"- path: webhook_manager_patch.yaml", "metadata.annotations.[cert-manager.io/inject-ca-from]", "kind: ValidatingWebhookConfiguration",
					"kind: MutatingWebhookConfiguration", "- spec.dnsNames.0", "# +bosun:scaffold:inject-ca-namespace", "# +bosun:scaffold:inject-ca-certificate"},
				"cmd/main.go": {`"github.com/me/shop/config/webhook"`, "Webhooks:    webhook.Configurations,\n\t\t// +bosun:scaffold:options",
					"controller.SetupWidgetWithManager,\n\t\tcontroller.SetupWidgetWebhookWithManager,\n"},
			},
			not: map[string][]string{
				"internal/controller/widget_webhook_test.go": {"Conversion"},
				"config/default/kustomization.yaml":          {"CustomResourceDefinition"},
				"config/crd/kustomization.yaml":              {"patches"},
			},
			none: []string{"config/crd/patches/conversion_widgets.yaml", "config/crd/kustomizeconfig.yaml"},
		},
		{
			name:    "a port: defaulted, and fixed once set",
			apis:    []API{memcached},
			webhook: Webhook{Kind: "Memcached", Defaulting: true, Validation: true},
			want: map[string][]string{
				"internal/controller/memcached_webhook.go": {"const memcachedDefaultPort = 8080", "if o.Spec.Port == 0 {", "old != nil && o.Spec.Port != old.Spec.Port",
					`field.Forbidden(field.NewPath("spec", "port"),`, "\t\"fmt\"\n"},
				"internal/controller/memcached_webhook_test.go": {"obj.Spec.Port = 0", "obj.Spec.Port++", "err := c.Update(t.Context(), obj)",
					`t.Run("refuses a change of spec.port with a field error"`},
			},
			not: map[string][]string{"internal/controller/memcached_webhook.go": {"Image", "strings"}},
		},
		{
			name:    "a message",
			apis:    []API{gadget},
			webhook: Webhook{Kind: "Gadget", Defaulting: true, Validation: true},
			want: map[string][]string{
				"internal/controller/gadget_webhook.go":      {`const gadgetDefaultMessage = "Hello from shop"`, "strings.TrimSpace(m) != m", `field.NewPath("spec", "message")`},
				"internal/controller/gadget_webhook_test.go": {`bad.Spec.Message = " padded "`, `obj.Spec.Message = ""`},
			},
		},
		{
			name:    "conversion only",
			apis:    []API{widget, widgetV2},
			webhook: Webhook{Kind: "Widget", Conversion: true},
			want: map[string][]string{
				"internal/controller/widget_webhook.go": {"webhook.Kind[*shopv1.Widget]{\n\t\t// +bosun:scaffold:webhook\n\t}"},
				"internal/controller/widget_webhook_test.go": {"shopv1.AddToScheme,\n\t\tshopv2.AddToScheme,\n\t\t// +bosun:scaffold:scheme",
					`t.Run("converts between the versions", func(t *testing.T) { testWidgetConversion(t, cp.Client, ns) })`,
					"got := &shopv2.Widget{}", "want.ConvertFrom(hub)", "spoke.ConvertTo(wantHub)", `Name: "converted-v2"`},
				"config/crd/patches/conversion_widgets.yaml": {"kind: CustomResourceDefinition", "name: widgets.shop.example.com", "strategy: Webhook",
					"name: webhook-service", "path: /convert", "conversionReviewVersions:\n      - v1"},
				"config/crd/kustomizeconfig.yaml": {"path: spec/conversion/webhook/clientConfig/service/name"},
				"config/crd/kustomization.yaml":   {"patches:\n- path: patches/conversion_widgets.yaml\n# +bosun:scaffold:crdpatches\nconfigurations:\n- kustomizeconfig.yaml\n"},
				"config/default/kustomization.yaml": {
					"  - select:\n      kind: CustomResourceDefinition\n      name: widgets.shop.example.com\n    fieldPaths:\n    - metadata.annotations.[cert-manager.io/inject-ca-from]\n" +
						"    options:\n      delimiter: /\n      index: 0\n      create: true\n  # +bosun:scaffold:inject-ca-namespace\n",
					"      index: 1\n      create: true\n  # +bosun:scaffold:inject-ca-certificate\n"},
				"config/webhook/kustomization.yaml": {"- service.yaml\n# +bosun:scaffold:webhooks\n"},
				"cmd/main.go":                       {"controller.SetupWidgetWebhookWithManager,", "webhook.Configurations,"},
			},
			not: map[string][]string{
				"internal/controller/widget_webhook.go": {"// +kubebuilder:webhook:path", "Default:"},
				"config/webhook/kustomization.yaml":     {"- manifests.yaml"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := withKinds(t, tc.apis...)
			if err := CreateWebhook(dir, tc.webhook); err != nil {
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
					t.Errorf("CreateWebhook wrote %s", path)
				}
			}
		})
	}
}

// TestCreateWebhookAgain: a second run adds the webhooks a kind lacks to
// its files, writing what one run with all of them writes, and refuses,
// changing nothing, one it has.
func TestCreateWebhookAgain(t *testing.T) {
	apis := []API{widget, widgetV2, gadget}
	once := withKinds(t, apis...)
	if err := CreateWebhook(once, Webhook{Kind: "Widget", Defaulting: true, Validation: true, Conversion: true}); err != nil {
		t.Fatal(err)
	}
	apart := withKinds(t, apis...)
	for _, w := range []Webhook{{Kind: "Widget", Defaulting: true}, {Kind: "Widget", Validation: true}, {Kind: "Widget", Conversion: true}} {
		if err := CreateWebhook(apart, w); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(tree(t, once), tree(t, apart)); diff != "" {
		t.Errorf("three runs wrote other files than one (-one +three):\n%s", diff)
	}
	// Another kind's webhooks keep the first's configuration.
	if err := CreateWebhook(apart, Webhook{Kind: "Gadget", Validation: true}); err != nil {
		t.Fatal(err)
	}
	files := tree(t, apart)
	for path, want := range map[string]int{
		"config/default/kustomization.yaml": 1, // the webhook block, once
		"cmd/main.go":                       1, // webhook.Configurations, once
	} {
		text := map[string]string{"config/default/kustomization.yaml": "- ../webhook\n", "cmd/main.go": "webhook.Configurations,"}[path]
		if n := strings.Count(files[path], text); n != want {
			t.Errorf("%s holds %q %d times, want %d", path, text, n, want)
		}
	}
	if !strings.Contains(files["cmd/main.go"], "controller.SetupGadgetWebhookWithManager,") {
		t.Errorf("cmd/main.go does not register the Gadget's webhooks")
	}

	before := tree(t, apart)
	for _, w := range []Webhook{{Kind: "Widget", Defaulting: true}, {Kind: "Widget", Validation: true, Defaulting: false},
		{Kind: "Widget", Conversion: true}, {Kind: "Gadget", Defaulting: true, Validation: true}} {
		err := CreateWebhook(apart, w)
		if diff := cmp.Diff(ErrWebhookExists, err, cmpopts.EquateErrors()); diff != "" {
			t.Errorf("CreateWebhook(%+v) again: error (-want +got):\n%s", w, diff)
		}
	}
	if diff := cmp.Diff(before, tree(t, apart)); diff != "" {
		t.Errorf("refused webhooks changed the project (-before +after):\n%s", diff)
	}
}

// TestCreateWebhookErrors: what cannot make a webhook is refused, and
// changes nothing.
func TestCreateWebhookErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		apis    []API
		prepare func(dir string) error
		webhook Webhook
		want    error
	}{
		{name: "no webhook", apis: []API{widget}, webhook: Webhook{Kind: "Widget"}, want: ErrInvalid},
		{name: "no such kind", apis: []API{widget}, webhook: Webhook{Kind: "Order", Defaulting: true}, want: ErrInvalid},
		{name: "bad kind", apis: []API{widget}, webhook: Webhook{Kind: "widget", Defaulting: true}, want: ErrInvalid},
		{name: "another group", apis: []API{widget}, webhook: Webhook{Group: "batch", Kind: "Widget", Defaulting: true}, want: ErrInvalid},
		{name: "no such version", apis: []API{widget}, webhook: Webhook{Version: "v3", Kind: "Widget", Defaulting: true}, want: ErrInvalid},
		{name: "a spoke", apis: []API{widget, widgetV2}, webhook: Webhook{Version: "v2", Kind: "Widget", Defaulting: true}, want: ErrInvalid},
		{name: "conversion of one version", apis: []API{widget}, webhook: Webhook{Kind: "Widget", Conversion: true}, want: ErrInvalid},
		{name: "no field the webhooks know", apis: []API{widget}, webhook: Webhook{Kind: "Widget", Validation: true}, want: ErrInvalid,
			prepare: func(dir string) error {
				return replaceIn(dir, "api/v1/widget_types.go", "Image string", "Picture string")
			}},
		{name: "patches of config/default's own", apis: []API{widget}, webhook: Webhook{Kind: "Widget", Defaulting: true}, want: ErrInvalid,
			prepare: func(dir string) error {
				return replaceIn(dir, "config/default/kustomization.yaml", "resources:", "patches:\n- path: mine.yaml\nresources:")
			}},
		{name: "no options marker", apis: []API{widget}, webhook: Webhook{Kind: "Widget", Defaulting: true}, want: ErrInvalid,
			prepare: func(dir string) error {
				return replaceIn(dir, "cmd/main.go", "// +bosun:scaffold:options", "")
			}},
		{name: "no webhook marker", apis: []API{widget}, webhook: Webhook{Kind: "Widget", Validation: true}, want: ErrInvalid,
			prepare: func(dir string) error {
				if err := CreateWebhook(dir, Webhook{Kind: "Widget", Defaulting: true}); err != nil {
					return err
				}
				return replaceIn(dir, "internal/controller/widget_webhook.go", "// +bosun:scaffold:webhook\n", "\n")
			}},
		{name: "no test marker", apis: []API{widget}, webhook: Webhook{Kind: "Widget", Validation: true}, want: ErrInvalid,
			prepare: func(dir string) error {
				if err := CreateWebhook(dir, Webhook{Kind: "Widget", Defaulting: true}); err != nil {
					return err
				}
				return replaceIn(dir, "internal/controller/widget_webhook_test.go", "// +bosun:scaffold:webhooktests\n", "\n")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := withKinds(t, tc.apis...)
			if tc.prepare != nil {
				if err := tc.prepare(dir); err != nil {
					t.Fatal(err)
				}
			}
			before := tree(t, dir)
			err := CreateWebhook(dir, tc.webhook)
			if diff := cmp.Diff(tc.want, err, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tree(t, dir)); diff != "" {
				t.Errorf("a refused webhook changed the project (-before +after):\n%s", diff)
			}
		})
	}
	if err := CreateWebhook(t.TempDir(), Webhook{Kind: "Widget", Defaulting: true}); !cmp.Equal(ErrNotProject, err, cmpopts.EquateErrors()) {
		t.Errorf("outside a project: %v, want ErrNotProject", err)
	}
}

// replaceIn replaces old, which must be there, with new in dir/path.
func replaceIn(dir, path, old, new string) error {
	full := filepath.Join(dir, path)
	raw, err := os.ReadFile(full)
	if err != nil {
		return err
	}
	if !strings.Contains(string(raw), old) {
		return os.ErrNotExist
	}
	return os.WriteFile(full, []byte(strings.Replace(string(raw), old, new, 1)), 0o644)
}
