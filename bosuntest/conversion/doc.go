// Package conversion checks, in a unit test, that the versions of a kind
// convert to one another without losing anything.
//
// controller-runtime converts through a hub: one version of the kind
// implements conversion.Hub, every other version (a spoke) implements
// conversion.Convertible and converts to and from the hub. RoundTrip takes
// the hub and the spokes, fills random objects of each with
// sigs.k8s.io/randfill, and for every spoke checks both directions:
//
//   - spoke -> hub -> spoke gives the spoke object it started from;
//   - hub -> spoke -> hub gives the hub object it started from.
//
// A test names the hub first, then every spoke:
//
//	func TestConversion(t *testing.T) {
//		conversion.RoundTrip(t, &v2.Widget{}, &v1.Widget{}, &v1beta1.Widget{})
//	}
//
// # Writing conversions that round-trip
//
// A field that both versions have, perhaps under another name or shape, is
// copied across. A field that only one version has must be kept by the
// other version, and bosun's rule is to keep it in an annotation of the
// object converted to:
//
//   - ConvertTo writes the spoke-only fields to an annotation of the hub
//     (JSON for anything but a plain string), under a key that names the
//     version and the field, say "example.com/v1-color"; ConvertFrom reads
//     that annotation back into the spoke and deletes it.
//   - ConvertFrom writes the hub-only fields to an annotation of the spoke;
//     ConvertTo reads it back into the hub and deletes it.
//   - A field at its zero value needs no annotation: write one only when
//     there is something to keep, so that an object converted back and forth
//     carries no annotations it did not have.
//   - Copy ObjectMeta with DeepCopyInto before adding or deleting
//     annotations, so the source object's map is left alone.
//
// # What is compared
//
// The object a round trip ends with is compared with the one it started
// from by go-cmp, and a difference fails the test with the types, the
// direction, the seed and a diff (-want +got). TypeMeta is ignored, since
// conversion sets it. A nil map or slice equals an empty one, as in the
// semantic equality of Kubernetes and in JSON with omitempty: a conversion
// that adds an annotation and deletes it again may leave an empty map where
// there was none. Options.CmpOptions adds comparison options, such as
// cmpopts.IgnoreFields for a field a conversion may lose on purpose.
//
// # What is filled
//
// Every exported field gets a random value, nil a fifth of the time for
// pointers, maps and slices. ObjectMeta is filled as the API server could
// have left it: DNS names, a UID, a numeric resourceVersion, a positive
// generation, times to the second, a few labels, annotations (random
// values), finalizers and owner references, no managed fields. metav1.Time
// has whole seconds, since JSON keeps no more. Fields whose values must obey
// rules, or that randfill cannot fill (interfaces, unexported state such as
// resource.Quantity's), get fill functions in Options.Funcs.
//
// # Reproducing a failure
//
// Each iteration has a seed, and the same seed makes the same objects. By
// default the first seed comes from the clock, so each run tries other
// objects; a failure names its seed:
//
//	conversion v1.Widget -> v2.Widget (hub) -> v1.Widget, seed 1718: the round trip changed the object (-want +got):
//	...
//	reproduce with conversion.Options{Seed: 1718, Iterations: 1}
//
// Running Options{Seed: 1718, Iterations: 1}.RoundTrip with the same hub
// and spoke makes that object again and fails the same way. A fixed Seed
// also makes a test deterministic.
//
// The helpers take a bosuntest.TB, which *testing.T and Ginkgo's GinkgoT()
// satisfy.
//
// Maturity: experimental.
package conversion
