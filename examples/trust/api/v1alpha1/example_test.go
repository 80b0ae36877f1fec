package v1alpha1_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// A Bundle that joins the key ca.crt of the trust namespace's ConfigMap
// corp-ca with the default CA package, and writes the bundle into a
// ConfigMap in every namespace labelled trust=enabled: the same YAML as for
// trust-manager.
func ExampleBundle() {
	b := trustv1alpha1.Bundle{
		TypeMeta:   metav1.TypeMeta{APIVersion: trustv1alpha1.GroupVersion.String(), Kind: "Bundle"},
		ObjectMeta: metav1.ObjectMeta{Name: "corp-bundle"},
		Spec: trustv1alpha1.BundleSpec{
			Sources: []trustv1alpha1.BundleSource{
				{ConfigMap: &trustv1alpha1.SourceObjectKeySelector{Name: "corp-ca", Key: "ca.crt"}},
				{UseDefaultCAs: new(true)},
			},
			Target: trustv1alpha1.BundleTarget{
				ConfigMap:         &trustv1alpha1.TargetTemplate{Key: "bundle.pem"},
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"trust": "enabled"}},
			},
		},
	}
	out, err := yaml.Marshal(b)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(out))
	// Output:
	// apiVersion: trust.cert-manager.io/v1alpha1
	// kind: Bundle
	// metadata:
	//   name: corp-bundle
	// spec:
	//   sources:
	//   - configMap:
	//       key: ca.crt
	//       name: corp-ca
	//   - useDefaultCAs: true
	//   target:
	//     configMap:
	//       key: bundle.pem
	//     namespaceSelector:
	//       matchLabels:
	//         trust: enabled
}
