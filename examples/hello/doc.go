// Package hello is the first bosun example operator: a Greeting custom
// resource whose controller keeps a ConfigMap with the rendered greeting and
// reports it in the Greeting's status.
//
// The controller is plain controller-runtime; its reconcile body is a flow
// workflow. For a live Greeting it runs
//
//	Sequence(add finalizer, OrderedJoin(Sequence(render greeting, apply configmap, mark ready), patch status))
//
// and for a Greeting being deleted
//
//	Sequence(delete configmap, remove finalizer)
//
// The finalizer is committed before the ConfigMap is first written, so a
// deleted Greeting always gets the chance to remove its ConfigMap; the
// controller does not rely on the garbage collector, which a bare test
// control plane does not run. When its cache shows no ConfigMap for a
// deleted Greeting, it asks the API server before it lets the Greeting
// go, since the cache may not have seen a ConfigMap made moments ago. The ConfigMap is only written when its data
// differs, and the status only when it changed, so a converged Greeting
// costs no writes. A 409 Conflict is requeued quietly, without an error.
//
// The entry points used by tests and by `bosun demo` are AddToScheme, CRDs,
// GreetingReconciler.SetupWithManager and Samples. The API types live in
// package v1alpha1 under api/, the generated CRD manifest in config/crd.
package hello
