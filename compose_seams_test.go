package bosun_test

import (
	"context"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestStoppedStepSpanIsNotAnError: a step that ends the pass with
// bosun.ErrStop did not fail (doc.go, "What a step returns"; the step
// error metric leaves it out): its span, and the spans of the composites
// around it, must not say it did. A trace backend counts spans with the
// Error status as failures.
func TestStoppedStepSpanIsNotAnError(t *testing.T) {
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr := &trace{}
	stop := func() (ctrl.Result, error) { return ctrl.Result{}, fmt.Errorf("input missing: %w", bosun.ErrStop) }
	steps := []widgetStep{
		bosun.Join[*testapi.Widget](&traced{name: "a", tr: tr, do: stop}, &traced{name: "b", tr: tr}).Named("ab"),
		&traced{name: "c", tr: tr},
	}
	cl := fakeClient(t, nil, fakeWidget("w", nil, false, nil))
	r := &bosun.Reconciler[*testapi.Widget]{Name: "stop-traced", Client: cl, Finalizer: testFinalizer, Steps: steps}
	r.Options.TracerProvider = tp
	if _, _, err := reconcileWidget(t, r, cl, "w"); err != nil {
		t.Fatalf("Reconcile = %v, want no error: ErrStop is no failure", err)
	}
	seen := map[string]bool{}
	for _, s := range exporter.GetSpans() {
		seen[s.Name] = true
		if res, _ := spanAttr(s, bosun.AttrResult); s.Name == "do a" && res != "stopped" {
			t.Errorf("span %q: %s = %q, want stopped", s.Name, bosun.AttrResult, res)
		}
		if s.Status.Code == codes.Error {
			res, _ := spanAttr(s, bosun.AttrResult)
			t.Errorf("span %q has status Error (%q), result %q, for a step that stopped the pass with nothing wrong", s.Name, s.Status.Description, res)
		}
	}
	for _, name := range []string{"do a", "do ab", "Reconcile stop-traced"} {
		if !seen[name] {
			t.Errorf("no span %q; have %v", name, seen)
		}
	}
}
