package crd_test

import (
	"fmt"
	"io/fs"

	"github.com/bosunkit/bosun/examples/memcached/config/crd"
)

// Manifests holds one generated YAML file per custom resource.
func Example() {
	names, err := fs.Glob(crd.Manifests, "*.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range names {
		fmt.Println(name)
	}
	// Output:
	// cache.example.bosun.dev_memcacheds.yaml
}
