package hello

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hellov1 "github.com/bosunkit/bosun/examples/hello/api/v1alpha1"
)

// Samples returns the Greetings the demo creates in namespace: one with the
// default template, one with a template of its own, and one that also names
// its ConfigMap and escapes a percent sign. Each call returns new objects.
func Samples(namespace string) []client.Object {
	greeting := func(name string, spec hellov1.GreetingSpec) *hellov1.Greeting {
		return &hellov1.Greeting{
			TypeMeta:   metav1.TypeMeta{APIVersion: hellov1.GroupVersion.String(), Kind: "Greeting"},
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec:       spec,
		}
	}
	return []client.Object{
		greeting("world", hellov1.GreetingSpec{Name: "World"}),
		greeting("gopher", hellov1.GreetingSpec{Name: "Gopher", Template: "Hi %s, welcome aboard."}),
		greeting("crew", hellov1.GreetingSpec{
			Name:          "crew",
			Template:      "Ahoy, %s! All hands 100%% on deck.",
			ConfigMapName: "crew-greeting",
		}),
	}
}
