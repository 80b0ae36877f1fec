package site

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/conditions"
	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
)

// TestSiteLifecycle creates a Site with three pages: it becomes Ready with
// a ConfigMap per page and a Service, all owned by it and labelled as
// members of its set, with one write each and one status write; the pages
// hold the escaped title. Removing a page prunes its ConfigMap and the
// links to it; adding one creates it.
func TestSiteLifecycle(t *testing.T) {
	e := start(t)
	ctx := t.Context()
	const title = `Docs & <Guides>`
	e.createSite("docs", title, "", "index", "guide", "faq")

	s := e.waitConditions("docs", ready)
	e.waitPages("docs", pagesOf(title, "", "index", "guide", "faq"))
	type status struct {
		URL   string
		Pages int32
	}
	if diff := cmp.Diff(status{"http://docs." + e.ns + ".svc", 3}, status{s.Status.URL, s.Status.Pages}); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	wantWrites := map[string]int{"apply ConfigMap": 3, "apply Service": 1, "patch status Site": 1}
	if diff := cmp.Diff(wantWrites, e.writes.Counts()); diff != "" {
		t.Errorf("writes to converge (-want +got):\n%s", diff)
	}

	for page, cm := range e.pageMaps("docs") {
		if cm.Name != "docs-"+page {
			t.Errorf("page %s is in ConfigMap %s, want docs-%s", page, cm.Name, page)
		}
		if !metav1.IsControlledBy(&cm, s) {
			t.Errorf("ConfigMap %s owner references = %+v, want the Site as controller", cm.Name, cm.OwnerReferences)
		}
		want := map[string]string{children.LabelSet: ControllerName, children.LabelOwner: string(s.UID), LabelName: "docs", LabelPage: page}
		if diff := cmp.Diff(want, cm.Labels); diff != "" {
			t.Errorf("ConfigMap %s labels (-want +got):\n%s", cm.Name, diff)
		}
		html := cm.Data[PageKey]
		if !strings.Contains(html, "<h1>Docs &amp; &lt;Guides&gt;</h1>") || strings.Contains(html, title) {
			t.Errorf("ConfigMap %s holds\n%s\nwant the title escaped", cm.Name, html)
		}
	}

	var svc corev1.Service
	if err := e.c.Get(ctx, e.key("docs"), &svc); err != nil {
		t.Fatalf("reading service docs: %v", err)
	}
	if !metav1.IsControlledBy(&svc, s) {
		t.Errorf("Service owner references = %+v, want the Site as controller", svc.OwnerReferences)
	}
	type port struct {
		Name string
		Port int32
	}
	type service struct {
		Labels, Selector map[string]string
		Type             corev1.ServiceType
		Ports            []port
	}
	got := service{Labels: svc.Labels, Selector: svc.Spec.Selector, Type: svc.Spec.Type}
	for _, p := range svc.Spec.Ports {
		got.Ports = append(got.Ports, port{p.Name, p.Port})
	}
	want := service{
		Labels:   map[string]string{children.LabelSet: ControllerName, children.LabelOwner: string(s.UID), LabelName: "docs"},
		Selector: map[string]string{LabelName: "docs"},
		Type:     corev1.ServiceTypeClusterIP,
		Ports:    []port{{"http", 80}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Service (-want +got):\n%s", diff)
	}

	// One page fewer: its ConfigMap goes, and the others no longer link
	// to it.
	e.patchSite("docs", func(s *sitev1.Site) { s.Spec.Pages = []string{"index", "faq"} })
	e.waitPages("docs", pagesOf(title, "", "index", "faq"))
	if err := e.c.Get(ctx, e.key("docs-guide"), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("ConfigMap docs-guide: %v, want it pruned", err)
	}
	s = e.waitConditions("docs", ready)
	if s.Status.Pages != 2 {
		t.Errorf("status.pages = %d, want 2", s.Status.Pages)
	}

	// One page more: its ConfigMap is created.
	e.patchSite("docs", func(s *sitev1.Site) { s.Spec.Pages = []string{"index", "faq", "changelog"} })
	e.waitPages("docs", pagesOf(title, "", "index", "faq", "changelog"))
	s = e.waitConditions("docs", ready)
	if s.Status.Pages != 3 {
		t.Errorf("status.pages = %d, want 3", s.Status.Pages)
	}
}

// TestThemeChangeRerenders changes the css of a theme Secret that two
// Sites name: the watch on Secrets re-renders every page of both, and does
// not so much as reconcile a third Site, which names another Secret: every
// pass of that one after the change was brought by its own children.
func TestThemeChangeRerenders(t *testing.T) {
	e := start(t)
	const navy, teal, maroon = "body { color: navy; }", "body { color: teal; }", "body { color: maroon; }"
	e.setTheme("theme-a", map[string]string{sitev1.ThemeKey: navy})
	e.setTheme("theme-b", map[string]string{sitev1.ThemeKey: teal})
	e.createSite("one", "One", "theme-a", "index", "about")
	e.createSite("two", "Two", "theme-a", "index")
	e.createSite("other", "Other", "theme-b", "index", "about")
	for _, name := range []string{"one", "two", "other"} {
		e.waitConditions(name, ready)
	}
	e.waitPages("one", pagesOf("One", navy, "index", "about"))
	e.waitPages("two", pagesOf("Two", navy, "index"))
	e.waitPages("other", pagesOf("Other", teal, "index", "about"))

	before := e.pageMaps("other")
	otherPasses := len(e.passesEnded("other"))

	e.setTheme("theme-a", map[string]string{sitev1.ThemeKey: maroon})
	e.waitPages("one", pagesOf("One", maroon, "index", "about"))
	e.waitPages("two", pagesOf("Two", maroon, "index"))

	// The change of theme-a put one and two in the queue, and would have
	// put other there with them. The queue hands out the keys of a
	// namespace in the order they came: once the pass of a later change of
	// one has ended, any pass the change of theme-a brought other has
	// begun; once other has as many passes ended as begun, they are over.
	e.touch("one", "after-theme")
	after := e.passesEnded("other")[otherPasses:]
	for _, r := range after {
		if !ownChild(r.Trigger, "other") {
			t.Errorf("Site other had a pass triggered by %s after a change of theme-a, which it does not name; want none but those of its own children's events", r.Trigger)
		}
	}
	for page, cm := range e.pageMaps("other") {
		if cm.ResourceVersion != before[page].ResourceVersion {
			t.Errorf("page %s of Site other changed (resourceVersion %s, was %s)", page, cm.ResourceVersion, before[page].ResourceVersion)
		}
	}
	e.waitPages("other", pagesOf("Other", teal, "index", "about"))
}

// TestMissingTheme creates a Site that names a theme Secret that does not
// exist: Ready is False with reason ThemeNotFound, the status edits of the
// failed call are discarded, no page is made, and the Site is not retried
// on a timer. Creating the Secret wakes it and makes it Ready.
func TestMissingTheme(t *testing.T) {
	e := start(t)
	e.createSite("late", "Late", "late-theme", "index", "next")
	s := e.waitConditions("late", themeNotFound)
	if msg := conditions.Find(s.Status.Conditions, conditions.TypeReady).Message; !strings.Contains(msg, `theme secret "late-theme" not found`) {
		t.Errorf("Ready message = %q, want it to name the missing secret", msg)
	}
	if s.Status.URL != "" || s.Status.Pages != 0 {
		t.Errorf("status.url = %q, status.pages = %d; want both unset: the failed call's edits are discarded", s.Status.URL, s.Status.Pages)
	}
	if pages := e.pageMaps("late"); len(pages) != 0 {
		t.Errorf("pages %v, want none", keys(pages))
	}

	// A terminal error: no retries while nothing changes. The touch lets
	// the passes of the Site's earlier events end; the window is measured
	// in the passes of another Site as well as in time.
	e.touch("late", "settled")
	e.createSite("clock", "Clock", "", "index")
	e.waitConditions("clock", ready)
	reads := e.reads.of("Secret", "late-theme")
	const window, ticks = 2 * time.Second, 10
	e.window("clock", window, ticks)
	if n := e.reads.of("Secret", "late-theme") - reads; n != 0 {
		t.Errorf("the missing theme was looked up %d times while nothing changed (over %s and %d passes of another Site), want 0", n, window, ticks)
	}

	const css = "p { margin: 0; }"
	e.setTheme("late-theme", map[string]string{sitev1.ThemeKey: css})
	s = e.waitConditions("late", ready)
	if s.Status.URL != "http://late."+e.ns+".svc" || s.Status.Pages != 2 {
		t.Errorf("status.url = %q, status.pages = %d; want http://late.%s.svc, 2", s.Status.URL, s.Status.Pages, e.ns)
	}
	e.waitPages("late", pagesOf("Late", css, "index", "next"))
}

// TestInvalidTheme breaks the theme of a Ready Site, first by removing its
// key css and then with a style sheet that would end the <style> element:
// Ready is False with reason InvalidTheme, the pages and the status keep
// what the last good theme made. A good theme makes it Ready again.
func TestInvalidTheme(t *testing.T) {
	e := start(t)
	const red, blue = "h1 { color: red; }", "h1 { color: blue; }"
	e.setTheme("theme", map[string]string{sitev1.ThemeKey: red})
	e.createSite("site", "Site", "theme", "index")
	e.waitConditions("site", ready)
	e.waitPages("site", pagesOf("Site", red, "index"))
	before := e.pageMaps("site")["index"].ResourceVersion

	// waitMessage waits until Ready is False with reason InvalidTheme and
	// a message that contains want.
	waitMessage := func(want string) *sitev1.Site {
		t.Helper()
		return e.waitSite("site", invalidTheme, func(s *sitev1.Site) error {
			if msg := conditions.Find(s.Status.Conditions, conditions.TypeReady).Message; !strings.Contains(msg, want) {
				return fmt.Errorf("Ready message = %q, want it to contain %q", msg, want)
			}
			return nil
		})
	}
	e.setTheme("theme", map[string]string{"style.css": red})
	s := waitMessage(`theme secret "theme" has no key "css"`)
	if s.Status.URL != "http://site."+e.ns+".svc" || s.Status.Pages != 1 {
		t.Errorf("status.url = %q, status.pages = %d; want the values of the last good pass", s.Status.URL, s.Status.Pages)
	}

	e.setTheme("theme", map[string]string{sitev1.ThemeKey: "h1 {} </STYLE><script>alert(1)</script>"})
	waitMessage(`contains "</style"`)
	if got := e.pageMaps("site")["index"].ResourceVersion; got != before {
		t.Errorf("page index changed (resourceVersion %s, was %s) while the theme was invalid", got, before)
	}

	e.setTheme("theme", map[string]string{sitev1.ThemeKey: blue})
	e.waitConditions("site", ready)
	e.waitPages("site", pagesOf("Site", blue, "index"))
}

// TestConvergedSiteWritesNothing reconciles a converged Site again, by
// touching a label on it: the passes read the theme and the children from
// the cache and write nothing, although the API server defaulted fields of
// the Service.
//
// The count begins once the controller's cache holds every child and a
// pass that began after that has ended: the passes that the creation of
// the children brought, which may have run on a cache that did not hold
// them all yet, are over.
func TestConvergedSiteWritesNothing(t *testing.T) {
	e := start(t)
	const css = "main { padding: 1em; }"
	e.setTheme("theme", map[string]string{sitev1.ThemeKey: css})
	e.createSite("quiet", "Quiet", "theme", "index", "about")
	e.waitConditions("quiet", ready)
	e.waitPages("quiet", pagesOf("Quiet", css, "index", "about"))
	e.waitCached("quiet", "index", "about")
	e.touch("quiet", "settled")
	e.writes.Reset()

	// Each touch waits for the pass that saw it to end.
	for i := range 3 {
		e.touch("quiet", fmt.Sprint(i))
	}
	if n := e.writes.Total(); n != 0 {
		t.Errorf("%d writes by passes over a converged Site, want 0: %v", n, e.writes.Writes())
	}
}

// TestValidation checks the rules the API server enforces on Sites.
func TestValidation(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	twenty := make([]string, 20)
	for i := range twenty {
		twenty[i] = fmt.Sprintf("p%d", i)
	}
	tests := []struct {
		name string
		spec sitev1.SiteSpec
		// want is a part of the error; empty means the Site is valid.
		want string
	}{
		{name: "ok", spec: sitev1.SiteSpec{Title: "t", Pages: []string{"index", "a-b", "0"}, ThemeSecret: "theme.v1"}},
		{name: "twenty-pages", spec: sitev1.SiteSpec{Title: "t", Pages: twenty}},
		{name: strings.Repeat("a", 63), spec: sitev1.SiteSpec{Title: "t", Pages: []string{"index"}}},
		{name: "no-title", spec: sitev1.SiteSpec{Pages: []string{"index"}}, want: "spec.title"},
		{name: "no-pages", spec: sitev1.SiteSpec{Title: "t"}, want: "spec.pages"},
		{name: "empty-pages", spec: sitev1.SiteSpec{Title: "t", Pages: []string{}}, want: "spec.pages"},
		{name: "too-many-pages", spec: sitev1.SiteSpec{Title: "t", Pages: append(twenty, "one-more")}, want: "spec.pages"},
		{name: "bad-page", spec: sitev1.SiteSpec{Title: "t", Pages: []string{"index", "Guide"}}, want: "spec.pages[1]"},
		{name: "long-page", spec: sitev1.SiteSpec{Title: "t", Pages: []string{strings.Repeat("p", 64)}}, want: "spec.pages[0]"},
		{name: "twice", spec: sitev1.SiteSpec{Title: "t", Pages: []string{"index", "index"}}, want: "Duplicate value"},
		{name: "bad-theme", spec: sitev1.SiteSpec{Title: "t", Pages: []string{"index"}, ThemeSecret: "Theme_1"}, want: "spec.themeSecret"},
		{name: "my.site", spec: sitev1.SiteSpec{Title: "t", Pages: []string{"index"}}, want: "names its Service"},
		{name: "1site", spec: sitev1.SiteSpec{Title: "t", Pages: []string{"index"}}, want: "names its Service"},
		{name: strings.Repeat("a", 64), spec: sitev1.SiteSpec{Title: "t", Pages: []string{"index"}}, want: "names its Service"},
	}
	for _, tt := range tests {
		s := &sitev1.Site{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tt.name}, Spec: tt.spec}
		err := cp.Client.Create(t.Context(), s)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Site %s: %v, want it accepted", tt.name, err)
		case tt.want != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Site %s: error = %v, want Invalid mentioning %q", tt.name, err, tt.want)
		}
	}
}

// TestSamplesBecomeReady prepares and creates the demo's samples and waits,
// as the demo does, until each is Ready with its pages rendered.
func TestSamplesBecomeReady(t *testing.T) {
	e := start(t)
	for range 2 { // a second call leaves the existing Secrets alone
		if err := PrepareSamples(t.Context(), e.c, e.ns); err != nil {
			t.Fatalf("PrepareSamples: %v", err)
		}
	}
	themes := map[string]string{}
	for _, s := range SampleThemes(e.ns) {
		themes[s.Name] = s.StringData[sitev1.ThemeKey]
	}
	for _, obj := range Samples(e.ns) {
		if err := e.c.Create(t.Context(), obj); err != nil {
			t.Fatalf("creating sample %s: %v", obj.GetName(), err)
		}
	}
	for _, obj := range Samples(e.ns) {
		s := obj.(*sitev1.Site)
		e.waitConditions(s.Name, ready)
		e.waitPages(s.Name, pagesOf(s.Spec.Title, themes[s.Spec.ThemeSecret], s.Spec.Pages...))
	}
	if err := e.c.Get(t.Context(), client.ObjectKey{Namespace: e.ns, Name: "docs"}, &corev1.Service{}); err != nil {
		t.Errorf("service docs: %v", err)
	}
}
