package site

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
	"github.com/bosunkit/bosun/operator"
)

// operatorRun is the site operator run by runSiteOperator.
type operatorRun struct {
	cancel context.CancelFunc
	done   chan error
	out    *strings.Builder
}

// runSiteOperator runs the site operator, restricted to the namespace of
// e, with --plan when plan is set and the fields of sensitive marked
// sensitive, until it returns or wait stops it; the test's end stops it.
func runSiteOperator(e *env, plan bool, sensitive map[schema.GroupKind][]string) *operatorRun {
	e.t.Helper()
	opts := operator.Options{
		Name:        "site",
		AddToScheme: AddToScheme,
		CRDs:        CRDs,
		Setup:       SetupWithManager,
		Manager: func(o *ctrl.Options) {
			o.Cache.DefaultNamespaces = map[string]cache.Config{e.ns: {}}
			o.Controller.SkipNameValidation = ptr.To(true)
		},
		Sensitive: sensitive,
	}
	flags := operator.DefaultFlags()
	flags.ProbeAddr = "0"
	flags.Plan = plan
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	r := &operatorRun{cancel: cancel, done: make(chan error, 1), out: &strings.Builder{}}
	go func() { r.done <- operator.Run(ctx, opts, flags, r.out) }()
	e.t.Cleanup(func() { _ = r.wait(true) })
	return r
}

// wait waits for the operator to return, ending it first when stop is
// set, and returns what Run returned; out may be read after it.
func (r *operatorRun) wait(stop bool) error {
	if stop {
		r.cancel()
	}
	err := <-r.done
	r.done <- err
	return err
}

// TestPlanHidesFieldsMarkedSensitive: the pages of a Site embed its theme,
// read from a Secret. An operator that marks the data of its ConfigMaps
// sensitive (Options.Sensitive) plans a theme change: the plan names the
// page that would change and its key, and prints neither the old nor the
// new style sheet, plain or in base64; the theme Secret itself is read, not
// written, so the plan has no write of it.
func TestPlanHidesFieldsMarkedSensitive(t *testing.T) {
	cp := shared.ControlPlane(t)
	e := newEnv(t, cp)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	const (
		oldCSS = "h1 { color: #a1b2c3; }"
		newCSS = "h1 { color: #d4e5f6; }"
	)
	e.setTheme("theme", map[string]string{sitev1.ThemeKey: oldCSS})
	e.createSite("docs", "Docs", "theme", "index")
	r := runSiteOperator(e, false, nil)
	e.waitConditions("docs", ready)
	e.waitPages("docs", pagesOf("Docs", oldCSS, "index"))
	if err := r.wait(true); err != nil {
		t.Fatalf("the operator: %v", err)
	}
	e.setTheme("theme", map[string]string{sitev1.ThemeKey: newCSS})
	var theme corev1.Secret
	if err := e.c.Get(t.Context(), e.key("theme"), &theme); err != nil {
		t.Fatal(err)
	}

	p := runSiteOperator(e, true, map[schema.GroupKind][]string{{Kind: "ConfigMap"}: {"data"}})
	if err := p.wait(false); err != nil {
		t.Fatalf("--plan: %v\n%s", err, p.out.String())
	}
	report := p.out.String()
	t.Logf("--plan printed:\n%s", report)

	var section strings.Builder
	in := false
	for _, line := range strings.Split(report, "\n") {
		switch {
		case strings.HasPrefix(line, "Site "+e.ns+"/docs "):
			in = true
		case in && !strings.HasPrefix(line, " "):
			in = false
		}
		if in {
			section.WriteString(line + "\n")
		}
	}
	for _, line := range []string{
		"apply ConfigMap " + e.ns + "/docs-index",
		`data["index.html"]: (sensitive value) -> (sensitive value)`,
	} {
		if !strings.Contains(section.String(), line) {
			t.Errorf("the plan of Site docs lacks %q:\n%s", line, section.String())
		}
	}
	var found []string
	for _, v := range []string{oldCSS, newCSS, "#a1b2c3", "#d4e5f6"} {
		for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
			if strings.Contains(report, form) {
				found = append(found, form)
			}
		}
	}
	if strings.Contains(report, "Secret "+e.ns+"/theme") {
		found = append(found, "a write of Secret theme")
	}
	if diff := cmp.Diff([]string(nil), found); diff != "" {
		t.Errorf("the plan prints the theme (-want +got):\n%s", diff)
	}
	var after corev1.Secret
	if err := e.c.Get(t.Context(), e.key("theme"), &after); err != nil {
		t.Fatal(err)
	}
	if after.ResourceVersion != theme.ResourceVersion {
		t.Errorf("--plan wrote the theme Secret: resourceVersion %s, was %s", after.ResourceVersion, theme.ResourceVersion)
	}
}
