package hello_test

import (
	"fmt"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/examples/hello"
	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
)

// Render turns a spec into the greeting the ConfigMap will hold.
func ExampleRender() {
	for _, spec := range []hellov1.GreetingSpec{
		{Name: "World"},
		{Name: "crew", Template: "Ahoy, %s! All hands 100%% on deck."},
		{Name: "x", Template: "Hello, %s and %s"},
	} {
		msg, err := hello.Render(spec)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(msg)
	}
	// Output:
	// Hello, World!
	// Ahoy, crew! All hands 100% on deck.
	// error: invalid template "Hello, %s and %s": it must contain exactly one %s; write %% for a literal percent sign
}

// The reconciler's one step, what it owns, and the finalizer its Cleanup
// calls for; Graph draws the same.
func ExampleNewReconciler() {
	r := hello.NewReconciler()
	for _, s := range r.Steps {
		line := bosun.StepName(s)
		if o, ok := s.(bosun.ConditionOwner); ok {
			line += fmt.Sprintf(" owns %v", o.Conditions())
		}
		if _, ok := s.(bosun.Cleaner[*hellov1.Greeting]); ok {
			line += ", cleans up"
		}
		fmt.Println(line)
	}
	fmt.Println("finalizer:", r.Finalizer)
	// Output:
	// publishGreeting owns [Published], cleans up
	// finalizer: hello.bosun.dev/configmap
}

// Samples are the Greetings that `bosun demo` creates.
func ExampleSamples() {
	for _, obj := range hello.Samples("demo") {
		g := obj.(*hellov1.Greeting)
		msg, _ := hello.Render(g.Spec)
		fmt.Printf("%s/%s: %s\n", g.Namespace, g.Name, msg)
	}
	// Output:
	// demo/world: Hello, World!
	// demo/gopher: Hi Gopher, welcome aboard.
	// demo/crew: Ahoy, crew! All hands 100% on deck.
}
