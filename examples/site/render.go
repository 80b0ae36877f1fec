package site

import (
	"errors"
	"fmt"
	"html/template"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxThemeSize is the largest style sheet, in bytes, a theme may hold. Every
// page embeds the whole of it, and a ConfigMap holds at most 1 MiB.
const MaxThemeSize = 256 << 10

// ErrInvalidTheme is wrapped by the errors of CheckTheme and Render for a
// style sheet that cannot be embedded in a page.
var ErrInvalidTheme = errors.New("invalid theme")

// Page is what Render makes one page of a site from.
type Page struct {
	// Title is the site's title, shown on every page.
	Title string
	// Name is the name of the page.
	Name string
	// Pages are the names of every page of the site, in order; the page
	// links to each of the others.
	Pages []string
	// CSS is the theme's style sheet, embedded in a <style> element. Empty
	// means no theme. It must pass CheckTheme.
	CSS string
}

// pageTemplate is the HTML of a page. html/template escapes the title and
// the names for the context they appear in; the style sheet is inserted as
// it is (template.CSS), which is why CheckTheme must accept it first.
var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Name}} - {{.Title}}</title>
{{- with .CSS}}
<style>{{.}}</style>
{{- end}}
</head>
<body>
<header><h1>{{.Title}}</h1></header>
<main><h2>{{.Name}}</h2></main>
{{- with .Links}}
<nav>
<ul>
{{- range .}}
<li><a href="/{{.}}/">{{.}}</a></li>
{{- end}}
</ul>
</nav>
{{- end}}
</body>
</html>
`))

// Render returns the HTML document of page p: its name and the site's
// title, a navigation list with a link to each other page (page q lives at
// /q/), and the theme in a <style> element when there is one. The title
// and the names are escaped.
func Render(p Page) (string, error) {
	if err := CheckTheme(p.CSS); err != nil {
		return "", err
	}
	links := slices.DeleteFunc(slices.Clone(p.Pages), func(q string) bool { return q == p.Name })
	data := struct {
		Title, Name string
		Links       []string
		CSS         template.CSS
	}{
		Title: p.Title,
		Name:  p.Name,
		Links: links,
		// CheckTheme made sure the style sheet cannot end the <style>
		// element it is put in.
		CSS: template.CSS(p.CSS),
	}
	var b strings.Builder
	if err := pageTemplate.Execute(&b, data); err != nil {
		return "", fmt.Errorf("rendering page %q: %w", p.Name, err)
	}
	return b.String(), nil
}

// CheckTheme returns an error wrapping ErrInvalidTheme when css cannot be
// embedded in a page as it is: when it is larger than MaxThemeSize, is not
// valid UTF-8 (ConfigMap values are text), or contains "</style", which
// would end the <style> element and let the rest of it be read as HTML.
func CheckTheme(css string) error {
	switch {
	case len(css) > MaxThemeSize:
		return fmt.Errorf("%w: the style sheet has %d bytes, more than %d", ErrInvalidTheme, len(css), MaxThemeSize)
	case !utf8.ValidString(css):
		return fmt.Errorf("%w: the style sheet is not valid UTF-8", ErrInvalidTheme)
	case strings.Contains(strings.ToLower(css), "</style"):
		return fmt.Errorf("%w: the style sheet contains %q", ErrInvalidTheme, "</style")
	}
	return nil
}
