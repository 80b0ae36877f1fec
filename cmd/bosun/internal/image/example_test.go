package image_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/bosunkit/bosun/cmd/bosun/internal/image"
)

// Build a program's image into a tarball, then read it back as `docker
// load` would.
func ExampleBuild() {
	dir, err := os.MkdirTemp("", "image-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "tiny.tar")
	if _, err := image.Build(context.Background(), image.Options{
		Main:    "./testdata/tiny",
		Tag:     "tiny:dev",
		Output:  out,
		Arch:    "amd64",
		Version: "v1.0.0",
	}); err != nil {
		fmt.Println(err)
		return
	}

	tag, _ := name.NewTag("tiny:dev")
	img, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.OS, cfg.Architecture)
	fmt.Println(cfg.Config.Entrypoint, cfg.Config.User, cfg.Config.Labels[image.LabelVersion])
	// Output:
	// linux amd64
	// [/manager] 65532:65532 v1.0.0
}
