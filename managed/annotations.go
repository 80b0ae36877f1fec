package managed

import (
	"maps"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Annotations the step reads and writes on the object.
const (
	// AnnotationExternalName holds the name of the external resource. The
	// step records a name it chose only together with
	// AnnotationCreatePending, so a name here without that mark was set by
	// hand, and asks the step to adopt the resource under it, which it
	// does only where adoption is granted (AnnotationAdoptExternal, see
	// the package documentation). A name the step chose never changes; one
	// the external system assigns (WithProviderNames) is replaced when the
	// resource it names is gone and the step creates another.
	AnnotationExternalName = "bosun.dev/external-name"
	// AnnotationCreatePending holds the time (RFC 3339) at which the step
	// was about to create the external resource. It is committed before
	// Create is called.
	AnnotationCreatePending = "bosun.dev/external-create-pending"
	// annotationCreateSucceeded holds the time of the last Create that
	// succeeded.
	annotationCreateSucceeded = "bosun.dev/external-create-succeeded"
	// annotationCreateFailed holds the time of the last Create that failed.
	annotationCreateFailed = "bosun.dev/external-create-failed"
	// annotationDeletePending holds the time (RFC 3339) at which the step
	// was about to ask for the deletion of the external resource. It is
	// committed before each Delete, guarded by the resourceVersion the pass
	// read: the fence that keeps a pass on a stale copy of the object from
	// deleting.
	annotationDeletePending = "bosun.dev/external-delete-pending"
	// annotationDeletingLast names, comma-separated, the controllers
	// (bosun.Pass.Controller) whose managed step deletes last
	// (DeletionOrderLast) and is waiting for, or deleting, the object's
	// external resource. Each such step counts the others' finalizers as
	// its peers' rather than as finalizers to wait for, so that two of
	// them on one object do not wait for each other. A step records its
	// controller while other finalizers hold the object and removes it
	// with the engine's release of its finalizer; it assumes one
	// finalizer per controller.
	annotationDeletingLast = "bosun.dev/deleting-last"
	// annotationFirstAvailable holds the time (RFC 3339) at which the step
	// first found the external resource available. It tells a resource the
	// step created and that is still coming up (Available False, reason
	// ReasonCreating) from one that was ready and is not any more (reason
	// ReasonUnavailable), and it is when the time to Ready is measured. A
	// create clears it.
	annotationFirstAvailable = "bosun.dev/external-first-available"
	// annotationOperation holds the long operation that Create or Update
	// started and the step polls (see OperationPoller), as
	// "<kind>:<token>", kind create or update. The step commits it before
	// the pass that started the operation ends, and removes it once the
	// operation is done.
	annotationOperation = "bosun.dev/external-operation"
	// AnnotationPollInterval overrides the poll interval of one object, as a
	// Go duration ("30s", "5m").
	AnnotationPollInterval = "bosun.dev/poll-interval"
	// AnnotationManagementPolicies overrides the management policies of one
	// object: a comma-separated list of policies ("Observe",
	// "Observe,Create,Update") or "*" for all of them.
	AnnotationManagementPolicies = "bosun.dev/management-policies"
	// AnnotationDeletionPolicy overrides the deletion policy of one object:
	// "Delete" or "Orphan".
	AnnotationDeletionPolicy = "bosun.dev/deletion-policy"
	// AnnotationDeletionOrder overrides the deletion order of one object:
	// "immediate" or "last" (see DeletionOrder).
	AnnotationDeletionOrder = "bosun.dev/deletion-order"
)

// AnnotationAdoptExternal grants, set to "true" on a Namespace, the
// objects in it adoption: their managed steps may take over an existing
// external resource that carries no owner mark and that they did not
// create, when the object's AnnotationExternalName names it by hand (or
// its management policies only observe). It is for administrators: a user
// who may edit objects in a namespace, but not the Namespace itself,
// cannot grant it. Without it (or WithAdoptionGranted), such a resource
// is never managed, observed or deleted; the object reports Synced and
// Ready False with ReasonAdoptionNotGranted. Other values grant nothing.
const AnnotationAdoptExternal = "bosun.dev/adopt-external"

// ExternalName returns the name of obj's external resource, from
// AnnotationExternalName; empty when it is not set yet.
func ExternalName(obj client.Object) string {
	return obj.GetAnnotations()[AnnotationExternalName]
}

// SetExternalName records name as the name of obj's external resource. It
// changes obj only; the step commits it.
func SetExternalName(obj client.Object, name string) {
	setAnnotations(obj, map[string]string{AnnotationExternalName: name})
}

// NameFromMetadata names the external resource with the object's bare
// name.
//
// Warning: objects of the same name in different namespaces then share one
// external name. The step does not adopt a resource that is not the
// object's (it reports reason ExternalResourceConflict instead), but the second
// object never gets a resource of its own. Use it only for cluster-scoped
// objects, or when a single namespace holds the objects; the default is
// NameFromNamespacedName.
func NameFromMetadata(obj client.Object) string { return obj.GetName() }

// NameFromNamespacedName is the default external name: "<namespace>.<name>"
// for a namespaced object, such as "shop-a.orders", and the bare name for a
// cluster-scoped one. A namespace is a DNS label, without dots, so no two
// namespaced objects get the same name; an object made again under the same
// namespace and name gets the same external name (and the owner mark tells
// the two apart, see Observation.Owner). Wrap it with WithExternalName when
// the external system does not allow dots.
func NameFromNamespacedName(obj client.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "." + obj.GetName()
	}
	return obj.GetName()
}

// NameFromUID returns a function that names the external resource prefix
// followed by the object's UID, such as "bucket-0c8f2f9e-...". The name is
// unique for each object, and stable over its life.
func NameFromUID(prefix string) func(client.Object) string {
	return func(obj client.Object) string { return prefix + string(obj.GetUID()) }
}

// naming is how a step names external resources: choose names the
// resource of an object that records none, unless the external system
// assigns the names (provider, WithProviderNames).
type naming[T client.Object] struct {
	choose   func(client.Object) string
	provider bool
	keys     recordKeys
}

// named returns a copy of obj that carries the external name the step uses
// for it: the recorded one or, when the step chooses names, a new one. A
// chosen name is not put on obj here: it is committed with the pending mark
// of a create, or with the object once the resource under it proved to be
// the object's. So a recorded name without a pending mark is one the user
// set.
func (n naming[T]) named(obj T) T {
	t := obj.DeepCopyObject().(T)
	if n.keys.name(t) == "" && !n.provider {
		n.keys.setName(t, n.choose(t))
	}
	return t
}

// chosen reports whether the name obj records, or will get, is the one the
// step chooses for it; never with names the external system assigns.
func (n naming[T]) chosen(obj T) bool {
	name := n.keys.name(obj)
	return !n.provider && (name == "" || name == n.choose(obj))
}

// deletingLast returns the controllers obj's annotationDeletingLast
// names.
func deletingLast(obj client.Object) []string {
	v := obj.GetAnnotations()[annotationDeletingLast]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// defaultAnnotationPrefix is the prefix of the step's own annotations
// unless WithAnnotationPrefix gives it another.
const defaultAnnotationPrefix = "bosun.dev"

// ownAnnotations are the annotations a step keeps for itself, one set per
// step: those WithAnnotationPrefix moves under a prefix of the step's own.
var ownAnnotations = []string{
	AnnotationExternalName, AnnotationCreatePending, annotationCreateSucceeded, annotationCreateFailed,
	annotationDeletePending, annotationFirstAvailable, annotationOperation,
}

// recordKeys are where a step keeps its own annotations on the object
// (WithAnnotationPrefix). The stages read and write them by their default
// keys (AnnotationExternalName, AnnotationCreatePending, ...) through it:
// view and mark translate, and are the identity for the default prefix.
type recordKeys struct {
	// prefix is empty for the default one.
	prefix string
}

// key returns where the step keeps the annotation of default key k.
func (r recordKeys) key(k string) string {
	if r.prefix == "" {
		return k
	}
	_, suffix, _ := strings.Cut(k, "/")
	return r.prefix + "/" + suffix
}

// view returns obj's annotations as the step reads them: its own under
// their default keys, and none of another step's in their place. It must
// not be changed.
func (r recordKeys) view(obj client.Object) map[string]string {
	ann := obj.GetAnnotations()
	if r.prefix == "" {
		return ann
	}
	v := maps.Clone(ann)
	if v == nil {
		v = map[string]string{}
	}
	for _, k := range ownAnnotations {
		delete(v, k)
		if val, ok := ann[r.key(k)]; ok {
			delete(v, r.key(k))
			v[k] = val
		}
	}
	return v
}

// mark sets on obj the annotations set gives by their default keys (an
// empty value removes), each where the step keeps it.
func (r recordKeys) mark(obj client.Object, set map[string]string) {
	if r.prefix != "" {
		moved := make(map[string]string, len(set))
		for k, v := range set {
			if slices.Contains(ownAnnotations, k) {
				k = r.key(k)
			}
			moved[k] = v
		}
		set = moved
	}
	setAnnotations(obj, set)
}

// name returns the external name the step records on obj.
func (r recordKeys) name(obj client.Object) string {
	return obj.GetAnnotations()[r.key(AnnotationExternalName)]
}

// setName records name as the external name of the step's resource of obj.
func (r recordKeys) setName(obj client.Object, name string) {
	r.mark(obj, map[string]string{AnnotationExternalName: name})
}

// lendName puts the step's external name on obj under
// AnnotationExternalName, where an ExternalClient finds it with
// ExternalName and sets it with SetExternalName, and returns the function
// that takes it back: the name then under AnnotationExternalName becomes
// the step's, and AnnotationExternalName is as it was before. For the
// default prefix both do nothing.
func (r recordKeys) lendName(obj client.Object) (takeBack func()) {
	if r.prefix == "" {
		return func() {}
	}
	// An empty name is no name: setAnnotations removes it.
	other := ExternalName(obj)
	setAnnotations(obj, map[string]string{AnnotationExternalName: r.name(obj)})
	return func() {
		mine := ExternalName(obj)
		setAnnotations(obj, map[string]string{AnnotationExternalName: other})
		r.setName(obj, mine)
	}
}

// setAnnotations sets the given annotations on obj; an empty value removes
// the annotation.
func setAnnotations(obj client.Object, set map[string]string) {
	ann := maps.Clone(obj.GetAnnotations())
	if ann == nil {
		ann = make(map[string]string, len(set))
	}
	for k, v := range set {
		if v == "" {
			delete(ann, k)
		} else {
			ann[k] = v
		}
	}
	if len(ann) == 0 {
		ann = nil
	}
	obj.SetAnnotations(ann)
}

// annotationTime returns the time in annotation key of ann, whether the
// annotation is there, and bad in place of a value that does not parse
// (reported as absent when bad is zero).
func annotationTime(ann map[string]string, key string, bad time.Time) (time.Time, bool) {
	v, ok := ann[key]
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return bad, !bad.IsZero()
	}
	return t, true
}

// formatTime formats t for the leak-guard annotations: RFC 3339 in UTC with
// nanoseconds, so two events of one second stay ordered.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// pollInterval returns the poll interval of an object: its
// AnnotationPollInterval when that parses and is positive, else def; then
// raised to min. A value that does not parse falls back to def, and bad
// reports it.
func pollInterval(ann map[string]string, def, minimum time.Duration) (d time.Duration, bad bool) {
	d = def
	if v, ok := ann[AnnotationPollInterval]; ok {
		parsed, err := time.ParseDuration(v)
		if err != nil || parsed <= 0 {
			bad = true
		} else {
			d = parsed
		}
	}
	if d < minimum {
		d = minimum
	}
	return d, bad
}

// jitter spreads d by up to ±fraction: r, in [0, 1), picks the point.
// Unlike wait.Jitter, which only lengthens, it keeps the mean at d, so the
// poll interval a user sets is the one they get on average; r comes from
// the step's random source, so tests can fix it.
func jitter(d time.Duration, fraction, r float64) time.Duration {
	return time.Duration(float64(d) * (1 - fraction + 2*fraction*r))
}

// operationOf returns the long operation recorded in ann, if any.
func operationOf(ann map[string]string) (Operation, bool) {
	v, ok := ann[annotationOperation]
	if !ok {
		return Operation{}, false
	}
	kind, token, _ := strings.Cut(v, ":")
	return Operation{Kind: kind, Token: token}, true
}

// operationValue returns the value of annotationOperation for op.
func operationValue(op Operation) string { return op.Kind + ":" + op.Token }
