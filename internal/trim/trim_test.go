package trim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

const (
	// wireFields is a Widget's managedFields as the API server writes them.
	wireFields = `[{"apiVersion":"test.bosun.dev/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:value":{}}},"manager":"e2e","operation":"Update","time":"2026-11-26T19:31:21Z"},{"apiVersion":"test.bosun.dev/v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:status":{}}}}},"manager":"bosun","operation":"Update","subresource":"status","time":"2026-11-26T19:31:22Z"}]`
	// wireWidget is a Widget as the API server writes it.
	wireWidget = `{"apiVersion":"test.bosun.dev/v1","kind":"Widget","metadata":{"creationTimestamp":"2026-11-26T19:31:21Z","generation":1,"managedFields":` + wireFields + `,"name":"w-1","namespace":"bench","resourceVersion":"12","uid":"7d3c"},"spec":{"value":10},"status":{"conditions":[{"reason":"Computed","status":"True","type":"Ready"}]}}`
	// wireTrimmed is wireWidget without its managedFields.
	wireTrimmed = `{"apiVersion":"test.bosun.dev/v1","kind":"Widget","metadata":{"creationTimestamp":"2026-11-26T19:31:21Z","generation":1,"name":"w-1","namespace":"bench","resourceVersion":"12","uid":"7d3c"},"spec":{"value":10},"status":{"conditions":[{"reason":"Computed","status":"True","type":"Ready"}]}}`
)

func TestTrimValue(t *testing.T) {
	child := `{"metadata":{"labels":{"app":"x","bosun.dev/set":"s"},"managedFields":[{"manager":"m"}],"name":"c"}}`
	escaped := `{"metadata":{"labels":{"bosun.dev\/set":"s"},"managedFields":[{"manager":"m"}]}}`
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"watch event", `{"type":"MODIFIED","object":` + wireWidget + "}", `{"type":"MODIFIED","object":` + wireTrimmed + "}"},
		{"single object", wireWidget, wireTrimmed},
		{"list", `{"kind":"WidgetList","metadata":{"resourceVersion":"9"},"items":[` + wireWidget + `,` + wireWidget + `]}`,
			`{"kind":"WidgetList","metadata":{"resourceVersion":"9"},"items":[` + wireTrimmed + `,` + wireTrimmed + `]}`},
		{"empty list", `{"kind":"WidgetList","items":[]}`, `{"kind":"WidgetList","items":[]}`},
		{"fields first", `{"metadata":{"managedFields":[],"name":"a"}}`, `{"metadata":{"name":"a"}}`},
		{"fields last", `{"metadata":{"name":"a","managedFields":[{"a":"}"}]}}`, `{"metadata":{"name":"a"}}`},
		{"fields alone", `{"metadata":{"managedFields":null}}`, `{"metadata":{}}`},
		{"white space", "{ \"object\" : { \"metadata\" : { \"name\" : \"a\" ,\n \"managedFields\" : [ ] } } }", "{ \"object\" : { \"metadata\" : { \"name\" : \"a\"  } } }"},
		{"fields twice", `{"metadata":{"managedFields":[],"name":"a","managedFields":[]}}`, `{"metadata":{"name":"a"}}`},
		{"child of a set", child, child},
		{"child of a set, event", `{"type":"ADDED","object":` + child + `}`, `{"type":"ADDED","object":` + child + `}`},
		{"escaped label key", escaped, escaped},
		{"other labels", `{"metadata":{"labels":{"bosun.dev/other":"s"},"managedFields":[]}}`, `{"metadata":{"labels":{"bosun.dev/other":"s"}}}`},
		{"metadata deeper is kept", `{"spec":{"template":{"metadata":{"managedFields":[]}}}}`, `{"spec":{"template":{"metadata":{"managedFields":[]}}}}`},
		{"bookmark", `{"type":"BOOKMARK","object":{"kind":"Widget","metadata":{"resourceVersion":"5","annotations":{"k8s.io/initial-events-end":"true"}}}}`,
			`{"type":"BOOKMARK","object":{"kind":"Widget","metadata":{"resourceVersion":"5","annotations":{"k8s.io/initial-events-end":"true"}}}}`},
		{"status", `{"kind":"Status","status":"Failure","code":410}`, `{"kind":"Status","status":"Failure","code":410}`},
		{"not JSON", `{"metadata":{"managedFields":[],"name":}}`, `{"metadata":{"managedFields":[],"name":}}`},
		{"cut short", `{"metadata":{"managedFields":[]`, `{"metadata":{"managedFields":[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(trimValue(nil, []byte(tt.in)))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("trimValue (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTrimReader reads a watch stream through trimReader in pieces of
// every size: each event comes out trimmed, the space between them as it
// was.
func TestTrimReader(t *testing.T) {
	event := `{"type":"MODIFIED","object":` + wireWidget + "}\n"
	trimmed := `{"type":"MODIFIED","object":` + wireTrimmed + "}\n"
	// Quotes and braces in strings, after escaped backslashes or not.
	odd := `{"type":"ADDED","object":{"metadata":{"managedFields":[{"m":"\\\\"},{"m":"}\\\"{"}],"name":"\\\\\\\\"}}}` + "\n"
	oddTrimmed := `{"type":"ADDED","object":{"metadata":{"name":"\\\\\\\\"}}}` + "\n"
	stream := strings.Repeat(event+odd, 3)
	want := strings.Repeat(trimmed+oddTrimmed, 3)
	readers := map[string]func(io.Reader) io.Reader{
		"whole":        func(r io.Reader) io.Reader { return r },
		"one byte":     iotest.OneByteReader,
		"half reads":   iotest.HalfReader,
		"data and EOF": iotest.DataErrReader,
	}
	for name, wrap := range readers {
		t.Run(name, func(t *testing.T) {
			r := &trimReader{body: io.NopCloser(wrap(strings.NewReader(stream)))}
			got, err := io.ReadAll(iotest.OneByteReader(r))
			if err != nil {
				t.Fatalf("reading: %v", err)
			}
			if diff := cmp.Diff(want, string(got)); diff != "" {
				t.Errorf("trimmed stream (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTrimReaderGivesEachEventOn reads a watch stream that stays open: each
// event must come out as soon as it is whole, without waiting for the next.
func TestTrimReaderGivesEachEventOn(t *testing.T) {
	pr, pw := io.Pipe()
	r := &trimReader{body: pr}
	event := `{"type":"ADDED","object":` + wireWidget + "}"
	go func() {
		_, _ = pw.Write([]byte(event[:100]))
		_, _ = pw.Write([]byte(event[100:] + "\n"))
	}()
	dec := json.NewDecoder(r)
	var got map[string]any
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("decoding the first event: %v", err)
	}
	obj := got["object"].(map[string]any)["metadata"].(map[string]any)
	if _, ok := obj["managedFields"]; ok {
		t.Errorf("managedFields not trimmed: %v", obj)
	}
	_ = pw.Close()
}

// TestTrimReaderLetsLongBuffersGo reads a long value and then a short one
// from a stream that stays open: the buffers the long one needed are not
// kept for the rest of the watch.
func TestTrimReaderLetsLongBuffersGo(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	r := &trimReader{body: pr}
	long := `{"kind":"WidgetList","items":[` + strings.Repeat(wireWidget+",", 200) + wireWidget + "]}\n"
	short := `{"type":"ADDED","object":` + wireWidget + "}\n"
	go func() {
		_, _ = io.WriteString(pw, long)
		_, _ = io.WriteString(pw, short)
	}()
	dec := json.NewDecoder(r)
	for _, name := range []string{"long", "short"} {
		var v map[string]any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("decoding the %s value: %v", name, err)
		}
	}
	if cap(r.buf) > idleBuffer || cap(r.out) > idleBuffer {
		t.Errorf("after a %d-byte value, trimReader keeps %d and %d bytes; want at most %d each", len(long), cap(r.buf), cap(r.out), idleBuffer)
	}
}

// TestTrimReaderPassesOtherStreams gives on a stream that is not a series
// of objects as it came.
func TestTrimReaderPassesOtherStreams(t *testing.T) {
	for _, in := range []string{`[` + wireWidget + `]`, "42", `"text"`, "\n\n"} {
		r := &trimReader{body: io.NopCloser(strings.NewReader(in))}
		got, err := io.ReadAll(r)
		if err != nil || string(got) != in {
			t.Errorf("read %q, %v; want %q", got, err, in)
		}
	}
}

// TestTrimReaderPassesLongValues gives on a value longer than maxTrimmed,
// and what follows it, as they came: trimReader does not hold more back.
func TestTrimReaderPassesLongValues(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"kind":"WidgetList","items":[`)
	for b.Len() <= maxTrimmed {
		b.WriteString(wireWidget + ",")
	}
	b.WriteString(wireWidget + "]}\n")
	long := b.String()
	in := long + `{"object":` + wireWidget + "}"
	r := &trimReader{body: io.NopCloser(strings.NewReader(in))}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != in {
		t.Errorf("read %d bytes, not the %d written as they came", len(got), len(in))
	}
}

// TestClients checks which answers Reads and Marked trim: Reads those to
// GET requests, Marked those to requests made with a context from Mark.
func TestClients(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", req.URL.Query().Get("type"))
		if req.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = io.WriteString(w, wireWidget)
	}))
	defer srv.Close()
	reads, marked := Reads(srv.Client()), Marked(srv.Client())
	if again := Reads(reads); again != reads {
		t.Errorf("Reads wrapped its own client again")
	}
	if again := Marked(marked); again != marked {
		t.Errorf("Marked wrapped its own client again")
	}
	if both := Marked(reads); both == reads {
		t.Errorf("Marked took a client of Reads for its own")
	}
	tests := []struct {
		name                string
		c                   *http.Client
		method, contentType string
		mark                bool // the request's context carries Mark
		want                string
	}{
		{"reads: get", reads, http.MethodGet, "application/json", false, wireTrimmed},
		{"reads: watch", reads, http.MethodGet, "application/json;stream=watch", false, wireTrimmed},
		{"reads: yaml", reads, http.MethodGet, "application/yaml", false, wireWidget},
		{"reads: patch", reads, http.MethodPatch, "application/json", true, wireWidget},
		{"marked: patch", marked, http.MethodPatch, "application/json", true, wireTrimmed},
		{"marked: created", marked, http.MethodPost, "application/json", true, wireTrimmed},
		{"marked: yaml", marked, http.MethodPatch, "application/yaml", true, wireWidget},
		{"marked: unmarked patch", marked, http.MethodPatch, "application/json", false, wireWidget},
		{"marked: unmarked get", marked, http.MethodGet, "application/json", false, wireWidget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			if tt.mark {
				ctx = Mark(ctx)
			}
			req, err := http.NewRequestWithContext(ctx, tt.method, srv.URL+"?type="+url.QueryEscape(tt.contentType), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := tt.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzTrimValue checks that trimming takes nothing but the managedFields
// a tuning.LeanCache drops: decoded, a trimmed value and the value it came from are
// the same once those are dropped from both, and a trimmed JSON value is
// still JSON.
func FuzzTrimValue(f *testing.F) {
	for _, s := range []string{
		wireWidget,
		`{"type":"MODIFIED","object":` + wireWidget + "}",
		`{"items":[` + wireWidget + `,{"metadata":{"labels":{"bosun.dev/set":""},"managedFields":[]}}]}`,
		`{"metadata":{"managedFields":[],"managedFields":{}}}`,
		`{"metadata" : {"labels":{"bosun.dev\u002fset":"x"}, "managedFields":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := trimValue(nil, in)
		if !json.Valid(in) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("trimming %s made %s, which is not JSON", in, out)
		}
		if diff := cmp.Diff(dropFields(t, in), dropFields(t, out)); diff != "" {
			t.Fatalf("trimming %s changed more than managedFields (-in +out):\n%s", in, diff)
		}
		// Read a byte at a time, as a stream, the value comes out the same.
		read, err := io.ReadAll(&trimReader{body: io.NopCloser(iotest.OneByteReader(bytes.NewReader(in)))})
		if err != nil || !json.Valid(read) {
			t.Fatalf("reading %s through trimReader: %q, %v", in, read, err)
		}
		if diff := cmp.Diff(dropFields(t, in), dropFields(t, read)); diff != "" {
			t.Fatalf("reading %s through trimReader changed more than managedFields (-in +out):\n%s", in, diff)
		}
	})
}

// dropFields decodes a JSON value and drops the managedFields that
// trimValue may cut, as a tuning.LeanCache does.
func dropFields(t *testing.T, b []byte) any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	top, ok := v.(map[string]any)
	if !ok {
		return v
	}
	drop := func(obj any) {
		m, ok := obj.(map[string]any)
		if !ok {
			return
		}
		md, ok := m["metadata"].(map[string]any)
		if !ok {
			return
		}
		if labels, ok := md["labels"].(map[string]any); ok {
			if _, child := labels[KeepLabel]; child {
				return
			}
		}
		delete(md, "managedFields")
	}
	drop(top)
	drop(top["object"])
	if items, ok := top["items"].([]any); ok {
		for _, it := range items {
			drop(it)
		}
	}
	return v
}
