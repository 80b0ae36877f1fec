package rwexternal_test

import (
	"fmt"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/examples/rwexternal"
	rwv1 "github.com/bosunkit/bosun/examples/rwexternal/api/v1alpha1"
)

// The reconciler's steps, what they own, and what else they do for the
// engine.
func ExampleSteps() {
	for _, s := range rwexternal.Steps() {
		line := bosun.StepName(s)
		if o, ok := s.(bosun.ConditionOwner); ok {
			line += fmt.Sprintf(" owns %v", o.Conditions())
		}
		if _, ok := s.(bosun.Observer[*rwv1.RWExternal]); ok {
			line += ", observes under skip"
		}
		if _, ok := s.(bosun.Cleaner[*rwv1.RWExternal]); ok {
			line += ", cleans up"
		}
		fmt.Println(line)
	}
	fmt.Println("finalizer:", rwexternal.NewReconciler().Finalizer)
	// Output:
	// readInput owns [InputReady], observes under skip
	// writeOutput owns [OutputReady], observes under skip, cleans up
	// finalizer: rwexternal.bosun.dev/output
}

// Derive turns the input data into the output data: upper-case keys holding
// the SHA-256 digests of the values.
func ExampleDerive() {
	out, err := rwexternal.Derive(map[string][]byte{"password": []byte("hunter2")})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("PASSWORD=%s\n", out["PASSWORD"])

	_, err = rwexternal.Derive(map[string][]byte{"token": nil, "Token": nil})
	fmt.Println(err)
	// Output:
	// PASSWORD=f52fbd32b2b3b86ff88ef6c490628285f482af15ddcb29541f94bcf526a3f6c7
	// input keys collide: "Token" and "token" both become "TOKEN"
}

// Samples are the RWExternals that `bosun demo` creates; PrepareSamples
// first creates the input Secrets they read.
func ExampleSamples() {
	for _, obj := range rwexternal.Samples("demo") {
		rw := obj.(*rwv1.RWExternal)
		policy := rw.Annotations[bosun.AnnotationReconcilePolicy]
		if policy == "" {
			policy = "manage"
		}
		fmt.Printf("%s: %s -> %s (%s)\n", rw.Name, rw.Spec.InputSecret, rw.OutputSecretName(), policy)
	}
	for _, s := range rwexternal.SampleInputs("demo") {
		fmt.Printf("input %s/%s\n", s.Namespace, s.Name)
	}
	// Output:
	// alpha: alpha-credentials -> alpha-output (manage)
	// beta: beta-credentials -> beta-fingerprints (detach-on-delete)
	// input demo/alpha-credentials
	// input demo/beta-credentials
}
