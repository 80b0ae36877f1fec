package faults_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/controlplane"
)

// A process whose every create is answered 500 half of the time, with a
// seed that makes the choice repeatable: the same creates fail in every
// run.
func ExampleRun() {
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()

	plan := faults.Plan{Seed: 1, Rules: []faults.Rule{{Fault: faults.InternalError, Rate: 0.5, Verbs: []string{"create"}}}}
	p, err := faults.Run(ctx, cp, faults.Options{Plan: plan}, logr.Discard(), func(ctrl.Manager, *faults.Process) error { return nil })
	if err != nil {
		log.Fatal(err)
	}
	defer p.Stop()

	c := p.Manager().GetClient()
	for i := range 4 {
		err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("cm-%d", i)}})
		fmt.Printf("cm-%d: %v\n", i, apierrors.IsInternalError(err))
	}
	fmt.Println("injected:", p.Stats().Faults[faults.InternalError])
	fmt.Println("writes that took effect:", len(p.Writes()))
	// Output:
	// cm-0: false
	// cm-1: true
	// cm-2: true
	// cm-3: false
	// injected: 2
	// writes that took effect: 2
}

// Kill a process right after its second write: the write stands, and
// everything the process sends afterwards fails.
func ExampleCrashPoint() {
	ctx := context.Background()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = cp.Stop() }()

	plan := faults.Plan{Crash: faults.CrashPoint{After: 2}}
	p, err := faults.Run(ctx, cp, faults.Options{Plan: plan}, logr.Discard(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer p.Stop()

	c := p.Manager().GetClient()
	for i := range 3 {
		err := c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("step-%d", i)}})
		fmt.Printf("step-%d: crashed=%v\n", i, errors.Is(err, faults.ErrCrashed))
	}
	<-p.Crashed()
	fmt.Println("writes that took effect:", len(p.Writes()))
	// Output:
	// step-0: crashed=false
	// step-1: crashed=false
	// step-2: crashed=true
	// writes that took effect: 2
}
