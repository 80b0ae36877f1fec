package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

//go:embed templates
var templates embed.FS

var (
	// ErrInvalid is wrapped by the errors of arguments that cannot make a
	// project or a kind.
	ErrInvalid = errors.New("invalid scaffold arguments")
	// ErrModuleExists is wrapped by the error of Init in a directory that
	// holds a go.mod already.
	ErrModuleExists = errors.New("the directory holds a Go module already")
	// ErrKindExists is wrapped by the error of CreateAPI for a kind the
	// project has already in that version.
	ErrKindExists = errors.New("the kind exists already")
	// ErrNotProject is wrapped by the error of CreateAPI in a directory
	// that Init did not write (it has no PROJECT file).
	ErrNotProject = errors.New("not a project of bosun init")
)

// file is one file to render: the template under templates/ and the path
// in the module.
type file struct {
	tmpl, path string
	// once keeps the file when it exists already.
	once bool
}

// render writes each file into dir from its template and data.
func render(dir string, files []file, data any) error {
	for _, f := range files {
		if err := write(dir, f.path, "templates/"+f.tmpl+".tmpl", data, f.once); err != nil {
			return err
		}
	}
	return nil
}

// write renders the template tmpl with data into dir/path, formatting Go
// files; with once, an existing file is kept.
func write(dir, path, tmpl string, data any, once bool) error {
	full := filepath.Join(dir, path)
	if _, err := os.Stat(full); err == nil && once {
		return nil
	}
	out, err := execute(path, tmpl, data)
	if err != nil {
		return err
	}
	return writeFile(dir, path, out)
}

// execute renders the template tmpl with data, for the file path: Go
// files are formatted.
func execute(path, tmpl string, data any) ([]byte, error) {
	text, err := templates.ReadFile(tmpl)
	if err != nil {
		return nil, fmt.Errorf("scaffold: %w", err)
	}
	t, err := template.New(path).Option("missingkey=error").Parse(string(text))
	if err != nil {
		return nil, fmt.Errorf("scaffold: template %s: %w", tmpl, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("scaffold: template %s: %w", tmpl, err)
	}
	out := b.Bytes()
	if strings.HasSuffix(path, ".go") {
		if out, err = format.Source(out); err != nil {
			return nil, fmt.Errorf("scaffold: formatting %s: %w", path, err)
		}
	}
	return out, nil
}

// writeFile writes out into dir/path, making its directory.
func writeFile(dir, path string, out []byte) error {
	full := filepath.Join(dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	if err := os.WriteFile(full, out, 0o644); err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	return nil
}

// markerAt returns the index of marker in text where it ends a line, or
// -1.
func markerAt(text, marker string) int {
	for i := 0; ; {
		j := strings.Index(text[i:], marker)
		if j < 0 {
			return -1
		}
		end := i + j + len(marker)
		if end == len(text) || text[end] == '\n' || text[end] == '\r' {
			return i + j
		}
		i = end
	}
}

// hasLine reports whether text has a line that is line but for the
// spaces (gofmt aligns the values of composite literals).
func hasLine(text, line string) bool {
	if strings.Contains(line, "\n") {
		return false
	}
	want := strings.Join(strings.Fields(line), " ")
	for _, l := range strings.Split(text, "\n") {
		if strings.Join(strings.Fields(l), " ") == want {
			return true
		}
	}
	return false
}

// hasMarkers returns an error naming the first marker that dir/path
// lacks: the line where insert would add to the file.
func hasMarkers(dir, path string, markers ...string) error {
	raw, err := os.ReadFile(filepath.Join(dir, path))
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	for _, m := range markers {
		if markerAt(string(raw), m) < 0 {
			return fmt.Errorf("%w: %s has no %q line, where bosun adds to it: put it back (bosun init and create write it)", ErrInvalid, path, m)
		}
	}
	return nil
}

// exists reports whether dir/path exists.
func exists(dir, path string) bool {
	_, err := os.Stat(filepath.Join(dir, path))
	return err == nil
}

// insert adds line above the marker in dir/path, unless the file holds it
// already, with the marker's indentation (each line of it, when it has
// several); Go files are formatted.
func insert(dir, path, marker, line string) error {
	full := filepath.Join(dir, path)
	raw, err := os.ReadFile(full)
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	text := string(raw)
	i := markerAt(text, marker)
	if i < 0 {
		return fmt.Errorf("%w: %s has no %q line, where bosun adds to it: put it back (bosun init and create write it)", ErrInvalid, path, marker)
	}
	start := strings.LastIndex(text[:i], "\n") + 1
	indent := text[start:i]
	line = indent + strings.ReplaceAll(line, "\n", "\n"+indent)
	if strings.Contains(text, "\n"+line+"\n") || hasLine(text, line) {
		return nil
	}
	out := []byte(text[:start] + line + "\n" + text[start:])
	if strings.HasSuffix(path, ".go") {
		if out, err = format.Source(out); err != nil {
			return fmt.Errorf("scaffold: formatting %s: %w", path, err)
		}
	}
	if err := os.WriteFile(full, out, 0o644); err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	return nil
}
