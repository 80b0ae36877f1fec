package site

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/conditions"
	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name string
		page Page
		want string
	}{
		{
			name: "title escaped, theme, links to the other pages",
			page: Page{Title: `Tips & "tricks" <b>`, Name: "guide", Pages: []string{"index", "guide", "faq"}, CSS: "h1 { color: red; }"},
			want: `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>guide - Tips &amp; &#34;tricks&#34; &lt;b&gt;</title>
<style>h1 { color: red; }</style>
</head>
<body>
<header><h1>Tips &amp; &#34;tricks&#34; &lt;b&gt;</h1></header>
<main><h2>guide</h2></main>
<nav>
<ul>
<li><a href="/index/">index</a></li>
<li><a href="/faq/">faq</a></li>
</ul>
</nav>
</body>
</html>
`,
		},
		{
			name: "one page, no theme: no style, no navigation",
			page: Page{Title: "Notes", Name: "index", Pages: []string{"index"}},
			want: `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>index - Notes</title>
</head>
<body>
<header><h1>Notes</h1></header>
<main><h2>index</h2></main>
</body>
</html>
`,
		},
		{
			name: "style sheet kept as it is, quotes and angle brackets included",
			page: Page{Title: "T", Name: "a", Pages: []string{"a", "b"}, CSS: `a[href^="http"]::after { content: " >"; }`},
			want: `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>a - T</title>
<style>a[href^="http"]::after { content: " >"; }</style>
</head>
<body>
<header><h1>T</h1></header>
<main><h2>a</h2></main>
<nav>
<ul>
<li><a href="/b/">b</a></li>
</ul>
</nav>
</body>
</html>
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render(tt.page)
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Render (-want +got):\n%s", diff)
			}
		})
	}

	if _, err := Render(Page{Title: "T", Name: "a", Pages: []string{"a"}, CSS: "</style><script>"}); !errors.Is(err, ErrInvalidTheme) {
		t.Errorf("Render of an unsafe theme: error = %v, want ErrInvalidTheme", err)
	}
}

func TestCheckTheme(t *testing.T) {
	tests := []struct {
		name, css string
		wantErr   bool
	}{
		{name: "empty", css: ""},
		{name: "plain", css: "body { margin: 0; }"},
		{name: "escaped slash", css: `p::after { content: "<\/style>"; }`},
		{name: "at the limit", css: strings.Repeat("a", MaxThemeSize)},
		{name: "end tag", css: "p {} </style><script>alert(1)</script>", wantErr: true},
		{name: "end tag in upper case", css: "p {} </STYLE >", wantErr: true},
		{name: "end tag in a comment", css: "/* </style */", wantErr: true},
		{name: "too large", css: strings.Repeat("a", MaxThemeSize+1), wantErr: true},
		{name: "not UTF-8", css: "p { content: \"\xff\"; }", wantErr: true},
	}
	for _, tt := range tests {
		err := CheckTheme(tt.css)
		if tt.wantErr != (err != nil) || err != nil && !errors.Is(err, ErrInvalidTheme) {
			t.Errorf("CheckTheme(%s) = %v, want an error wrapping ErrInvalidTheme: %t", tt.name, err, tt.wantErr)
		}
	}
}

// scheme returns a scheme with the types of AddToScheme.
func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// themeSecret returns a theme Secret in namespace web.
func themeSecret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// request returns a request for a Site docs in namespace web, with spec,
// whose fake client holds secrets and knows the scope of the children.
func request(t *testing.T, spec sitev1.SiteSpec, secrets ...client.Object) *bosun.Pass[*sitev1.Site] {
	t.Helper()
	s := &sitev1.Site{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "docs", UID: "d0c5", Generation: 1}, Spec: spec}
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, kind := range []string{"ConfigMap", "Service", "Secret"} {
		mapper.Add(corev1.SchemeGroupVersion.WithKind(kind), meta.RESTScopeNamespace)
	}
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithRESTMapper(mapper).WithObjects(secrets...).Build()
	return &bosun.Pass[*sitev1.Site]{Controller: ControllerName, Object: s, Original: s.DeepCopy(), Client: c}
}

func TestGenerate(t *testing.T) {
	page := func(name, html string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "docs-" + name, Labels: map[string]string{LabelName: "docs", LabelPage: name}},
			Data:       map[string]string{PageKey: html},
		}
	}
	render := func(name, css string, pages ...string) string {
		html, err := Render(Page{Title: "Docs", Name: name, Pages: pages, CSS: css})
		if err != nil {
			t.Fatal(err)
		}
		return html
	}
	service := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "docs", Labels: map[string]string{LabelName: "docs"}},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{LabelName: "docs"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
	const css = "body { color: navy; }"
	tests := []struct {
		name    string
		spec    sitev1.SiteSpec
		secrets []client.Object
		want    []client.Object
		// wantReason is the reason of the terminal error expected.
		wantReason, wantMessage string
	}{
		{
			name: "no theme",
			spec: sitev1.SiteSpec{Title: "Docs", Pages: []string{"index", "guide"}},
			want: []client.Object{page("index", render("index", "", "index", "guide")), page("guide", render("guide", "", "index", "guide")), service},
		},
		{
			name:    "theme",
			spec:    sitev1.SiteSpec{Title: "Docs", Pages: []string{"index"}, ThemeSecret: "theme"},
			secrets: []client.Object{themeSecret("theme", map[string]string{sitev1.ThemeKey: css})},
			want:    []client.Object{page("index", render("index", css, "index")), service},
		},
		{
			name:        "theme not found",
			spec:        sitev1.SiteSpec{Title: "Docs", Pages: []string{"index"}, ThemeSecret: "theme"},
			secrets:     []client.Object{themeSecret("other", map[string]string{sitev1.ThemeKey: css})},
			wantReason:  sitev1.ReasonThemeNotFound,
			wantMessage: `theme secret "theme" not found`,
		},
		{
			name:        "theme without css",
			spec:        sitev1.SiteSpec{Title: "Docs", Pages: []string{"index"}, ThemeSecret: "theme"},
			secrets:     []client.Object{themeSecret("theme", map[string]string{"style.css": css})},
			wantReason:  sitev1.ReasonInvalidTheme,
			wantMessage: `theme secret "theme" has no key "css"`,
		},
		{
			name:        "unsafe theme",
			spec:        sitev1.SiteSpec{Title: "Docs", Pages: []string{"index"}, ThemeSecret: "theme"},
			secrets:     []client.Object{themeSecret("theme", map[string]string{sitev1.ThemeKey: "</style>"})},
			wantReason:  sitev1.ReasonInvalidTheme,
			wantMessage: `theme secret "theme": invalid theme: the style sheet contains "</style"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request(t, tt.spec, tt.secrets...)
			got, err := Generate(t.Context(), req)
			if tt.wantReason != "" {
				reason, severity, msg := conditions.FromError(err)
				if diff := cmp.Diff([]string{tt.wantReason, string(conditions.SeverityError), tt.wantMessage}, []string{reason, string(severity), msg}); diff != "" {
					t.Errorf("error %v: reason, severity, message (-want +got):\n%s", err, diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("children (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(sitev1.SiteStatus{URL: "http://docs.web.svc", Pages: int32(len(tt.spec.Pages))}, req.Object.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGeneratingStep plans the reconciler's one step, which calls Generate,
// against a fake client: a call that succeeds plans the children and sets
// the status; one that fails leaves the status as it was.
func TestGeneratingStep(t *testing.T) {
	r := NewReconciler()
	wrapper, ok := r.Steps[0].(*bosun.Wrapper[*sitev1.Site])
	if !ok || len(r.Steps) != 1 {
		t.Fatalf("steps %v, want one, the children step with its theme watch", r.Steps)
	}
	step := wrapper.Steps()[0].(*children.Step[*sitev1.Site])
	old := sitev1.SiteStatus{URL: "http://docs.old.svc", Pages: 7}

	req := request(t, sitev1.SiteSpec{Title: "Docs", Pages: []string{"index", "guide"}})
	req.Object.Status = old
	plan, err := step.Plan(t.Context(), req)
	if err != nil {
		t.Fatalf("Plan: %v", err)
	}
	want := children.Plan{Create: []children.Ref{
		{Kind: "ConfigMap", Namespace: "web", Name: "docs-guide"},
		{Kind: "ConfigMap", Namespace: "web", Name: "docs-index"},
		{Kind: "Service", Namespace: "web", Name: "docs"},
	}}
	if diff := cmp.Diff(want, plan); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sitev1.SiteStatus{URL: "http://docs.web.svc", Pages: 2}, req.Object.Status); diff != "" {
		t.Errorf("status after a good call (-want +got):\n%s", diff)
	}

	req = request(t, sitev1.SiteSpec{Title: "Docs", Pages: []string{"index", "guide"}, ThemeSecret: "missing"})
	req.Object.Status = old
	if _, err := step.Plan(t.Context(), req); err == nil {
		t.Fatal("Plan with a missing theme: no error")
	}
	if diff := cmp.Diff(old, req.Object.Status); diff != "" {
		t.Errorf("status after a failed call (-want +got):\n%s", diff)
	}
}

// TestReconcilerIsValid checks the configuration the way setup does.
func TestReconcilerIsValid(t *testing.T) {
	r := NewReconciler()
	r.Client = fake.NewClientBuilder().WithScheme(scheme(t)).Build()
	if err := r.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if r.Name != ControllerName || r.Finalizer != "" {
		t.Errorf("name %q, finalizer %q; want %q and none: owned children need no cleanup", r.Name, r.Finalizer, ControllerName)
	}
}

func TestAddToScheme(t *testing.T) {
	s := scheme(t)
	for _, tt := range []struct {
		obj  runtime.Object
		want schema.GroupVersionKind
	}{
		{&sitev1.Site{}, sitev1.GroupVersion.WithKind("Site")},
		{&sitev1.SiteList{}, sitev1.GroupVersion.WithKind("SiteList")},
		{&corev1.Secret{}, corev1.SchemeGroupVersion.WithKind("Secret")},
	} {
		gvks, _, err := s.ObjectKinds(tt.obj)
		if err != nil {
			t.Errorf("ObjectKinds(%T): %v", tt.obj, err)
			continue
		}
		if diff := cmp.Diff([]schema.GroupVersionKind{tt.want}, gvks); diff != "" {
			t.Errorf("ObjectKinds(%T) (-want +got):\n%s", tt.obj, diff)
		}
	}
}

func TestCRDs(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatalf("CRDs: %v", err)
	}
	if len(crds) != 1 {
		t.Fatalf("CRDs returned %d definitions, want 1", len(crds))
	}
	c := crds[0]
	type summary struct {
		Name, Group, Kind string
		Scope             apiextensionsv1.ResourceScope
		Versions          []string
		Status            bool
		Fields            []string
		Columns           []string
	}
	got := summary{Name: c.Name, Group: c.Spec.Group, Kind: c.Spec.Names.Kind, Scope: c.Spec.Scope}
	for _, v := range c.Spec.Versions {
		got.Versions = append(got.Versions, v.Name)
		got.Status = v.Subresources != nil && v.Subresources.Status != nil
		props := v.Schema.OpenAPIV3Schema.Properties
		for _, part := range []string{"spec", "status"} {
			for name, p := range props[part].Properties {
				got.Fields = append(got.Fields, part+"."+name+":"+p.Type)
			}
		}
		for _, col := range v.AdditionalPrinterColumns {
			got.Columns = append(got.Columns, col.Name)
		}
	}
	want := summary{
		Name:     "sites.site.bosun.dev",
		Group:    sitev1.GroupVersion.Group,
		Kind:     "Site",
		Scope:    apiextensionsv1.NamespaceScoped,
		Versions: []string{sitev1.GroupVersion.Version},
		Status:   true,
		Fields: []string{
			"spec.pages:array", "spec.themeSecret:string", "spec.title:string",
			"status.conditions:array", "status.observedGeneration:integer", "status.pages:integer", "status.url:string",
		},
		Columns: []string{"Title", "Pages", "URL", "Ready", "Reason"},
	}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("CRD (-want +got):\n%s", diff)
	}
}

// TestSamples checks that every sample names a theme of SampleThemes or
// none, and that Generate accepts each with those themes, so the demo's
// samples can become Ready.
func TestSamples(t *testing.T) {
	var themes []client.Object
	for _, s := range SampleThemes("web") {
		if s.Namespace != "web" {
			t.Errorf("theme %s in namespace %q, want web", s.Name, s.Namespace)
		}
		// The fake client does not turn stringData into data.
		themes = append(themes, themeSecret(s.Name, s.StringData))
	}
	names := map[string]bool{}
	for _, obj := range Samples("web") {
		s, ok := obj.(*sitev1.Site)
		if !ok {
			t.Fatalf("sample %T, want *v1alpha1.Site", obj)
		}
		if s.Namespace != "web" || names[s.Name] {
			t.Errorf("sample %s/%s: wrong namespace or name used twice", s.Namespace, s.Name)
		}
		names[s.Name] = true
		if _, err := Generate(t.Context(), request(t, s.Spec, themes...)); err != nil {
			t.Errorf("sample %s would never be Ready: %v", s.Name, err)
		}
	}
	Samples("web")[0].SetName("changed")
	if Samples("web")[0].GetName() == "changed" {
		t.Error("Samples returned shared objects")
	}
}
