package hello_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/examples/hello"
	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
	"github.com/bosunkit/bosun/flow"
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

// The workflow of a reconcile depends on the loaded Greeting; flow.Describe
// shows its shape.
func ExampleGreetingReconciler_Workflow() {
	r := &hello.GreetingReconciler{}

	live := &hellov1.Greeting{Spec: hellov1.GreetingSpec{Name: "World"}}
	fmt.Println(flow.Describe(r.Workflow(live)))

	gone := live.DeepCopy()
	now := metav1.Now()
	gone.DeletionTimestamp = &now
	gone.Finalizers = []string{hello.Finalizer}
	fmt.Println(flow.Describe(r.Workflow(gone)))
	// Output:
	// Sequence(add finalizer, OrderedJoin(Sequence(render greeting, apply configmap, mark ready), patch status))
	// If(true, Sequence(delete configmap, remove finalizer))
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
