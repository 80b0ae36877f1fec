package trim

import (
	"bytes"
	"io"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	restwatch "k8s.io/client-go/rest/watch"

	"github.com/bosunkit/bosun/internal/testapi"
)

// BenchmarkWatchDecode decodes a watch stream of Widgets, each with the
// managedFields of a create and of a status write, as a cache's informer
// does: as it came, and through trimReader.
func BenchmarkWatchDecode(b *testing.B) {
	scheme := runtime.NewScheme()
	if err := testapi.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	codecs := serializer.NewCodecFactory(scheme)
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		b.Fatal("no JSON serializer")
	}
	const events = 100
	stream := []byte(strings.Repeat(`{"type":"MODIFIED","object":`+wireWidget+"}\n", events))
	decode := func(b *testing.B, body func(io.ReadCloser) io.ReadCloser) {
		b.ReportAllocs()
		b.SetBytes(int64(len(stream)))
		for b.Loop() {
			r := body(io.NopCloser(bytes.NewReader(stream)))
			frames := info.StreamSerializer.NewFrameReader(r)
			dec := restwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), info.Serializer)
			for range events {
				_, obj, err := dec.Decode()
				if err != nil {
					b.Fatal(err)
				}
				if obj.(metav1.Object).GetName() == "" {
					b.Fatal("no name")
				}
			}
		}
	}
	b.Run("as-sent", func(b *testing.B) { decode(b, func(r io.ReadCloser) io.ReadCloser { return r }) })
	b.Run("trimmed", func(b *testing.B) {
		decode(b, func(r io.ReadCloser) io.ReadCloser { return &trimReader{body: r} })
	})
}

// BenchmarkStatusAnswer decodes the answer to a status write of a Widget
// with two conditions, as controller-runtime's client does: without its
// managedFields (Mark), and cut down to its version (VersionOnly).
func BenchmarkStatusAnswer(b *testing.B) {
	scheme := runtime.NewScheme()
	if err := testapi.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	decoder := serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(scheme)}.UniversalDeserializer()
	const answer = `{"apiVersion":"test.bosun.dev/v1","kind":"Widget","metadata":{"creationTimestamp":"2026-11-27T05:20:11Z","generation":1,` +
		`"name":"w-01234","namespace":"bench-5000","resourceVersion":"123456","uid":"7d3c1d2e-4c3b-4a7e-9d0e-3f1a2b3c4d5e"},"spec":{"value":10,"divisor":3},` +
		`"status":{"result":3,"conditions":[{"lastTransitionTime":"2026-11-27T05:20:12Z","message":"","observedGeneration":1,"reason":"Divided","status":"True","type":"Computed"},` +
		`{"lastTransitionTime":"2026-11-27T05:20:12Z","message":"","observedGeneration":1,"reason":"Succeeded","status":"True","type":"Ready"}]}}`
	cut, ok := versionValue(nil, []byte(answer))
	if !ok {
		b.Fatal("the answer was not cut")
	}
	for _, bc := range []struct {
		name string
		body []byte
	}{{"trimmed", []byte(answer)}, {"version-only", cut}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := &testapi.Widget{}
				if _, _, err := decoder.Decode(bc.body, nil, w); err != nil {
					b.Fatal(err)
				}
				if w.ResourceVersion != "123456" {
					b.Fatalf("decoded version %q", w.ResourceVersion)
				}
			}
		})
	}
}
