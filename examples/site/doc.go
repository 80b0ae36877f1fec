// Package site is a bosun example operator built on the children step: a
// Site (site.bosun.dev/v1alpha1) names a title, a few pages and, if it
// likes, a theme Secret, and the operator publishes it as one ConfigMap per
// page, holding the rendered HTML under "index.html", and a Service in
// front of them.
//
// The whole reconciler is one function, Generate, turned into a reconciler
// by children.Generating: the Site goes in, its children and status come
// out. Generate returns, for a Site named docs with pages index and guide,
//
//	ConfigMap docs-index  index.html: the page "index", linking to /guide/
//	ConfigMap docs-guide  index.html: the page "guide", linking to /index/
//	Service   docs        ClusterIP, port 80 "http", selecting
//	                      app.kubernetes.io/name=docs
//
// and sets status.url (http://docs.<namespace>.svc) and status.pages. The
// pages are meant to be served by a web server (not part of the example)
// that mounts the ConfigMap of page p at /p/. Render makes a page with
// html/template, so the title is escaped; the theme's style sheet goes in a
// <style> element as it is, after CheckTheme has made sure it cannot end
// that element.
//
// The children step does the rest: it applies the children with
// server-side apply, labelled as members of the set "site" and owned by the
// Site, only when they differ from what is live; it deletes the ConfigMap
// of a page removed from spec.pages; it reports ConfigMapReady and
// ServiceReady, which the engine summarises into Ready. A converged Site
// costs no write at all.
//
// A theme is read through the manager's cache. A missing theme Secret makes
// Ready False with reason ThemeNotFound, one without the key "css" (or with
// a style sheet CheckTheme refuses) reason InvalidTheme. Both are terminal:
// the Site is not retried on a timer. Instead, watch.Referenced indexes
// Sites by spec.themeSecret and watches Secrets, so that creating or
// changing a theme Secret reconciles exactly the Sites that name it. When
// Generate fails, the status edits it made are discarded, and the children
// stay as they were.
//
// The controller reads Secrets through the manager's cache, which then holds
// the Secrets of every namespace the manager sees; an operator meant for a
// few namespaces would restrict its manager's cache to them.
//
// The entry points used by tests and by `bosun demo` are AddToScheme, CRDs,
// SetupWithManager, PrepareSamples and Samples. The API types live in
// package v1alpha1 under api/, the generated CRD manifest in config/crd and
// the ClusterRole generated from the controller's RBAC markers in
// config/rbac.
package site
