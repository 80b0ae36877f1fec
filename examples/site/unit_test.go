package site

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
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

// themeSecret returns a theme Secret in namespace web.
func themeSecret(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// site returns Site docs in namespace web with spec, and the status an
// earlier pass left.
func site(spec sitev1.SiteSpec) *sitev1.Site {
	return &sitev1.Site{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "docs", UID: "d0c5", Generation: 1},
		Spec:       spec,
		Status:     sitev1.SiteStatus{URL: "http://docs.old.svc", Pages: 7},
	}
}

// page returns the ConfigMap of page name of Site docs, holding html.
func page(name, html string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "docs-" + name, Labels: map[string]string{LabelName: "docs", LabelPage: name}},
		Data:       map[string]string{PageKey: html},
	}
}

// service is the Service of Site docs.
func service() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "docs", Labels: map[string]string{LabelName: "docs"}},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{LabelName: "docs"},
			Ports:    []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
}

// wantStatus is a Case.Check: the Site's URL and page count are those of
// status, and the error is terminal or not.
func wantStatus(status sitev1.SiteStatus, terminal bool) func(bosuntest.TB, *unit.Outcome[*sitev1.Site]) {
	return func(t bosuntest.TB, out *unit.Outcome[*sitev1.Site]) {
		t.Helper()
		if out.Object == nil {
			t.Fatalf("the Site is gone")
		}
		got := sitev1.SiteStatus{URL: out.Object.Status.URL, Pages: out.Object.Status.Pages}
		if diff := cmp.Diff(status, got); diff != "" {
			t.Errorf("status (-want +got):\n%s", diff)
		}
		if got := errors.Is(out.Err, reconcile.TerminalError(nil)); got != terminal {
			t.Errorf("error %v: terminal %t, want %t", out.Err, got, terminal)
		}
	}
}

// converged returns the Site, and the other objects, that one pass over s
// leaves behind, as the next pass finds them.
func converged(t *testing.T, s *sitev1.Site, given ...client.Object) (*sitev1.Site, []client.Object) {
	t.Helper()
	out := unit.Reconcile(t, unit.Scheme(t, AddToScheme), NewReconciler(), unit.Case[*sitev1.Site]{Object: s, Given: given})
	if out.Err != nil || out.Object == nil {
		t.Fatalf("first pass: %v", out.Err)
	}
	var objs []client.Object
	var cms corev1.ConfigMapList
	var svcs corev1.ServiceList
	for _, list := range []client.ObjectList{&cms, &svcs} {
		if err := out.Client.List(t.Context(), list); err != nil {
			t.Fatal(err)
		}
	}
	for i := range cms.Items {
		objs = append(objs, &cms.Items[i])
	}
	for i := range svcs.Items {
		objs = append(objs, &svcs.Items[i])
	}
	objs = append(objs, given...)
	for _, o := range objs {
		o.SetResourceVersion("")
	}
	s = out.Object.DeepCopy()
	s.ResourceVersion = ""
	return s, objs
}

// TestReconcile runs the Site reconciler on one Site in an in-memory
// client: the children it applies and prunes, the status and conditions
// it reports, and how a missing or bad theme and failures of the API
// server show.
func TestReconcile(t *testing.T) {
	render := func(name, css string, pages ...string) string {
		html, err := Render(Page{Title: "Docs", Name: name, Pages: pages, CSS: css})
		if err != nil {
			t.Fatal(err)
		}
		return html
	}
	const css = "body { color: navy; }"
	// desiredFailed begins the message of an error of Generate.
	const desiredFailed = "computing the desired children: "
	twoPages := sitev1.SiteSpec{Title: "Docs", Pages: []string{"index", "guide"}}
	themed := sitev1.SiteSpec{Title: "Docs", Pages: []string{"index"}, ThemeSecret: "theme"}
	old := sitev1.SiteStatus{URL: "http://docs.old.svc", Pages: 7}
	cond := func(typ string, status metav1.ConditionStatus, reason conditions.Reason, message string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: string(reason), Message: message, ObservedGeneration: 1}
	}
	notReported := []metav1.Condition{
		cond("ConfigMapReady", metav1.ConditionUnknown, conditions.ReasonInitializing, conditions.MessageInitializing),
		cond("ServiceReady", metav1.ConditionUnknown, conditions.ReasonInitializing, conditions.MessageInitializing),
	}
	refused := func(reason conditions.Reason, message string) []metav1.Condition {
		return append(slices.Clone(notReported), cond(conditions.TypeReady, metav1.ConditionFalse, reason, message))
	}
	made := []client.Object{page("index", ""), page("guide", ""), service()}
	badTheme := func(name string, reason conditions.Reason, message string, secret *corev1.Secret) unit.Case[*sitev1.Site] {
		c := unit.Case[*sitev1.Site]{
			Name:             name,
			Object:           site(themed),
			ExpectErr:        message,
			ExpectWrites:     []string{"patch status Site web/docs"},
			ExpectEvents:     []string{"Warning " + string(reason) + " " + desiredFailed + message},
			ExpectConditions: refused(reason, desiredFailed+message),
			ExpectGone:       made,
			Check:            wantStatus(old, true),
		}
		if secret != nil {
			c.Given = []client.Object{secret}
		}
		return c
	}
	failApply := func(err error) interceptor.Funcs {
		return interceptor.Funcs{Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			return err
		}}
	}
	serverError := apierrors.NewInternalError(errors.New("etcd is down"))
	convergedSite, convergedWorld := converged(t, site(twoPages))
	shrunk := convergedSite.DeepCopy()
	shrunk.Spec.Pages = []string{"index"}
	shrunk.Generation = 2

	unit.Run(t, unit.Scheme(t, AddToScheme), NewReconciler,
		unit.Case[*sitev1.Site]{
			Name:         "no theme: a ConfigMap per page and a Service",
			Object:       site(twoPages),
			ExpectWrites: []string{"apply ConfigMap web/docs-index", "apply ConfigMap web/docs-guide", "apply Service web/docs", "patch status Site web/docs"},
			ExpectEvents: []string{"Normal " + string(children.ReasonChildrenChanged) + " set site: created 3, updated 0, deleted 0"},
			ExpectConditions: []metav1.Condition{
				cond("ConfigMapReady", metav1.ConditionTrue, "Ready", "2 ConfigMap ready"),
				cond("ServiceReady", metav1.ConditionTrue, "Ready", "1 Service ready"),
				cond(conditions.TypeReady, metav1.ConditionTrue, conditions.ReasonSucceeded, ""),
			},
			ExpectObjects: []client.Object{
				page("index", render("index", "", "index", "guide")),
				page("guide", render("guide", "", "index", "guide")),
				service(),
			},
			Check: wantStatus(sitev1.SiteStatus{URL: "http://docs.web.svc", Pages: 2}, false),
		},
		unit.Case[*sitev1.Site]{
			Name:             "theme: every page has its style sheet",
			Object:           site(themed),
			Given:            []client.Object{themeSecret("theme", map[string]string{sitev1.ThemeKey: css})},
			ExpectWrites:     []string{"apply ConfigMap web/docs-index", "apply Service web/docs", "patch status Site web/docs"},
			ExpectConditions: []metav1.Condition{cond(conditions.TypeReady, metav1.ConditionTrue, conditions.ReasonSucceeded, "")},
			ExpectObjects:    []client.Object{page("index", render("index", css, "index")), service()},
			Check:            wantStatus(sitev1.SiteStatus{URL: "http://docs.web.svc", Pages: 1}, false),
		},
		unit.Case[*sitev1.Site]{
			Name:           "a converged Site writes nothing",
			Object:         convergedSite,
			Given:          convergedWorld,
			ExpectNoWrites: true,
			Check:          wantStatus(sitev1.SiteStatus{URL: "http://docs.web.svc", Pages: 2}, false),
		},
		unit.Case[*sitev1.Site]{
			Name:         "a page no longer listed is pruned",
			Object:       shrunk,
			Given:        convergedWorld,
			ExpectWrites: []string{"apply ConfigMap web/docs-index", "delete ConfigMap web/docs-guide", "patch status Site web/docs"},
			ExpectEvents: []string{"Normal " + string(children.ReasonChildrenChanged) + " set site: created 0, updated 1, deleted 1"},
			ExpectConditions: []metav1.Condition{
				{Type: "ConfigMapReady", Status: metav1.ConditionTrue, Reason: string(children.ReasonReady), Message: "1 ConfigMap ready", ObservedGeneration: 2},
				{Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), ObservedGeneration: 2},
			},
			ExpectObjects: []client.Object{page("index", render("index", "", "index")), service()},
			ExpectGone:    []client.Object{page("guide", "")},
			Check:         wantStatus(sitev1.SiteStatus{URL: "http://docs.web.svc", Pages: 1}, false),
		},
		badTheme("theme not found: terminal, status and children as they were", sitev1.ReasonThemeNotFound,
			`theme secret "theme" not found`, themeSecret("other", map[string]string{sitev1.ThemeKey: css})),
		badTheme("theme without css: terminal", sitev1.ReasonInvalidTheme,
			`theme secret "theme" has no key "css"`, themeSecret("theme", map[string]string{"style.css": css})),
		badTheme("unsafe theme: terminal", sitev1.ReasonInvalidTheme,
			`theme secret "theme": invalid theme: the style sheet contains "</style"`, themeSecret("theme", map[string]string{sitev1.ThemeKey: "</style>"})),
		unit.Case[*sitev1.Site]{
			Name:   "a theme that cannot be read is retried",
			Object: site(themed),
			Given:  []client.Object{themeSecret("theme", map[string]string{sitev1.ThemeKey: css})},
			Interceptor: interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, ok := obj.(*corev1.Secret); ok {
					return serverError
				}
				return c.Get(ctx, key, obj, opts...)
			}},
			ExpectErr:        `reading theme secret "theme": Internal error occurred: etcd is down`,
			ExpectWrites:     []string{"patch status Site web/docs"},
			ExpectEvents:     []string{"Warning " + string(conditions.ReasonError) + " " + desiredFailed + `reading theme secret "theme": Internal error occurred: etcd is down`},
			ExpectConditions: refused(conditions.ReasonError, desiredFailed+`reading theme secret "theme": Internal error occurred: etcd is down`),
			ExpectGone:       made,
			Check:            wantStatus(old, false),
		},
		unit.Case[*sitev1.Site]{
			Name:             "an apply that fails is retried",
			Object:           site(twoPages),
			Interceptor:      failApply(serverError),
			ExpectErr:        "applying ConfigMap web/docs-index: Internal error occurred: etcd is down",
			ExpectWrites:     []string{"apply ConfigMap web/docs-index", "patch status Site web/docs"},
			ExpectEvents:     []string{"Warning " + string(children.ReasonApplyFailed) + " applying ConfigMap web/docs-index: Internal error occurred: etcd is down"},
			ExpectConditions: refused("ApplyFailed", "applying ConfigMap web/docs-index: Internal error occurred: etcd is down"),
			ExpectGone:       made,
			Check:            wantStatus(sitev1.SiteStatus{URL: "http://docs.web.svc", Pages: 2}, false),
		},
		unit.Case[*sitev1.Site]{
			Name:   "a child the API server refuses is terminal",
			Object: site(twoPages),
			Interceptor: failApply(apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("ConfigMap").GroupKind(), "docs-index",
				field.ErrorList{field.TooLong(field.NewPath("data"), "", 1)})),
			ExpectErr:        "applying ConfigMap web/docs-index",
			ExpectWrites:     []string{"apply ConfigMap web/docs-index", "patch status Site web/docs"},
			ExpectConditions: refused("InvalidChildren", ""),
			ExpectGone:       made,
			Check:            wantStatus(sitev1.SiteStatus{URL: "http://docs.web.svc", Pages: 2}, true),
		},
	)
}

// TestReconcilerIsValid checks the configuration the way setup does.
func TestReconcilerIsValid(t *testing.T) {
	r := NewReconciler()
	r.Client = fake.NewClientBuilder().WithScheme(unit.Scheme(t, AddToScheme)).Build()
	if err := r.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if r.Name != ControllerName || r.Finalizer != "" {
		t.Errorf("name %q, finalizer %q; want %q and none: owned children need no cleanup", r.Name, r.Finalizer, ControllerName)
	}
}

func TestAddToScheme(t *testing.T) {
	s := unit.Scheme(t, AddToScheme)
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
		Columns: []string{"Title", "Pages", "URL", "Ready", "Reason", "Age"},
	}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("CRD (-want +got):\n%s", diff)
	}
}

// TestSamples checks that every sample names a theme of SampleThemes or
// none, and that one pass of the reconciler, with those themes, makes each
// Ready, so the demo's samples can become Ready.
func TestSamples(t *testing.T) {
	var themes []client.Object
	for _, s := range SampleThemes("web") {
		if s.Namespace != "web" {
			t.Errorf("theme %s in namespace %q, want web", s.Name, s.Namespace)
		}
		// The in-memory client does not turn stringData into data.
		themes = append(themes, themeSecret(s.Name, s.StringData))
	}
	names := map[string]bool{}
	var cases []unit.Case[*sitev1.Site]
	for _, obj := range Samples("web") {
		s, ok := obj.(*sitev1.Site)
		if !ok {
			t.Fatalf("sample %T, want *v1alpha1.Site", obj)
		}
		if s.Namespace != "web" || names[s.Name] {
			t.Errorf("sample %s/%s: wrong namespace or name used twice", s.Namespace, s.Name)
		}
		names[s.Name] = true
		s.UID = types.UID("uid-" + s.Name)
		cases = append(cases, unit.Case[*sitev1.Site]{
			Name:             s.Name,
			Object:           s,
			Given:            themes,
			ExpectConditions: []metav1.Condition{{Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded)}},
		})
	}
	unit.Run(t, unit.Scheme(t, AddToScheme), NewReconciler, cases...)
	Samples("web")[0].SetName("changed")
	if Samples("web")[0].GetName() == "changed" {
		t.Error("Samples returned shared objects")
	}
}
