// Command bosun is the command-line tool of the bosun operator framework.
//
//	bosun gen [-o DIR] [--package NAME] [--module DIR] FILE...  generate Go code from .bosun documents
//	bosun check [--module DIR] FILE...                          check .bosun documents
//	bosun fmt [-w] [-l] [PATH...]                               format .bosun documents (files or directories)
//	bosun demo [--once] [--timeout 2m] [-v]                     run the example operators on an embedded control plane
//	bosun controlplane                                          build (once) and print the directory of kube-apiserver and etcd
//	bosun graph [--format mermaid|dot] FILE.bosun | --example NAME  draw a document's decls or an example's reconcilers
//	bosun explain KIND/NAME [-n NS] [--debug-url URL]            say why an object is not Ready (exit 0 Ready, 1 not)
//	bosun plan [--pkg ./cmd] -- FLAGS                           run a new build once with every write a dry run; print what it would change
//	bosun version [--short]                                     print what this binary was built from
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
	err := newRootCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(os.Stderr, "bosun:", err)
		}
		os.Exit(1)
	}
}
