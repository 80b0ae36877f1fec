package main

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/bosunkit/bosun/internal/figures"
)

// goalSuffix is how Figure.String ends a figure that has a goal.
var goalSuffix = regexp.MustCompile(`^(.*) \(goal (.*)\)$`)

// kept returns the figures of the doc's current section whose test and
// example no figure of fresh has, followed by fresh: what a run that
// measured only some rows adds to the figures of earlier runs when the
// figures file of those is gone.
func kept(doc string, fresh []figures.Figure) ([]figures.Figure, error) {
	type key struct{ test, example string }
	seen := map[key]bool{}
	for _, f := range fresh {
		seen[key{f.Test, f.Example}] = true
	}
	var out []figures.Figure
	in := false
	for n, line := range strings.Split(doc, "\n") {
		switch strings.TrimSpace(line) {
		case beginMarker:
			in = true
			continue
		case endMarker:
			in = false
		}
		if !in || !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| test |") || strings.HasPrefix(line, "| --- |") {
			continue
		}
		row, err := parseRow(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		if len(row) > 0 && !seen[key{row[0].Test, row[0].Example}] {
			out = append(out, row...)
		}
	}
	return append(out, fresh...), nil
}

// parseRow reads the figures of one row of figures.Table:
// "| test | example | name: value (goal g); name: value |". A name may
// hold ": " itself ("lag 1: stale reads"); a value may not.
func parseRow(line string) ([]figures.Figure, error) {
	const pipe = "\x00"
	line = strings.ReplaceAll(line, `\|`, pipe)
	cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "| "), " |"), " | ")
	if len(cells) != 3 {
		return nil, fmt.Errorf("a row of %d cells, want 3: %q", len(cells), line)
	}
	for i := range cells {
		cells[i] = strings.ReplaceAll(cells[i], pipe, "|")
	}
	var out []figures.Figure
	for _, part := range strings.Split(cells[2], "; ") {
		f := figures.Figure{Test: cells[0], Example: cells[1]}
		if m := goalSuffix.FindStringSubmatch(part); m != nil {
			part, f.Goal = m[1], m[2]
		}
		i := strings.LastIndex(part, ": ")
		if i < 0 {
			return nil, fmt.Errorf("figure %q has no name", part)
		}
		f.Name, f.Value = part[:i], part[i+2:]
		out = append(out, f)
	}
	return out, nil
}
