package main

import (
	"slices"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
)

// TestExampleKindsForKubectl installs every example's CRDs on a real API
// server and checks what kubectl users rely on: each kind has short names
// and the printer columns Ready, Reason and Age; no plural or short name of
// an example is also a name of a built-in resource (kubectl would list the
// built-in one); and the "bosun" category, which `kubectl get bosun` lists,
// holds every example kind and nothing else. The trust example is left
// out: its CRD is trust-manager's, names and printer columns included, so
// that trust-manager's manifests apply to it
// (examples/trust/config/crd.TestSameAPIAsTrustManager).
func TestExampleKindsForKubectl(t *testing.T) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, ex := range examples() {
		if ex.Name == "trust" {
			continue
		}
		got, err := ex.CRDs()
		if err != nil {
			t.Fatalf("%s: %v", ex.Name, err)
		}
		crds = append(crds, got...)
	}

	cp := bosuntest.Start(t, controlplane.Options{CRDs: crds})
	lists, err := discoveryLists(t, cp)
	if err != nil {
		t.Fatal(err)
	}
	exampleGroups := map[string]bool{}
	for _, crd := range crds {
		exampleGroups[crd.Spec.Group] = true
	}
	// The names of the resources that are not the examples': built-in ones.
	builtin := map[string]string{}
	for _, l := range lists {
		if exampleGroups[group(l.GroupVersion)] {
			continue
		}
		for _, r := range l.APIResources {
			for _, n := range append([]string{r.Name, r.SingularName}, r.ShortNames...) {
				if n != "" {
					builtin[n] = l.GroupVersion + "/" + r.Name
				}
			}
		}
	}

	for _, crd := range crds {
		names := crd.Spec.Names
		if len(names.ShortNames) == 0 {
			t.Errorf("%s: no short names", crd.Name)
		}
		for _, n := range names.ShortNames {
			if other, ok := builtin[n]; ok {
				t.Errorf("%s: short name %q is also built-in %s", crd.Name, n, other)
			}
		}
		if other, ok := builtin[names.Plural]; ok {
			// Allowed, but then every printed command must qualify it; the
			// demo does (see demo.go), and this records which ones collide.
			t.Logf("%s: plural %q is also built-in %s; commands use %s", crd.Name, names.Plural, other, crd.Name)
		}
		if !slices.Contains(names.Categories, "bosun") {
			t.Errorf("%s: categories %v lack %q", crd.Name, names.Categories, "bosun")
		}
		for _, v := range crd.Spec.Versions {
			var cols []string
			for _, c := range v.AdditionalPrinterColumns {
				cols = append(cols, c.Name)
			}
			for _, want := range []string{"Ready", "Reason", "Age"} {
				if !slices.Contains(cols, want) {
					t.Errorf("%s %s: printer columns %v lack %q", crd.Name, v.Name, cols, want)
				}
			}
		}
	}

	// The category as the API server serves it: each resource once, though
	// discovery lists it in every version it is served at (kubectl lists
	// the preferred one).
	var inCategory, want []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			if slices.Contains(r.Categories, "bosun") && !strings.Contains(r.Name, "/") {
				inCategory = append(inCategory, r.Name+"."+group(l.GroupVersion))
			}
		}
	}
	for _, crd := range crds {
		want = append(want, crd.Name)
	}
	slices.Sort(inCategory)
	inCategory = slices.Compact(inCategory)
	slices.Sort(want)
	if !slices.Equal(inCategory, want) {
		t.Errorf("category bosun served as %v, want %v", inCategory, want)
	}
}

// group is the group of an API group version such as "apps/v1"; "" for
// the core "v1".
func group(groupVersion string) string {
	g, _, ok := strings.Cut(groupVersion, "/")
	if !ok {
		return ""
	}
	return g
}

func discoveryLists(t *testing.T, cp *controlplane.ControlPlane) ([]*metav1.APIResourceList, error) {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		return nil, err
	}
	_, lists, err := dc.ServerGroupsAndResources()
	return lists, err
}
