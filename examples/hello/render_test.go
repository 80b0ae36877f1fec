package hello

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name    string
		spec    hellov1.GreetingSpec
		want    string
		wantErr bool
	}{
		{name: "default template", spec: hellov1.GreetingSpec{Name: "World"}, want: "Hello, World!"},
		{name: "own template", spec: hellov1.GreetingSpec{Name: "Gopher", Template: "Hi %s."}, want: "Hi Gopher."},
		{name: "verb only", spec: hellov1.GreetingSpec{Name: "x", Template: "%s"}, want: "x"},
		{name: "escaped percent", spec: hellov1.GreetingSpec{Name: "crew", Template: "100%% %s"}, want: "100% crew"},
		{name: "percent in name is kept", spec: hellov1.GreetingSpec{Name: "50%s", Template: "Hi %s"}, want: "Hi 50%s"},
		{name: "multi-byte text", spec: hellov1.GreetingSpec{Name: "Welt", Template: "Grüß dich, %s! ✓"}, want: "Grüß dich, Welt! ✓"},
		{name: "no verb", spec: hellov1.GreetingSpec{Name: "x", Template: "Hello"}, wantErr: true},
		{name: "two verbs", spec: hellov1.GreetingSpec{Name: "x", Template: "%s and %s"}, wantErr: true},
		{name: "other verb", spec: hellov1.GreetingSpec{Name: "x", Template: "%d"}, wantErr: true},
		{name: "other verb next to s verb", spec: hellov1.GreetingSpec{Name: "x", Template: "%s %v"}, wantErr: true},
		{name: "escaped verb is no verb", spec: hellov1.GreetingSpec{Name: "x", Template: "%%s"}, wantErr: true},
		{name: "lone trailing percent", spec: hellov1.GreetingSpec{Name: "x", Template: "%s %"}, wantErr: true},
		{name: "verb with flags", spec: hellov1.GreetingSpec{Name: "x", Template: "%-5s"}, wantErr: true},
		{name: "uppercase verb", spec: hellov1.GreetingSpec{Name: "x", Template: "%S"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render(tt.spec)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidTemplate) {
					t.Fatalf("Render(%+v) error = %v, want ErrInvalidTemplate", tt.spec, err)
				}
				if got != "" {
					t.Errorf("Render(%+v) = %q with an error, want \"\"", tt.spec, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Render(%+v) error = %v", tt.spec, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Render(%+v) (-want +got):\n%s", tt.spec, diff)
			}
		})
	}
}

func TestValidateTemplateMessage(t *testing.T) {
	err := ValidateTemplate("Hello")
	want := `invalid template "Hello": it must contain exactly one %s; write %% for a literal percent sign`
	if err == nil {
		t.Fatal("ValidateTemplate(\"Hello\") = nil, want an error")
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error message (-want +got):\n%s", diff)
	}
}

// FuzzRender checks that a template passing ValidateTemplate always renders
// to exactly what it says, with no fmt error markers, and that one failing it
// is never rendered.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"Hello, %s!", "%s", "100%% %s", "%%s", "%s%s", "%", "%d"} {
		f.Add(s, "World")
	}
	f.Fuzz(func(t *testing.T, template, name string) {
		if template == "" {
			return // empty means the default template
		}
		got, err := Render(hellov1.GreetingSpec{Name: name, Template: template})
		if err != nil {
			if !errors.Is(err, ErrInvalidTemplate) {
				t.Fatalf("Render(%q) error = %v, want ErrInvalidTemplate", template, err)
			}
			return
		}
		if want := expand(template, name); got != want {
			t.Fatalf("Render(%q, %q) = %q, want %q", template, name, got, want)
		}
	})
}

// expand is a reference implementation of a valid template: %% becomes %,
// %s becomes name.
func expand(template, name string) string {
	var out []byte
	for i := 0; i < len(template); i++ {
		if template[i] != '%' {
			out = append(out, template[i])
			continue
		}
		i++
		if template[i] == '%' {
			out = append(out, '%')
		} else {
			out = append(out, name...)
		}
	}
	return string(out)
}
