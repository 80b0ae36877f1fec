package postgres

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
)

// Samples returns the objects the demo creates in namespace: a Role that
// can log in, with at most five connections and its credentials published
// in the Secret "shop-credentials", and a Database owned by it. The
// Database is created first, so the demo shows it waiting for its Role.
// Each call returns new objects.
func Samples(namespace string) []client.Object {
	return []client.Object{
		&pgv1.Database{
			TypeMeta:   metav1.TypeMeta{APIVersion: pgv1.GroupVersion.String(), Kind: "Database"},
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "shop"},
			Spec:       pgv1.DatabaseSpec{Owner: "shop-owner", Encoding: DefaultEncoding},
		},
		&pgv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: pgv1.GroupVersion.String(), Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "shop-owner"},
			Spec: pgv1.RoleSpec{
				Login:                true,
				ConnectionLimit:      ptr.To[int32](5),
				ConnectionSecretName: "shop-credentials",
			},
		},
	}
}
