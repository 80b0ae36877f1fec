package chart_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/bosunkit/bosun/cmd/bosun/internal/chart"
	"github.com/bosunkit/bosun/internal/manifests"
)

// Write makes a chart of the hello example's config/default: its values
// are the settings the manifests had.
func ExampleWrite() {
	_, objs, err := manifests.Build("../../../../examples/hello/config/default")
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "chart")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := chart.Write(dir, objs, chart.Options{Version: "1.0.0"}); err != nil {
		log.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(b))
	// Output:
	// apiVersion: v2
	// name: hello
	// description: The hello operator, made by bosun chart from its kustomize manifests.
	// type: application
	// version: 1.0.0
	// appVersion: "dev"
}
