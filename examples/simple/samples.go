package simple

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
)

// Samples returns the Simples the demo creates in namespace: a plain
// division, one with a negative dividend and one with a divisor larger than
// the dividend. All of them become Ready. Each call returns new objects.
func Samples(namespace string) []client.Object {
	simple := func(name string, dividend, divisor int64) *simplev1.Simple {
		return &simplev1.Simple{
			TypeMeta:   metav1.TypeMeta{APIVersion: simplev1.GroupVersion.String(), Kind: "Simple"},
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec:       simplev1.SimpleSpec{Dividend: dividend, Divisor: divisor},
		}
	}
	return []client.Object{
		simple("seventeen-by-five", 17, 5),
		simple("minus-seven-by-two", -7, 2),
		simple("three-by-ten", 3, 10),
	}
}
