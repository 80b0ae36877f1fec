package site_test

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/examples/site"
	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
)

// Render makes one page: the title is escaped, the other pages are linked.
func ExampleRender() {
	html, err := site.Render(site.Page{Title: "Q&A", Name: "faq", Pages: []string{"index", "faq"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(html)
	// Output:
	// <!DOCTYPE html>
	// <html lang="en">
	// <head>
	// <meta charset="utf-8">
	// <title>faq - Q&amp;A</title>
	// </head>
	// <body>
	// <header><h1>Q&amp;A</h1></header>
	// <main><h2>faq</h2></main>
	// <nav>
	// <ul>
	// <li><a href="/index/">index</a></li>
	// </ul>
	// </nav>
	// </body>
	// </html>
}

// Generate returns the children of a Site and sets its status; the
// children step applies them. Here it reads the theme from a fake client.
func ExampleGenerate() {
	scheme := runtime.NewScheme()
	if err := site.AddToScheme(scheme); err != nil {
		fmt.Println(err)
		return
	}
	theme := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "docs-theme"},
		Data:       map[string][]byte{sitev1.ThemeKey: []byte("body { margin: 0; }")},
	}
	s := &sitev1.Site{
		ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "docs"},
		Spec:       sitev1.SiteSpec{Title: "Docs", Pages: []string{"index", "guide"}, ThemeSecret: "docs-theme"},
	}
	req := &bosun.Pass[*sitev1.Site]{Object: s, Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(theme).Build()}
	objs, err := site.Generate(context.Background(), req)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, obj := range objs {
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			fmt.Printf("ConfigMap %s: %d bytes of HTML\n", o.Name, len(o.Data[site.PageKey]))
		case *corev1.Service:
			fmt.Printf("Service %s: port %d, selector %v\n", o.Name, o.Spec.Ports[0].Port, o.Spec.Selector)
		}
	}
	fmt.Println("url:", s.Status.URL, "pages:", s.Status.Pages)
	// Output:
	// ConfigMap docs-index: 277 bytes of HTML
	// ConfigMap docs-guide: 277 bytes of HTML
	// Service docs: port 80, selector map[app.kubernetes.io/name:docs]
	// url: http://docs.web.svc pages: 2
}

// Samples are the Sites that `bosun demo` creates; PrepareSamples makes the
// theme Secret first.
func ExampleSamples() {
	for _, obj := range site.Samples("demo") {
		s := obj.(*sitev1.Site)
		fmt.Printf("%s/%s %q pages %v theme %q\n", s.Namespace, s.Name, s.Spec.Title, s.Spec.Pages, s.Spec.ThemeSecret)
	}
	// Output:
	// demo/docs "bosun docs" pages [index guide] theme "docs-theme"
	// demo/notes "Notes & sketches" pages [index] theme ""
}
