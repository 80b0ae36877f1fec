package chart

import (
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// tokenRE matches a token of tokens.
var tokenRE = regexp.MustCompile(`bosun-chart-token-[0-9]+`)

// tokens stand for template text in an object: each is a unique string set
// where a value goes, replaced once the object is YAML.
type tokens struct {
	edits map[string]edit
}

// edit is what replaces a token.
type edit struct {
	// text replaces the token: template text, or for a block the format
	// of template text given the indentation of the value under its key.
	text  string
	block bool
	// cond, when set, renders the token's line only when it holds.
	cond string
}

func newTokens() *tokens { return &tokens{edits: map[string]edit{}} }

// inline returns a token that the template text expr replaces.
func (t *tokens) inline(expr string) string { return t.add(edit{text: expr}) }

// line returns a token that the template text expr replaces, on a line
// rendered only when cond holds.
func (t *tokens) line(expr, cond string) string { return t.add(edit{text: expr, cond: cond}) }

// block returns a token that format replaces, given the indentation of the
// value under its key (the key's column plus 2); with cond set, its line
// is rendered only when cond holds.
func (t *tokens) block(format, cond string) string {
	return t.add(edit{text: format, block: true, cond: cond})
}

// value returns template text that renders s as it is: s with its "{{"
// escaped.
func value(s string) string { return strings.ReplaceAll(s, "{{", `{{ "{{" }}`) }

func (t *tokens) add(e edit) string {
	tok := fmt.Sprintf("bosun-chart-token-%d", len(t.edits)+1)
	t.edits[tok] = e
	return tok
}

// render writes obj as template text: its YAML, with any "{{" of its own
// escaped and the tokens replaced.
func (t *tokens) render(obj map[string]any) (string, error) {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return "", err
	}
	lines := strings.Split(value(string(b)), "\n")
	for i, l := range lines {
		for _, tok := range tokenRE.FindAllString(l, -1) {
			e, ok := t.edits[tok]
			if !ok {
				return "", fmt.Errorf("unknown token %s", tok)
			}
			l = e.apply(l, tok)
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n"), nil
}

// apply replaces tok, of edit e, in the line l.
func (e edit) apply(l, tok string) string {
	text := e.text
	if e.block {
		key := len(l) - len(strings.TrimLeft(l, " -"))
		text = fmt.Sprintf(e.text, key+2)
	}
	l = strings.Replace(l, tok, text, 1)
	if e.cond == "" {
		return l
	}
	indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
	return indent + "{{- if " + e.cond + " }}\n" + l + "\n" + indent + "{{- end }}"
}
