// Package image builds the container image of an operator from its Go main
// package, in process: no Docker daemon, no registry, nothing to pull. The
// image holds one static binary at /manager, on top of nothing or of a base
// image read from a local tarball, runs as the non-root user 65532, and is
// reproducible: the same sources give the same digest. It is written as a
// tarball in `docker save`'s format, which `docker load`, `kind load
// image-archive` and `crane push` read.
package image
