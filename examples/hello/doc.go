// Package hello is the first bosun example operator: a Greeting custom
// resource whose controller keeps a ConfigMap with the rendered greeting and
// reports it in the Greeting's status.
//
// The controller is a bosun engine reconciler with one step:
//
//	publishGreeting  owns Published; renders the greeting, creates or
//	                 updates the ConfigMap, writes status.message; deletes
//	                 the ConfigMap in Cleanup
//
// Everything else is the engine's: it loads the Greeting, commits the
// finalizer hello.bosun.dev/configmap before the step first runs (so a
// deleted Greeting always gets the chance to remove its ConfigMap; the
// controller does not rely on the garbage collector, which a bare test
// control plane does not run), runs Cleanup and releases the finalizer on
// deletion, derives Ready from Published, stamps observedGeneration, writes
// the status only when it changed, and requeues a 409 Conflict quietly. An
// invalid template (one that skipped the API server's validation) and a
// ConfigMap name taken by a ConfigMap the Greeting does not control make
// Published False with reasons InvalidTemplate and ConfigMapNotOwned, which
// Ready then shows.
//
// The ConfigMap is created with bosun.Pass.CreateChild (the Greeting its
// controller, a SuccessfulCreate event) and only written when its data
// differs, so a converged Greeting costs no writes. When its cache shows no
// ConfigMap for a deleted Greeting, Cleanup asks the API server before it
// lets the Greeting go, since the cache may not have seen a ConfigMap made
// moments ago.
//
// The entry points used by tests and by `bosun demo` are AddToScheme, CRDs,
// SetupWithManager and Samples. The API types live in package v1alpha1 under
// api/, the generated CRD manifest in config/crd.
package hello
