package debugpage

import (
	"fmt"
	"html"
	"html/template"
	"strings"

	"github.com/bosunkit/bosun"
)

// The geometry of a drawn graph, in pixels.
const (
	svgWidth    = 460
	stepHeight  = 30
	groupHeader = 24
	groupPad    = 8
	indent      = 18
	gap         = 6
)

// drawGraph draws g as an inline SVG: the steps top to bottom in the order
// of a pass, a composite as a box around its steps, each with its name, its
// phases and the conditions it owns.
func drawGraph(g bosun.Graph) template.HTML {
	var b strings.Builder
	y := gap
	body := &strings.Builder{}
	y = drawSteps(body, g.Steps, 0, y)
	height := y + gap
	fmt.Fprintf(&b, `<svg class="graph" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		svgWidth, height, svgWidth, height, html.EscapeString("steps of "+g.Name))
	b.WriteString(body.String())
	b.WriteString(`</svg>`)
	// Every piece of text went through html.EscapeString.
	return template.HTML(b.String()) //nolint:gosec // built from escaped text only
}

// drawSteps draws steps from y at the nesting depth, and returns the y
// below them.
func drawSteps(b *strings.Builder, steps []bosun.GraphStep, depth, y int) int {
	for i, s := range steps {
		if i > 0 && depth == 0 {
			// An arrow from the step above.
			x := svgWidth / 2
			fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`, x, y-gap, x, y)
		}
		y = drawStep(b, s, depth, y) + gap
	}
	return y
}

// drawStep draws one step (a composite with its steps) at y and returns
// the y of its bottom.
func drawStep(b *strings.Builder, s bosun.GraphStep, depth, y int) int {
	x := gap + depth*indent
	w := svgWidth - 2*x
	label := s.Name
	detail := strings.Join(s.Phases, " · ")
	if len(s.Conditions) > 0 {
		detail += " — owns " + strings.Join(s.Conditions, ", ")
	}
	if s.Kind != "" {
		top := y
		inner := drawSteps(&strings.Builder{}, s.Steps, depth+1, y+groupHeader)
		h := inner - top + groupPad - gap
		fmt.Fprintf(b, `<g class="composite"><rect x="%d" y="%d" width="%d" height="%d" rx="6" fill="#f3f0ff" stroke="#7b61ff"/>`, x, top, w, h)
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="12" font-family="sans-serif" fill="#3b2a99"><tspan font-weight="bold">%s</tspan> %s</text>`,
			x+8, top+16, html.EscapeString(s.Kind), html.EscapeString(label))
		drawSteps(b, s.Steps, depth+1, y+groupHeader)
		b.WriteString(`</g>`)
		return top + h
	}
	fmt.Fprintf(b, `<g class="step"><rect x="%d" y="%d" width="%d" height="%d" rx="4" fill="#eef6ff" stroke="#2f6fb3"/>`, x, y, w, stepHeight)
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="13" font-family="sans-serif" fill="#123"><tspan font-weight="bold">%s</tspan><tspan fill="#567" font-size="11"> %s</tspan></text></g>`,
		x+8, y+19, html.EscapeString(label), html.EscapeString(detail))
	return y + stepHeight
}
