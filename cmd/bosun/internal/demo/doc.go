// Package demo runs bosun's example operators against an embedded control
// plane: it starts kube-apiserver and etcd, installs every example's CRDs,
// runs all example controllers in one manager, creates sample objects and
// reports their progress until each one is Ready.
//
// It backs the `bosun demo` command and `make demo`.
package demo
