package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCountLines(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want int
	}{
		{name: "empty", src: "", want: 0},
		{name: "blank and comment lines", src: "package x\n\n// doc\n  // indented\nfunc f() {}\n", want: 2},
		{name: "code with a trailing comment counts", src: "x := 1 // one\n", want: 1},
		{name: "block comment", src: "/*\nlicence\n*/\npackage x\n", want: 1},
		{name: "one-line block comment", src: "/* note */\npackage x\n", want: 1},
		{name: "code after a block comment ends", src: "/* a\nb */ var x int\n", want: 1},
		{name: "bosun document", src: "bind v1 k8s.io/api/core/v1\n\n// A decl.\ndecl X for Y {\n}\n", want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := countLines([]byte(tt.src)); got != tt.want {
				t.Errorf("countLines(%q) = %d, want %d", tt.src, got, tt.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	type got struct {
		Example, Kind string
		OK            bool
	}
	tests := []struct {
		path string
		want got
	}{
		{"cronjob/controller.go", got{"cronjob", kindOperator, true}},
		{"cronjob/cronjob.bosun", got{"cronjob", kindOperator, true}},
		{"cronjob/zz_generated.cronjob.go", got{"cronjob", kindGenerated, true}},
		{"cronjob/api/v1/types.go", got{"cronjob", kindAPI, true}},
		{"cronjob/api/v1/zz_generated.deepcopy.go", got{"cronjob", kindGenerated, true}},
		{"cronjob/unit_test.go", got{"cronjob", kindTests, true}},
		{"site/scheme.go", got{"site", kindWiring, true}},
		{"site/samples.go", got{"site", kindWiring, true}},
		{"postgres/pgserver/server.go", got{}},
		{"site/config/crd/site.yaml", got{}},
		{"README.md", got{}},
	}
	for _, tt := range tests {
		var g got
		g.Example, g.Kind, g.OK = classify(tt.path)
		if diff := cmp.Diff(tt.want, g); diff != "" {
			t.Errorf("classify(%q) (-want +got):\n%s", tt.path, diff)
		}
	}
}
