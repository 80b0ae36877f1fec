package simple_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/examples/simple"
	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
)

// The reconciler is a list of steps; the engine names each after its Go type
// and initialises the conditions it owns.
func ExampleSteps() {
	for _, s := range simple.Steps() {
		line := bosun.StepName(s)
		if o, ok := s.(bosun.ConditionOwner); ok {
			line += fmt.Sprintf(" owns %v", o.Conditions())
		}
		fmt.Println(line)
	}
	// Output:
	// ensureNonZeroDivisor owns [DivisorValid]
	// divide
}

// Running the steps by hand, as the engine's Do phase does, on a Simple with
// a zero divisor: the first step reports it and stops the pass with
// bosun.ErrStop, which the engine does not count as a failure.
func ExampleSteps_zeroDivisor() {
	req := &bosun.Pass[*simplev1.Simple]{
		Object: &simplev1.Simple{Spec: simplev1.SimpleSpec{Dividend: 7, Divisor: 0}},
		Values: &bosun.Values{},
	}
	for _, s := range simple.Steps() {
		res, err := s.Do(context.Background(), req)
		if err != nil || res.RequeueAfter > 0 {
			fmt.Printf("%s stopped the pass: %v (ErrStop: %t)\n", bosun.StepName(s), err, errors.Is(err, bosun.ErrStop))
			break
		}
	}
	for _, c := range req.Object.Status.Conditions {
		fmt.Printf("%s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	// Output:
	// ensureNonZeroDivisor stopped the pass: zero divisor: bosun: pass stopped (ErrStop: true)
	// DivisorValid=False ZeroDivisor: spec.divisor is zero; set it to another number
}

// Divide follows Go's integer division: the quotient is truncated towards
// zero and the remainder has the sign of the dividend.
func ExampleDivide() {
	for _, d := range [][2]int64{{17, 5}, {-7, 2}, {7, 0}} {
		q, r, err := simple.Divide(d[0], d[1])
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%d / %d = %d remainder %d\n", d[0], d[1], q, r)
	}
	// Output:
	// 17 / 5 = 3 remainder 2
	// -7 / 2 = -3 remainder -1
	// error: divide 7 by 0: division by zero
}

// Samples are the Simples that `bosun demo` creates.
func ExampleSamples() {
	for _, obj := range simple.Samples("demo") {
		s := obj.(*simplev1.Simple)
		fmt.Printf("%s/%s: %d / %d\n", s.Namespace, s.Name, s.Spec.Dividend, s.Spec.Divisor)
	}
	// Output:
	// demo/seventeen-by-five: 17 / 5
	// demo/minus-seven-by-two: -7 / 2
	// demo/three-by-ten: 3 / 10
}
