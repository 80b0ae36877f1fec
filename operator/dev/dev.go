// Package dev links the embedded control plane of an operator's --dev
// (package operator) into a development build. A release build leaves it
// out, and with it the control-plane builder and envtest.
//
// Import it for its side effect from a file of the operator's main package
// that only a development build compiles; bosun init writes it as
// cmd/dev.go, and `bosun dev` builds with the tag:
//
//	//go:build bosundev
//
//	package main
//
//	import _ "github.com/bosunkit/bosun/operator/dev"
//
// Run such a build with --dev (`go run -tags bosundev ./cmd --dev`); a
// build without it refuses --dev and says how to get one. Tests that run
// an operator with --dev import the package the same way.
//
// Maturity: stable. It has no API of its own.
package dev

import (
	"context"

	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/devhook"
)

func init() { devhook.Start = start }

// start starts the control plane r asks for.
func start(ctx context.Context, r devhook.Request) (*devhook.Cluster, error) {
	opts := controlplane.Options{Scheme: r.Scheme, CRDs: r.CRDs, Webhooks: r.Webhooks, Progress: r.Progress}
	if r.Workloads {
		opts.ControllerManager, opts.Nodes = true, r.Nodes
	}
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &devhook.Cluster{
		Config:          cp.Config,
		Client:          cp.Client,
		WebhookServer:   cp.WebhookServer,
		WriteKubeconfig: cp.WriteKubeconfig,
		Stop:            cp.Stop,
	}, nil
}
