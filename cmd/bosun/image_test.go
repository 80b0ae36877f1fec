package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestImageCommand runs `bosun image` as a process, from the module's
// root as `make image` does, and reads the tarball it wrote back.
func TestImageCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "images", "tiny.tar")
	stdout, stderr, status := runMain(t, filepath.Join("..", ".."), "image",
		"--main", "./cmd/bosun/internal/image/testdata/tiny", "--tag", "tiny:dev", "-o", out, "--arch", "amd64",
		"--source", "https://github.com/bosunkit/bosun", "--version", "v1.2.3", "--label", "example.com/team=platform")
	if status != 0 {
		t.Fatalf("bosun image: exit %d\n%s", status, stderr)
	}
	fields := strings.Fields(stdout)
	if len(fields) != 3 || fields[0] != out || fields[1] != "tiny:dev" || !strings.HasPrefix(fields[2], "sha256:") {
		t.Errorf("bosun image printed %q, want the tarball, the tag and the digest", stdout)
	}
	tag, err := name.NewTag("tiny:dev")
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := img.Digest(); err != nil || len(fields) == 3 && d.String() != fields[2] {
		t.Errorf("the tarball's digest is %s (%v), bosun image printed %s", d, err, stdout)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"org.opencontainers.image.source":  "https://github.com/bosunkit/bosun",
		"org.opencontainers.image.version": "v1.2.3",
		"example.com/team":                 "platform",
	}
	if diff := cmp.Diff(want, cfg.Config.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}

	_, stderr, status = runMain(t, filepath.Join("..", ".."), "image", "--main", "./cmd/bosun/internal/image/testdata/tiny", "-o", out)
	if status == 0 || !strings.Contains(stderr, "no tag") {
		t.Errorf("bosun image without --tag: exit %d, stderr %q; want a failure saying there is no tag", status, stderr)
	}
}
