package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"testing"

	"github.com/bosunkit/bosun/cmd/bosun/dsl"
)

// benchDoc returns a document of at least minLines lines over built-in kinds,
// using only selectors that need no Go types: names, labels, owned and the
// controller field.
func benchDoc(minLines int) []byte {
	targets := []string{"Deployment", "StatefulSet", "DaemonSet", "Job", "ConfigMap"}
	var b bytes.Buffer
	b.WriteString("// A large generated document for BenchmarkParseGenerate.\n\n")
	for d := 0; bytes.Count(b.Bytes(), []byte("\n")) < minLines; d++ {
		fmt.Fprintf(&b, "// Manager%d manages a %s.\n", d, targets[d%len(targets)])
		fmt.Fprintf(&b, "decl Manager%d for %s {\n\tstate {\n", d, targets[d%len(targets)])
		b.WriteString("\t\tpods []Pod {\n\t\t\tlabels/app=${target.Name}\n\t\t\tlabels/tier=backend\n\t\t\towned\n\t\t}\n")
		b.WriteString("\t\tjobs []Job {\n\t\t\tfields/.metadata.controller=${target.Name}\n\t\t\towned\n\t\t}\n")
		b.WriteString("\t\tsvc Service {\n\t\t\tname=${target.Name}-svc\n\t\t\towned\n\t\t}\n")
		b.WriteString("\t\tsettings ConfigMap {\n\t\t\tname=\"settings-${target.Namespace}\"\n\t\t}\n")
		b.WriteString("\t\tsecrets []Secret {\n\t\t\tlabels/owner=${target.Name}\n\t\t}\n")
		b.WriteString("\t}\n\n\taction {\n")
		b.WriteString("\t\t// Sync the pods.\n\t\tSyncPods(pods, settings)\n")
		b.WriteString("\t\tSyncJobs(jobs, secrets)\n\t\tSyncService(svc)\n\t\tReport()\n")
		b.WriteString("\t}\n}\n\n")
	}
	return b.Bytes()
}

// BenchmarkParseGenerate measures the whole path from text to Go source for
// a document of about 1,000 lines, without Go type checks, and its stages.
// The baseline is go/format alone on the Go source the document turns into:
// the cost any generator pays to hand out gofmt'd code, measured in the same
// run.
func BenchmarkParseGenerate(b *testing.B) {
	src := benchDoc(1000)
	lines := float64(bytes.Count(src, []byte("\n")))
	parse := func(b *testing.B) *dsl.File {
		f, err := dsl.Parse("bench.bosun", src)
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	check := func(b *testing.B, f *dsl.File) *dsl.Spec {
		spec, err := dsl.Check(f, dsl.CheckOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return spec
	}
	generate := func(b *testing.B, spec *dsl.Spec) []byte {
		out, err := Generate(spec, Options{Package: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	out := generate(b, check(b, parse(b)))

	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			parse(b)
		}
		b.ReportMetric(lines, "lines/op")
	})
	b.Run("parse+check", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			check(b, parse(b))
		}
		b.ReportMetric(lines, "lines/op")
	})
	b.Run("parse+check+generate", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			generate(b, check(b, parse(b)))
		}
		b.ReportMetric(lines, "lines/op")
		b.ReportMetric(float64(bytes.Count(out, []byte("\n"))), "outlines/op")
	})
	b.Run("baseline-gofmt-output", func(b *testing.B) {
		b.SetBytes(int64(len(out)))
		for b.Loop() {
			if _, err := format.Source(out); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(bytes.Count(out, []byte("\n"))), "outlines/op")
	})
}

// TestBenchDoc checks that the benchmark's document is as large as it says
// and goes through; TestGoldenCompiles compiles its output.
func TestBenchDoc(t *testing.T) {
	src := benchDoc(1000)
	if n := bytes.Count(src, []byte("\n")); n < 1000 || n > 1100 {
		t.Fatalf("document has %d lines, want about 1000", n)
	}
	f, err := dsl.Parse("bench.bosun", src)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := dsl.Check(f, dsl.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(spec, Options{Package: "bench"}); err != nil {
		t.Fatal(err)
	}
}
