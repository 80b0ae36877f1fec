package operator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/bosunkit/bosun/version"
)

// ErrTracingConfig is wrapped by the error of TracerProviderFromEnv when
// the OTEL_* environment asks for something it cannot do.
var ErrTracingConfig = errors.New("invalid tracing configuration")

// TracerProviderFromEnv makes the OpenTelemetry TracerProvider the
// standard OTEL_* environment variables describe, or returns nil, and no
// error, when they ask for no tracing; Run installs it as otel's global
// provider, which every bosun Reconciler then traces its passes with.
//
// Tracing is on when OTEL_TRACES_EXPORTER is "otlp" or "console", or when
// it is unset and OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; OTEL_SDK_DISABLED=true and
// OTEL_TRACES_EXPORTER=none turn it off. OTLP goes over HTTP (protobuf)
// unless OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL
// says grpc; the exporters read the endpoint, headers, certificates and
// timeout from their own variables, and the SDK reads the sampler
// (OTEL_TRACES_SAMPLER) and the batching limits (OTEL_BSP_*). The
// resource's service.name is serviceName unless OTEL_SERVICE_NAME or
// OTEL_RESOURCE_ATTRIBUTES name another. console writes the spans to out
// as JSON, for a look at them during development.
func TracerProviderFromEnv(ctx context.Context, serviceName string, out io.Writer) (*sdktrace.TracerProvider, error) {
	exporter, err := exporterFromEnv(ctx, out)
	if err != nil || exporter == nil {
		return nil, err
	}
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(
			attribute.String("service.name", serviceName),
			attribute.String("service.version", version.Get().Version),
		),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("%w: the resource: %w", ErrTracingConfig, err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res)), nil
}

// exporterFromEnv makes the span exporter the environment asks for; nil
// when it asks for none.
func exporterFromEnv(ctx context.Context, out io.Writer) (sdktrace.SpanExporter, error) {
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	kind := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")))
	if kind == "" {
		if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return nil, nil
		}
		kind = "otlp"
	}
	switch kind {
	case "none":
		return nil, nil
	case "console":
		return stdouttrace.New(stdouttrace.WithWriter(out))
	case "otlp":
	default:
		return nil, fmt.Errorf("%w: OTEL_TRACES_EXPORTER=%q: want otlp, console or none", ErrTracingConfig, kind)
	}
	protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch strings.ToLower(strings.TrimSpace(protocol)) {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("%w: OTLP protocol %q: want http/protobuf or grpc", ErrTracingConfig, protocol)
	}
}

// startTracing installs the TracerProvider of the environment, if any,
// as otel's global one with the W3C trace context propagator, and returns
// what flushes and stops it.
func startTracing(ctx context.Context, name string, out io.Writer) (func(context.Context) error, error) {
	tp, err := TracerProviderFromEnv(ctx, name, out)
	if err != nil || tp == nil {
		return func(context.Context) error { return nil }, err
	}
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return tp.Shutdown, nil
}
