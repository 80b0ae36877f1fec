package image_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/bosunkit/bosun/internal/image"
)

// TestBuild builds the image of a small program twice into tarballs and
// reads it back: one layer with a static linux binary at /manager, run as
// a non-root user, and the same digest both times. `make image` builds the
// examples' images the same way.
func TestBuild(t *testing.T) {
	dir := t.TempDir()
	opts := image.Options{
		Main:   "./testdata/tiny",
		Tag:    "hello:dev",
		Arch:   "amd64",
		Labels: map[string]string{"org.opencontainers.image.source": "https://github.com/bosunkit/bosun"},
	}
	opts.Output = filepath.Join(dir, "a.tar")
	first, err := image.Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.Output = filepath.Join(dir, "b.tar")
	second, err := image.Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Errorf("two builds of the same sources: digests %s and %s, want the same", first, second)
	}

	tag, err := name.NewTag("hello:dev")
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(opts.Output, &tag)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := img.Digest(); err != nil || d != first {
		t.Errorf("the tarball's image has digest %s (%v), want %s", d, err, first)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	got := []string{cfg.OS, cfg.Architecture, cfg.Config.User, cfg.Config.WorkingDir, cfg.Config.Labels["org.opencontainers.image.source"]}
	got = append(got, cfg.Config.Entrypoint...)
	want := []string{"linux", "amd64", image.User, "/", "https://github.com/bosunkit/bosun", "/manager"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config: os, arch, user, workdir, source label, entrypoint (-want +got):\n%s", diff)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	hdr, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	if hdr.Name != "manager" || hdr.Mode != 0o755 {
		t.Errorf("the layer's file is %s mode %o, want manager mode 755", hdr.Name, hdr.Mode)
	}
	head := make([]byte, 20)
	if _, err := io.ReadFull(tr, head); err != nil {
		t.Fatal(err)
	}
	// An ELF executable for x86-64.
	if !bytes.Equal(head[:4], []byte("\x7fELF")) || head[18] != 0x3e {
		t.Errorf("/manager is not an x86-64 ELF binary: % x", head)
	}
	if _, err := tr.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("the layer holds more than /manager: %v", err)
	}
}

// TestBuildErrors: what cannot be built says why.
func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts image.Options
	}{
		{"no main", image.Options{Tag: "x:dev", Output: filepath.Join(t.TempDir(), "x.tar")}},
		{"bad tag", image.Options{Main: ".", Tag: "Bad Tag", Output: filepath.Join(t.TempDir(), "x.tar")}},
		{"not a main package", image.Options{Main: "./internal/nothing-here", Dir: filepath.Join("..", ".."), Tag: "x:dev", Output: filepath.Join(t.TempDir(), "x.tar")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := image.Build(t.Context(), tc.opts); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
