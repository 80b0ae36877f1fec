// Command bosun is the command-line tool of the bosun operator framework.
//
//	bosun gen [-o DIR] [--package NAME] [--module DIR] FILE...  generate Go code from .bosun documents
//	bosun check [--module DIR] FILE...                          check .bosun documents
//	bosun fmt [-w] [-l] [PATH...]                               format .bosun documents (files or directories)
//	bosun demo [--once] [--timeout 2m] [-v]                     run the example operators on an embedded control plane
//	bosun controlplane                                          build (once) and print the directory of kube-apiserver and etcd
//	bosun graph [--format mermaid|dot] FILE.bosun | --example NAME  draw a document's decls or an example's reconcilers
//	bosun explain KIND/NAME [-n NS] [--debug-url URL]            say why an object is not Ready (exit 0 Ready, 1 not)
//	bosun plan [--pkg ./cmd] [-f FILE] -- FLAGS                 run a new build once with every write a dry run; print what it would change
//	                                                            (of the objects of FILE as edited, with -f)
//	bosun version [--short]                                     print what this binary was built from
//
// Installed as kubectl-bosun on the PATH, it is also the kubectl plugin
// "bosun": kubectl bosun plan -f edited.yaml.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	root := newRootCommand()
	asKubectlPlugin(root, os.Args[0])
	err := root.ExecuteContext(ctx)
	stop()
	if err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(os.Stderr, "bosun:", err)
		}
		os.Exit(1)
	}
}
