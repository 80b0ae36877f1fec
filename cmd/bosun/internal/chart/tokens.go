package chart

import (
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// nsToken stands for the release namespace in an object until its YAML is
// written.
const nsToken = "bosun-chart-namespace"

// tokenRE matches a token of tokens.
var tokenRE = regexp.MustCompile(`bosun-chart-token-[0-9]+`)

// tokens stand for template text in an object: each is a unique string set
// where a value goes, replaced once the object is YAML.
type tokens struct {
	edits map[string]edit
}

// edit is what replaces a token.
type edit struct {
	kind editKind
	// text replaces the token: template text for inline, the value for
	// line, a format of the indentation for block.
	text string
	// cond is the condition of a line.
	cond string
}

// editKind says how a token is replaced.
type editKind int

const (
	// inlineEdit replaces the token by template text.
	inlineEdit editKind = iota
	// lineEdit replaces the token by a value and renders its line only
	// when a condition holds.
	lineEdit
	// blockEdit replaces the token by template text that takes the
	// indentation of the value under its key.
	blockEdit
)

func newTokens() *tokens { return &tokens{edits: map[string]edit{}} }

func (t *tokens) add(e edit) string {
	tok := fmt.Sprintf("bosun-chart-token-%d", len(t.edits)+1)
	t.edits[tok] = e
	return tok
}

// inline returns a token that the template text expr replaces.
func (t *tokens) inline(expr string) string { return t.add(edit{kind: inlineEdit, text: expr}) }

// line returns a token that value replaces, on a line rendered only when
// cond holds.
func (t *tokens) line(value, cond string) string {
	return t.add(edit{kind: lineEdit, text: value, cond: cond})
}

// block returns a token that format replaces, given the indentation of the
// value under its key (the token's key's column plus 2).
func (t *tokens) block(format string) string { return t.add(edit{kind: blockEdit, text: format}) }

// render writes obj as YAML with the release namespace for namespace and
// the tokens replaced.
func (t *tokens) render(obj map[string]any, namespace string) (string, error) {
	b, err := yaml.Marshal(replaceNamespace(obj, namespace))
	if err != nil {
		return "", err
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		for _, tok := range tokenRE.FindAllString(l, -1) {
			e, ok := t.edits[tok]
			if !ok {
				return "", fmt.Errorf("unknown token %s", tok)
			}
			l = t.apply(l, tok, e, namespace)
		}
		lines[i] = l
	}
	text := strings.Join(lines, "\n")
	return strings.ReplaceAll(text, nsToken, releaseNamespace), nil
}

// apply replaces tok, of edit e, in the line l.
func (t *tokens) apply(l, tok string, e edit, namespace string) string {
	indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
	switch e.kind {
	case lineEdit:
		v := replaceString(e.text, namespace)
		return indent + "{{- if " + e.cond + " }}\n" + strings.Replace(l, tok, v, 1) + "\n" + indent + "{{- end }}"
	case blockEdit:
		key := len(l) - len(strings.TrimLeft(l, " -"))
		return strings.Replace(l, tok, fmt.Sprintf(e.text, key+2), 1)
	default:
		return strings.Replace(l, tok, e.text, 1)
	}
}

// replaceNamespace returns v with namespace replaced by nsToken in every
// string, where it stands as a whole name ("ns", "svc.ns.svc", "ns/cert"),
// not inside a longer one.
func replaceNamespace(v any, namespace string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = replaceNamespace(e, namespace)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = replaceNamespace(e, namespace)
		}
		return out
	case string:
		return replaceString(x, namespace)
	default:
		return v
	}
}

// replaceString replaces namespace, as a whole name, by nsToken in s.
func replaceString(s, namespace string) string {
	name := func(c byte) bool { return c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' }
	var b strings.Builder
	for {
		i := strings.Index(s, namespace)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(namespace)
		if (i == 0 || !name(s[i-1])) && (end == len(s) || !name(s[end])) {
			b.WriteString(s[:i])
			b.WriteString(nsToken)
		} else {
			b.WriteString(s[:end])
		}
		s = s[end:]
	}
}
