package image

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// User is the user and group the image runs as: not root, and the one the
// examples' Deployments ask for.
const User = "65532:65532"

// Options say what Build builds.
type Options struct {
	// Main is the Go main package, as go build takes it
	// ("./examples/hello/cmd"). Required.
	Main string
	// Dir is the directory go build runs in (the module); empty means the
	// current one. Only Main is relative to it: Output and Base are
	// relative to the current directory.
	Dir string
	// Tag names the image in the tarball ("hello:dev"). Required.
	Tag string
	// Output is the tarball to write. Required.
	Output string
	// Arch is the CPU architecture (GOARCH); empty means this machine's.
	Arch string
	// Created is the creation time recorded in the image and on its file;
	// zero means SOURCE_DATE_EPOCH when set, else the Unix epoch, so that
	// builds are reproducible.
	Created time.Time
	// Source is the org.opencontainers.image.source label: where the
	// sources are ("https://github.com/bosunkit/bosun"). Empty: no label.
	Source string
	// Version is the org.opencontainers.image.version label ("v0.3.0",
	// a commit). Empty: no label.
	Version string
	// Labels are more labels for the image's config; Source and Version
	// win over the same keys here.
	Labels map[string]string
	// Base is an image tarball (as `docker save` or Build write them) to
	// put /manager on, for operators that need more than their binary,
	// such as CA certificates. Empty means no base: the image holds
	// /manager and nothing else. The base must hold exactly one image,
	// for linux and Arch.
	Base string
}

// The OCI annotation keys Build sets as labels.
const (
	LabelSource  = "org.opencontainers.image.source"
	LabelVersion = "org.opencontainers.image.version"
)

// Build compiles o.Main for linux as a static binary (CGO_ENABLED=0,
// -trimpath, no build id), puts it at /manager in a layer of its own on
// top of o.Base (by default, on nothing), and writes the image to
// o.Output, tagged o.Tag. The image runs /manager as User in /. It
// returns the image's digest.
func Build(ctx context.Context, o Options) (v1.Hash, error) {
	switch {
	case o.Main == "":
		return v1.Hash{}, errors.New("image: no main package")
	case o.Tag == "":
		return v1.Hash{}, errors.New("image: no tag")
	case o.Output == "":
		return v1.Hash{}, errors.New("image: no output file")
	}
	ref, err := name.ParseReference(o.Tag)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image: tag %q: %w", o.Tag, err)
	}
	if o.Arch == "" {
		o.Arch = runtime.GOARCH
	}
	created, err := createdTime(o.Created)
	if err != nil {
		return v1.Hash{}, err
	}
	base, err := baseImage(o.Base, o.Arch)
	if err != nil {
		return v1.Hash{}, err
	}
	tmp, err := os.MkdirTemp("", "bosun-image-")
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image: %w", err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "manager")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w -buildid=", "-o", bin, o.Main)
	build.Dir = o.Dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+o.Arch)
	if out, err := build.CombinedOutput(); err != nil {
		return v1.Hash{}, fmt.Errorf("image: building %s: %w\n%s", o.Main, err, out)
	}
	layer, err := binaryLayer(bin, created)
	if err != nil {
		return v1.Hash{}, err
	}
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "bosun image", Comment: "the binary of " + o.Main + " at /manager"},
	})
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", o.Arch
	cfg.Created = v1.Time{Time: created}
	cfg.Config.Entrypoint = []string{"/manager"}
	cfg.Config.User = User
	cfg.Config.WorkingDir = "/"
	cfg.Config.Labels = labels(cfg.Config.Labels, o)
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return v1.Hash{}, fmt.Errorf("image: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(o.Output), 0o755); err != nil {
		return v1.Hash{}, fmt.Errorf("image: %w", err)
	}
	if err := tarball.WriteToFile(o.Output, ref, img); err != nil {
		return v1.Hash{}, fmt.Errorf("image: writing %s: %w", o.Output, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, fmt.Errorf("image: %w", err)
	}
	return digest, nil
}

// baseImage is the image in the tarball path, or the empty image when
// path is empty.
func baseImage(path, arch string) (v1.Image, error) {
	if path == "" {
		return empty.Image, nil
	}
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		return nil, fmt.Errorf("image: base %s: %w", path, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image: base %s: %w", path, err)
	}
	if cfg.OS != "linux" || cfg.Architecture != arch {
		return nil, fmt.Errorf("image: base %s is for %s/%s, want linux/%s", path, cfg.OS, cfg.Architecture, arch)
	}
	return img, nil
}

// labels are the base's labels, then o.Labels, then the source and
// version labels, in a new map; nil when there are none.
func labels(base map[string]string, o Options) map[string]string {
	out := map[string]string{}
	maps.Copy(out, base)
	maps.Copy(out, o.Labels)
	if o.Source != "" {
		out[LabelSource] = o.Source
	}
	if o.Version != "" {
		out[LabelVersion] = o.Version
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// createdTime is t, else SOURCE_DATE_EPOCH, else the Unix epoch.
func createdTime(t time.Time) (time.Time, error) {
	if !t.IsZero() {
		return t.UTC(), nil
	}
	if v := os.Getenv("SOURCE_DATE_EPOCH"); v != "" {
		sec, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("image: SOURCE_DATE_EPOCH=%q is not a number of seconds: %w", v, err)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	return time.Unix(0, 0).UTC(), nil
}

// binaryLayer makes a layer holding the file bin as /manager, mode 0755,
// owned by root, with the modification time created.
func binaryLayer(bin string, created time.Time) (v1.Layer, error) {
	f, err := os.Open(bin)
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	var buf bytes.Buffer
	// The binary, a header and the end-of-archive blocks, in one allocation.
	buf.Grow(int(info.Size()) + 8<<10)
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{Name: "manager", Mode: 0o755, Size: info.Size(), ModTime: created, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	if _, err := io.Copy(tw, f); err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	raw := buf.Bytes()
	// Compress once: the digest, the config and the tarball all read it.
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }, tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	return layer, nil
}
