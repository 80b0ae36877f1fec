package operator_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/operator"
)

// collector is an OTLP/HTTP trace receiver that keeps the spans it gets.
type collector struct {
	mu    sync.Mutex
	spans []receivedSpan
}

// receivedSpan is what the tests look at of a received span.
type receivedSpan struct {
	Service string
	Name    string
	Attrs   map[string]string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/traces" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		var service string
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				attrs := map[string]string{}
				for _, kv := range s.GetAttributes() {
					attrs[kv.GetKey()] = kv.GetValue().GetStringValue()
				}
				c.spans = append(c.spans, receivedSpan{Service: service, Name: s.GetName(), Attrs: attrs})
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

func (c *collector) received() []receivedSpan {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.spans)
}

// TestRunTracesToOTLP: with OTEL_EXPORTER_OTLP_ENDPOINT set, the operator
// sends a span per pass and per step to the collector, under its name.
func TestRunTracesToOTLP(t *testing.T) {
	cp := shared.ControlPlane(t)
	useKubeconfig(t, cp)
	ns := bosuntest.Namespace(t, cp.Client)
	col := &collector{}
	srv := httptest.NewServer(col)
	t.Cleanup(srv.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")

	flags := operator.DefaultFlags()
	flags.ProbeAddr = "0"
	start(t, widgets("traced", ns), flags)
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 2}}
	if err := cp.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error { return ready(ctx, cp.Client, w, 4) })
	var pass, step *receivedSpan
	bosuntest.Eventually(t, func(context.Context) error {
		spans := col.received()
		for i := range spans {
			s := &spans[i]
			switch {
			case s.Name == "Reconcile traced" && s.Attrs["bosun.object"] == "w" && pass == nil:
				pass = s
			case s.Name == "do double" && step == nil:
				step = s
			}
		}
		if pass == nil || step == nil {
			return fmt.Errorf("the collector has %d spans, not yet a pass of w and its step", len(spans))
		}
		return nil
	}, bosuntest.Timeout(time.Minute))
	want := map[string]string{
		"bosun.controller":   "traced",
		"k8s.namespace.name": ns,
		"bosun.object":       "w",
		"bosun.trigger.kind": "Watch",
		"bosun.result":       "done",
	}
	got := map[string]string{}
	for k := range want {
		got[k] = pass.Attrs[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attributes of the pass's span (-want +got):\n%s", diff)
	}
	if pass.Service != "traced" {
		t.Errorf("service.name = %q, want the operator's name", pass.Service)
	}
}

// TestTracerProviderFromEnv: which environments turn tracing on, and the
// clear errors of those that cannot work.
func TestTracerProviderFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantOn  bool
		wantErr bool
	}{
		{name: "nothing set", env: nil, wantOn: false},
		{name: "endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, wantOn: true},
		{name: "traces endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, wantOn: true},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, wantOn: true},
		{name: "console", env: map[string]string{"OTEL_TRACES_EXPORTER": "console"}, wantOn: true},
		{name: "none wins", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, wantOn: false},
		{name: "sdk disabled", env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, wantOn: false},
		{name: "unknown exporter", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, wantErr: true},
		{name: "unknown protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
				"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
				t.Setenv(k, tc.env[k])
			}
			tp, err := operator.TracerProviderFromEnv(t.Context(), "op", io.Discard)
			if tc.wantErr {
				if !errors.Is(err, operator.ErrTracingConfig) {
					t.Fatalf("error = %v, want one wrapping ErrTracingConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if on := tp != nil; on != tc.wantOn {
				t.Fatalf("tracing on = %v, want %v", on, tc.wantOn)
			}
			if tp != nil {
				ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
				defer cancel()
				_ = tp.Shutdown(ctx)
			}
		})
	}
}
