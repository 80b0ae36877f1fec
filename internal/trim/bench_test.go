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
