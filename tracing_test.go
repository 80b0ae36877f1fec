package bosun_test

import (
	"context"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
)

// spanAttr returns the value of the attribute key of s, as text.
func spanAttr(s tracetest.SpanStub, key string) (string, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value.String(), true
		}
	}
	return "", false
}

// TestTracing: with a TracerProvider, each pass makes a span with the
// controller, the object, the trigger and the result, each step a child
// span, a failing pass an error status; the pass's log lines carry the
// trace id.
func TestTracing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	exporter := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	logs := &bosuntest.LogRecorder{}
	j := newJournal()
	r := newReconciler("traced", j, false)
	r.Options.TracerProvider = tp
	f.run(r, runOptions{logs: logs})
	f.create("ok", 6, 3, nil)
	f.create("bad", 6, 0, nil)
	f.waitReady("ok", metav1.ConditionTrue, conditions.ReasonSucceeded)
	f.waitReady("bad", metav1.ConditionFalse, "ZeroDivisor")

	var pass, step, failed tracetest.SpanStub
	bosuntest.Eventually(t, func(context.Context) error {
		pass, step, failed = tracetest.SpanStub{}, tracetest.SpanStub{}, tracetest.SpanStub{}
		spans := exporter.GetSpans()
		for _, s := range spans {
			obj, _ := spanAttr(s, bosun.AttrObject)
			switch {
			case s.Name == "Reconcile traced" && obj == "ok" && pass.Name == "":
				pass = s
			case s.Name == "Reconcile traced" && obj == "bad" && s.Status.Code == codes.Error:
				failed = s
			}
		}
		for _, s := range spans {
			if s.Name == "do divide" && s.Parent.SpanID() == pass.SpanContext.SpanID() && pass.Name != "" {
				step = s
			}
		}
		if pass.Name == "" || step.Name == "" || failed.Name == "" {
			var names []string
			for _, s := range spans {
				obj, _ := spanAttr(s, bosun.AttrObject)
				names = append(names, fmt.Sprintf("%s[%s %v parent=%s self=%s]", s.Name, obj, s.Status.Code, s.Parent.SpanID(), s.SpanContext.SpanID()))
			}
			return fmt.Errorf("want the first pass of ok, its step and a failed pass of bad; spans: %q", names)
		}
		return nil
	})
	for key, want := range map[string]string{
		bosun.AttrController:  "traced",
		"k8s.namespace.name":  f.ns,
		bosun.AttrTriggerKind: string(bosun.TriggerWatch),
		bosun.AttrTrigger:     fmt.Sprintf("Watch Create %s %s/ok (For)", "test.bosun.dev/v1, Kind=Widget", f.ns),
		bosun.AttrResult:      "done",
	} {
		if got, _ := spanAttr(pass, key); got != want {
			t.Errorf("pass span attribute %s = %q, want %q", key, got, want)
		}
	}
	for key, want := range map[string]string{bosun.AttrStep: "divide", bosun.AttrPhase: "do", bosun.AttrController: "traced"} {
		if got, _ := spanAttr(step, key); got != want {
			t.Errorf("step span attribute %s = %q, want %q", key, got, want)
		}
	}
	if got, _ := spanAttr(failed, bosun.AttrResult); got != "error" {
		t.Errorf("failed pass: %s = %q, want error", bosun.AttrResult, got)
	}

	traceID := pass.SpanContext.TraceID().String()
	found := false
	for _, e := range logs.Entries() {
		if v, ok := e.Value("traceID"); ok && v == traceID {
			found = true
			break
		}
	}
	if !found {
		t.Errorf("no log line carries the trace id %s of the first pass", traceID)
	}
}

// TestTracingOff: without a TracerProvider and with no global one set,
// passes make no spans and log no trace ids.
func TestTracingOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	logs := &bosuntest.LogRecorder{}
	f.run(newReconciler("untraced", newJournal(), false), runOptions{logs: logs})
	f.create("w", 6, 3, nil)
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	for _, e := range logs.Entries() {
		if _, ok := e.Value("traceID"); ok {
			t.Fatalf("a log line carries a trace id with tracing off: %s", e)
		}
	}
}
