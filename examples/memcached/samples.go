package memcached

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/bosunkit/bosun/examples/memcached/api/v1alpha1"
)

// Samples returns the Memcached the demo creates in namespace:
// "memcached-sample", three servers of the default image on the default
// port, as config/samples has it. It becomes Ready once its three pods are
// (which needs a cluster that runs them). Each call returns new objects.
func Samples(namespace string) []client.Object {
	return []client.Object{&cachev1.Memcached{
		TypeMeta:   metav1.TypeMeta{APIVersion: cachev1.GroupVersion.String(), Kind: "Memcached"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "memcached-sample"},
		Spec:       cachev1.MemcachedSpec{Size: 3},
	}}
}
