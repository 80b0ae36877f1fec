// Package watch maps events on objects of one kind to the objects of
// another kind that depend on them, so that a controller reconciles a
// parent when something it uses changes: the related-resource watches of
// Rancher wrangler, as controller-runtime event handlers. Each handler goes
// into a builder's Watches, bosun's (bosun.Builder.Watches) or
// controller-runtime's.
//
// A parent finds its related objects in one of three ways, and the package
// has a handler for each.
//
// # By name, through a field index
//
// The parent names the related object in its spec, such as a Secret name.
// IndexField registers a field index on the parent's kind holding the names
// it refers to, and ByIndex enqueues, for an event on a related object, the
// parents in its namespace whose index holds its name. Referenced does both,
// as the setup of the step that reads the related objects, which
// bosun.Builder.Complete runs:
//
//	secrets := watch.Referenced(&corev1.Secret{}, "spec.secretName",
//		func(a *v1.App) []string { return []string{a.Spec.SecretName} })
//	steps := []bosun.Step[*v1.App]{bosun.WithSetup(readSecret, secrets)}
//
// # By labels
//
// The parent selects related objects by their labels, as a Service selects
// Pods: BySelector enqueues the parents in the related object's namespace
// whose selector matches its labels. Or the related object names its parent
// in its own labels: ByLabels enqueues the parent named there.
//
// # By what a reconcile read
//
// The parent reads objects that its spec does not name in a form an index
// can hold: computed names, objects found through other objects. A Tracker
// remembers what each reconcile read (Track, or Get, which tracks and reads
// in one call) and its Handler enqueues the parents that read the object of
// an event. A reference lives for a lease renewed by each Track; once it has
// run out, the next event wakes the parent one last time and the reference
// is dropped, so a parent that stops reading an object stops being woken by
// it without ever missing a change to an object it still reads.
//
//	tracker := watch.NewTracker(mgr.GetScheme())
//	// in a step:
//	err := tracker.Get(ctx, req.Client, req.Object, key, cm)
//	// when setting up:
//	b.Watches(&corev1.ConfigMap{}, tracker.Handler()).
//		Watches(&v1.App{}, tracker.ForgetOnDelete())
//
// # Reading from the cache
//
// ByIndex and BySelector list the parents from the reader they are given;
// pass the manager's cache, which holds the field indexes and costs no API
// call. Every event on a related object lists the parents of its namespace
// (BySelector) or looks them up in the index (ByIndex): the cost of an
// event grows with the number of parents in a namespace for BySelector,
// and with the number that name the object for ByIndex.
//
// Handlers enqueue on every event, including updates that change only the
// status or metadata of the related object; add predicates to the watch
// (builder.WithPredicates) to ignore the ones a parent does not care about.
//
// Maturity: stable. Its handlers are plain controller-runtime event handlers.
package watch
