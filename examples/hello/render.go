package hello

import (
	"errors"
	"fmt"
	"regexp"

	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
)

// ErrInvalidTemplate is returned (wrapped) by ValidateTemplate and Render
// when a template does not contain exactly one %s verb.
var ErrInvalidTemplate = errors.New("invalid template")

// templateRE is the Go twin of the CEL rule on spec.template in the CRD.
var templateRE = regexp.MustCompile(hellov1.TemplatePattern)

// ValidateTemplate reports whether template holds exactly one %s verb and
// writes every other percent sign as %%. It applies the same rule as the API
// server, so it only fails for objects that bypassed validation.
func ValidateTemplate(template string) error {
	if !templateRE.MatchString(template) {
		return fmt.Errorf("%w %q: it must contain exactly one %%s; write %%%% for a literal percent sign",
			ErrInvalidTemplate, template)
	}
	return nil
}

// Render returns the greeting a spec asks for: its template, or
// hellov1.DefaultTemplate when the template is empty, with the name in place
// of the %s verb.
func Render(spec hellov1.GreetingSpec) (string, error) {
	template := spec.Template
	if template == "" {
		template = hellov1.DefaultTemplate
	}
	if err := ValidateTemplate(template); err != nil {
		return "", err
	}
	return fmt.Sprintf(template, spec.Name), nil
}
