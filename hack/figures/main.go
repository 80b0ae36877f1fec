package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/bosunkit/bosun/internal/figures"
)

func main() {
	err := run(os.Args[1:], os.Stderr, time.Now(), machine)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "figures:", err)
		os.Exit(1)
	}
}

// run carries out the command line args. now is the time of the run and
// machine describes the computer it ran on.
func run(args []string, stderr io.Writer, now time.Time, machine func() string) error {
	fs := flag.NewFlagSet("figures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "", "the figures file: one JSON figure a line")
	doc := fs.String("doc", "docs/RELIABILITY.md", "the document whose figures section is replaced")
	command := fs.String("command", "make reliability", "the command that produced the figures, named in the doc")
	failed := fs.String("failed", "", "what failed during the run, said in the doc; empty when everything passed")
	record := fs.String("record", "", `append one figure "test|example|name|value[|goal]" to -in and stop`)
	keep := fs.Bool("keep", false, "keep the rows of the doc's current section that -in has no figures for")
	fuzz := fs.String("fuzz", "", `append the figures of the go test -fuzz outputs given as arguments to -in, as "test|example", and stop`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" {
		return errors.New("-in is required")
	}
	switch {
	case *record != "" && *fuzz != "":
		return errors.New("-record and -fuzz cannot be used together")
	case *record != "":
		if fs.NArg() > 0 {
			return fmt.Errorf("unexpected arguments %q", fs.Args())
		}
		f, err := parseRecord(*record)
		if err != nil {
			return err
		}
		return figures.Append(*in, f)
	case *fuzz != "":
		return recordFuzz(*in, *fuzz, fs.Args())
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	figs, err := figures.ReadFile(*in)
	if err != nil {
		return err
	}
	text, err := os.ReadFile(*doc)
	if err != nil {
		return fmt.Errorf("read doc: %w", err)
	}
	if *keep {
		if figs, err = kept(string(text), figs); err != nil {
			return fmt.Errorf("%s: %w", *doc, err)
		}
	}
	out, err := replaceSection(string(text), section(figs, *command, machine(), now, *failed))
	if err != nil {
		return fmt.Errorf("%s: %w", *doc, err)
	}
	if err := os.WriteFile(*doc, []byte(out), 0o644); err != nil {
		return fmt.Errorf("write doc: %w", err)
	}
	return nil
}

// parseRecord reads "test|example|name|value" or
// "test|example|name|value|goal".
func parseRecord(s string) (figures.Figure, error) {
	parts := strings.Split(s, "|")
	if len(parts) != 4 && len(parts) != 5 {
		return figures.Figure{}, fmt.Errorf("-record %q: want test|example|name|value or test|example|name|value|goal", s)
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	f := figures.Figure{Test: parts[0], Example: parts[1], Name: parts[2], Value: parts[3]}
	if len(parts) == 5 {
		f.Goal = parts[4]
	}
	return f, nil
}

// The lines that enclose the figures section of the doc.
const (
	beginMarker = "<!-- figures:begin -->"
	endMarker   = "<!-- figures:end -->"
)

// sectionHeading is the heading put above the markers of a doc without
// them.
const sectionHeading = "## Figures of the battery"

// section returns the text that goes between the markers.
func section(figs []figures.Figure, command, machine string, now time.Time, failed string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- Command: `%s`\n", command)
	fmt.Fprintf(&b, "- Machine: %s\n", machine)
	fmt.Fprintf(&b, "- Date: %s (UTC)\n", now.UTC().Format(time.DateOnly))
	if failed == "" {
		b.WriteString("- Result: every test and fuzz target passed\n")
	} else {
		fmt.Fprintf(&b, "- Result: failed (%s); the figures are those of the failed run\n", failed)
	}
	b.WriteString("\n")
	b.WriteString(figures.Table(figs))
	return b.String()
}

// replaceSection returns doc with the lines between the markers replaced
// by body, or with a section holding the markers and body added at its end
// when it has neither marker.
func replaceSection(doc, body string) (string, error) {
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	lines := strings.SplitAfter(doc, "\n")
	begin, end := -1, -1
	for i, l := range lines {
		switch strings.TrimSpace(l) {
		case beginMarker:
			if begin >= 0 {
				return "", fmt.Errorf("%s appears twice", beginMarker)
			}
			begin = i
		case endMarker:
			if end >= 0 {
				return "", fmt.Errorf("%s appears twice", endMarker)
			}
			end = i
		}
	}
	switch {
	case begin < 0 && end < 0:
		if doc != "" && !strings.HasSuffix(doc, "\n") {
			doc += "\n"
		}
		return doc + "\n" + sectionHeading + "\n\n" + beginMarker + "\n" + body + endMarker + "\n", nil
	case begin < 0:
		return "", fmt.Errorf("%s without %s", endMarker, beginMarker)
	case end < 0:
		return "", fmt.Errorf("%s without %s", beginMarker, endMarker)
	case end < begin:
		return "", fmt.Errorf("%s before %s", endMarker, beginMarker)
	}
	return strings.Join(lines[:begin+1], "") + body + strings.Join(lines[end:], ""), nil
}
