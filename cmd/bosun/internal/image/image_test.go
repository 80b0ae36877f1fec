package image_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/bosunkit/bosun/cmd/bosun/internal/image"
)

// read returns the image tagged tag in the tarball path.
func read(t *testing.T, path, tag string) v1.Image {
	t.Helper()
	ref, err := name.NewTag(tag)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(path, &ref)
	if err != nil {
		t.Fatalf("reading %s back: %v", path, err)
	}
	return img
}

// file is what a test checks of one entry of a layer.
type file struct {
	Name    string
	Mode    int64
	UID     int
	GID     int
	ModTime time.Time
	Head    []byte // the first 20 bytes
}

// files lists the entries of layer.
func files(t *testing.T, layer v1.Layer) []file {
	t.Helper()
	rc, err := layer.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var out []file
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 20)
		n, _ := io.ReadFull(tr, head)
		out = append(out, file{Name: hdr.Name, Mode: hdr.Mode, UID: hdr.Uid, GID: hdr.Gid, ModTime: hdr.ModTime.UTC(), Head: head[:n]})
	}
}

// isELF reports whether head starts an ELF executable for x86-64.
func isELF(head []byte) bool {
	return len(head) == 20 && bytes.Equal(head[:4], []byte("\x7fELF")) && head[18] == 0x3e
}

// config is what a test checks of an image's config.
type config struct {
	OS, Architecture string
	Created          time.Time
	Entrypoint       []string
	User, WorkingDir string
	Labels           map[string]string
	History          []string // created by, time, comment
}

func configOf(t *testing.T, img v1.Image) config {
	t.Helper()
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	got := config{
		OS: cfg.OS, Architecture: cfg.Architecture, Created: cfg.Created.UTC(),
		Entrypoint: cfg.Config.Entrypoint, User: cfg.Config.User, WorkingDir: cfg.Config.WorkingDir,
		Labels: cfg.Config.Labels,
	}
	for _, h := range cfg.History {
		got.History = append(got.History, fmt.Sprintf("%s at %s: %s", h.CreatedBy, h.Created.UTC().Format(time.RFC3339), h.Comment))
	}
	return got
}

// TestBuildHello builds the hello example's image twice into tarballs and
// reads it back: one layer holding a static linux binary at /manager,
// run as a non-root user, and the same digest both times. `make image`
// builds every example's image the same way.
func TestBuildHello(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	dir := t.TempDir()
	opts := image.Options{
		Main:    "./examples/hello/cmd",
		Dir:     filepath.Join("..", "..", "..", ".."),
		Tag:     "hello:dev",
		Arch:    "amd64",
		Source:  "https://github.com/bosunkit/bosun",
		Version: "v0.0.0-test",
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

	img := read(t, opts.Output, "hello:dev")
	if d, err := img.Digest(); err != nil || d != first {
		t.Errorf("the tarball's image has digest %s (%v), want %s", d, err, first)
	}
	want := config{
		OS: "linux", Architecture: "amd64", Created: time.Unix(0, 0).UTC(),
		Entrypoint: []string{"/manager"}, User: "65532:65532", WorkingDir: "/",
		Labels: map[string]string{
			image.LabelSource:  "https://github.com/bosunkit/bosun",
			image.LabelVersion: "v0.0.0-test",
		},
		History: []string{"bosun image at 1970-01-01T00:00:00Z: the binary of ./examples/hello/cmd at /manager"},
	}
	if diff := cmp.Diff(want, configOf(t, img)); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d (%v), want 1", len(layers), err)
	}
	got := files(t, layers[0])
	if len(got) != 1 || !isELF(got[0].Head) {
		t.Fatalf("the layer holds %+v, want one x86-64 ELF binary", got)
	}
	got[0].Head = nil
	if diff := cmp.Diff([]file{{Name: "manager", Mode: 0o755, ModTime: time.Unix(0, 0).UTC()}}, got); diff != "" {
		t.Errorf("the layer (-want +got):\n%s", diff)
	}
}

// TestBuildOnBase: with a base tarball, /manager is a layer on top of the
// base's, and the base's labels stay unless overridden; SOURCE_DATE_EPOCH
// sets the image's time.
func TestBuildOnBase(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	dir := t.TempDir()
	base := image.Options{
		Main:   "./testdata/tiny",
		Tag:    "base:dev",
		Arch:   "amd64",
		Output: filepath.Join(dir, "base.tar"),
		Labels: map[string]string{"example.com/kept": "yes", image.LabelVersion: "base"},
	}
	if _, err := image.Build(t.Context(), base); err != nil {
		t.Fatal(err)
	}
	opts := image.Options{
		Main:    "./testdata/tiny",
		Tag:     "tiny:dev",
		Arch:    "amd64",
		Output:  filepath.Join(dir, "tiny.tar"),
		Base:    base.Output,
		Version: "v2",
	}
	if _, err := image.Build(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	img := read(t, opts.Output, "tiny:dev")
	created := time.Unix(1700000000, 0).UTC()
	want := config{
		OS: "linux", Architecture: "amd64", Created: created,
		Entrypoint: []string{"/manager"}, User: image.User, WorkingDir: "/",
		Labels: map[string]string{"example.com/kept": "yes", image.LabelVersion: "v2"},
		History: []string{
			"bosun image at 2023-11-14T22:13:20Z: the binary of ./testdata/tiny at /manager",
			"bosun image at 2023-11-14T22:13:20Z: the binary of ./testdata/tiny at /manager",
		},
	}
	if diff := cmp.Diff(want, configOf(t, img)); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 2 {
		t.Fatalf("layers: %d (%v), want the base's and /manager", len(layers), err)
	}
	for i, l := range layers {
		got := files(t, l)
		if len(got) != 1 || got[0].Name != "manager" || got[0].ModTime != created || !isELF(got[0].Head) {
			t.Errorf("layer %d holds %+v, want /manager of %v", i, got, created)
		}
	}

	opts.Arch = "arm64"
	if _, err := image.Build(t.Context(), opts); err == nil {
		t.Error("an arm64 image on an amd64 base: no error")
	}
}

// TestBuildErrors: what cannot be built says why.
func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts image.Options
	}{
		{"no main", image.Options{Tag: "x:dev", Output: filepath.Join(t.TempDir(), "x.tar")}},
		{"no tag", image.Options{Main: ".", Output: filepath.Join(t.TempDir(), "x.tar")}},
		{"no output", image.Options{Main: ".", Tag: "x:dev"}},
		{"bad tag", image.Options{Main: ".", Tag: "Bad Tag", Output: filepath.Join(t.TempDir(), "x.tar")}},
		{"no base", image.Options{Main: "./testdata/tiny", Tag: "x:dev", Base: filepath.Join(t.TempDir(), "missing.tar"), Output: filepath.Join(t.TempDir(), "x.tar")}},
		{"not a main package", image.Options{Main: "./internal/nothing-here", Dir: filepath.Join("..", "..", "..", ".."), Tag: "x:dev", Output: filepath.Join(t.TempDir(), "x.tar")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := image.Build(t.Context(), tc.opts); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
