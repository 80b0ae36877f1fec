package managed

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/conditions"
)

// Annotations the step reads and writes on the object.
const (
	// AnnotationExternalName holds the name of the external resource. The
	// step records a name it chose only together with
	// AnnotationCreatePending, so a name here without that mark was set by
	// hand, and asks the step to adopt the resource under it (see the
	// package documentation). A name the step chose never changes; one the
	// external system assigns (WithProviderNames) is replaced when the
	// resource it names is gone and the step creates another.
	AnnotationExternalName = "bosun.dev/external-name"
	// AnnotationCreatePending holds the time (RFC 3339) at which the step
	// was about to create the external resource. It is committed before
	// Create is called.
	AnnotationCreatePending = "bosun.dev/external-create-pending"
	// AnnotationCreateSucceeded holds the time of the last Create that
	// succeeded.
	AnnotationCreateSucceeded = "bosun.dev/external-create-succeeded"
	// AnnotationCreateFailed holds the time of the last Create that failed.
	AnnotationCreateFailed = "bosun.dev/external-create-failed"
	// AnnotationDeletePending holds the time (RFC 3339) at which the step
	// was about to ask for the deletion of the external resource. It is
	// committed before each Delete, guarded by the resourceVersion the pass
	// read: the fence that keeps a pass on a stale copy of the object from
	// deleting.
	AnnotationDeletePending = "bosun.dev/external-delete-pending"
	// AnnotationDeletingLast names, comma-separated, the controllers
	// (bosun.Pass.Controller) whose managed step deletes last
	// (DeletionOrderLast) and is waiting for, or deleting, the object's
	// external resource. Each such step counts the others' finalizers as
	// its peers' rather than as finalizers to wait for, so that two of
	// them on one object do not wait for each other. A step records its
	// controller while other finalizers hold the object and removes it
	// with the engine's release of its finalizer; it assumes one
	// finalizer per controller.
	AnnotationDeletingLast = "bosun.dev/deleting-last"
	// AnnotationFirstAvailable holds the time (RFC 3339) at which the step
	// first found the external resource available. It tells a resource the
	// step created and that is still coming up (Available False, reason
	// ReasonCreating) from one that was ready and is not any more (reason
	// ReasonUnavailable), and it is when the time to Ready is measured. A
	// create clears it.
	AnnotationFirstAvailable = "bosun.dev/external-first-available"
	// AnnotationOperation holds the long operation that Create or Update
	// started and the step polls (see OperationPoller), as
	// "<kind>:<token>", kind create or update. The step commits it before
	// the pass that started the operation ends, and removes it once the
	// operation is done.
	AnnotationOperation = "bosun.dev/external-operation"
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
// object's (it reports ReasonExternalConflict instead), but the second
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

// Policy is one thing the step may do to the external resource.
type Policy string

// The management policies.
const (
	// PolicyObserve lets the step observe the resource and report it. Every
	// set of policies includes it.
	PolicyObserve Policy = "observe"
	// PolicyCreate lets the step create the resource when it is missing.
	PolicyCreate Policy = "create"
	// PolicyUpdate lets the step update the resource when it is not up to
	// date.
	PolicyUpdate Policy = "update"
	// PolicyDelete lets the step delete the resource when the object is
	// deleted (and the deletion policy is DeletionDelete).
	PolicyDelete Policy = "delete"
	// PolicyLateInitialize lets the step commit spec fields that Observe
	// filled in.
	PolicyLateInitialize Policy = "late-initialize"
	// PolicyAll is every policy.
	PolicyAll Policy = "*"
)

// Policies is a set of management policies.
type Policies struct {
	// Create, Update, Delete and LateInitialize are allowed when true.
	// Observing is always allowed.
	Create, Update, Delete, LateInitialize bool
}

// AllPolicies allows everything; it is the default.
func AllPolicies() Policies {
	return Policies{Create: true, Update: true, Delete: true, LateInitialize: true}
}

// ObserveOnly allows observing only: the external resource is never created,
// changed or deleted, and the spec is never late-initialised.
func ObserveOnly() Policies { return Policies{} }

// ErrInvalidPolicy is wrapped by the errors of ParsePolicies and
// ParseDeletionPolicy.
var ErrInvalidPolicy = errors.New("invalid policy")

// ParsePolicies parses a comma-separated list of management policies, as in
// AnnotationManagementPolicies. "*" means all of them; "observe" alone
// means observe-only. Like every policy value of bosun, names are read
// without regard to case, and the Crossplane spelling "LateInitialize" is
// taken for "late-initialize"; blanks around them are ignored.
func ParsePolicies(s string) (Policies, error) {
	var p Policies
	if strings.TrimSpace(s) == "" {
		return p, fmt.Errorf("%w: empty management policies", ErrInvalidPolicy)
	}
	for _, part := range strings.Split(s, ",") {
		switch Policy(normalise(part)) {
		case PolicyAll:
			p = AllPolicies()
		case PolicyObserve:
		case PolicyCreate:
			p.Create = true
		case PolicyUpdate:
			p.Update = true
		case PolicyDelete:
			p.Delete = true
		case PolicyLateInitialize:
			p.LateInitialize = true
		default:
			return Policies{}, fmt.Errorf("%w: unknown management policy %q: want %s, %s, %s, %s, %s or %s",
				ErrInvalidPolicy, normalise(part), PolicyObserve, PolicyCreate, PolicyUpdate, PolicyDelete, PolicyLateInitialize, PolicyAll)
		}
	}
	return p, nil
}

// String returns the policies as ParsePolicies reads them.
func (p Policies) String() string {
	if p == AllPolicies() {
		return string(PolicyAll)
	}
	parts := []string{string(PolicyObserve)}
	for _, x := range []struct {
		on bool
		p  Policy
	}{{p.Create, PolicyCreate}, {p.Update, PolicyUpdate}, {p.Delete, PolicyDelete}, {p.LateInitialize, PolicyLateInitialize}} {
		if x.on {
			parts = append(parts, string(x.p))
		}
	}
	return strings.Join(parts, ",")
}

// DeletionPolicy says what happens to the external resource when the object
// is deleted.
type DeletionPolicy string

// The deletion policies.
const (
	// DeletionDelete deletes the external resource, and keeps the object
	// until it is gone. It is the default.
	DeletionDelete DeletionPolicy = "delete"
	// DeletionOrphan leaves the external resource in place.
	DeletionOrphan DeletionPolicy = "orphan"
)

// ParseDeletionPolicy parses "delete" or "orphan", in any case.
func ParseDeletionPolicy(s string) (DeletionPolicy, error) {
	switch p := DeletionPolicy(normalise(s)); p {
	case DeletionDelete, DeletionOrphan:
		return p, nil
	default:
		return "", fmt.Errorf("%w: unknown deletion policy %q: want %s or %s", ErrInvalidPolicy, s, DeletionDelete, DeletionOrphan)
	}
}

// DeletionOrder says when, in the deletion of the object, the step deletes
// the external resource.
type DeletionOrder string

// The deletion orders.
const (
	// DeletionOrderImmediate deletes the external resource as soon as the
	// object is being deleted. It is the default.
	DeletionOrderImmediate DeletionOrder = "immediate"
	// DeletionOrderLast deletes the external resource only once every
	// other finalizer of the object is gone: whatever else holds the
	// object (a controller that still uses the resource, the garbage
	// collector's foregroundDeletion) finishes first, as Crossplane does
	// for managed resources that are in use.
	DeletionOrderLast DeletionOrder = "last"
)

// ParseDeletionOrder parses "immediate" or "last", in any case.
func ParseDeletionOrder(s string) (DeletionOrder, error) {
	switch o := DeletionOrder(normalise(s)); o {
	case DeletionOrderImmediate, DeletionOrderLast:
		return o, nil
	default:
		return "", fmt.Errorf("%w: unknown deletion order %q: want %s or %s", ErrInvalidPolicy, s, DeletionOrderImmediate, DeletionOrderLast)
	}
}

// normalise returns a policy value as bosun spells it: lower case,
// without surrounding blanks, with "lateinitialize" (Crossplane's
// LateInitialize) written "late-initialize".
func normalise(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "lateinitialize" {
		return string(PolicyLateInitialize)
	}
	return s
}

// invalidPolicy reports a bad policy annotation as a terminal error on the
// Synced condition.
func invalidPolicy(syncedType string, err error) error {
	return &conditions.Error{Type: syncedType, Reason: ReasonInvalidPolicy, Severity: conditions.SeverityError, Err: err}
}

// guard is what the leak guard decides before a Create.
type guard int

const (
	// guardCreate: create the resource.
	guardCreate guard = iota
	// guardWait: a create happened recently; "not found" may be the
	// external system lagging. Look again shortly.
	guardWait
	// guardIncomplete: a create was started and its outcome never recorded,
	// and the name of what it may have made is unknown. Stop.
	guardIncomplete
)

func (g guard) String() string {
	switch g {
	case guardCreate:
		return "create"
	case guardWait:
		return "wait"
	default:
		return "incomplete"
	}
}

// decideCreate applies the leak guard to an object whose external resource
// Observe did not find. ann are the object's annotations; deterministic
// tells whether the external name is known before Create.
//
//   - A pending create newer than both outcomes means a pass stopped between
//     committing pending and recording the outcome, so the resource may
//     exist. Without a deterministic name there is no way to find it: stop.
//     With one, Observe just said it is not there; trust that once the
//     grace period after the pending time is over, and wait until then.
//   - A successful create within the grace period: wait, the external
//     system may not show it yet.
//   - Anything else: create.
//
// An annotation whose time does not parse counts as the most recent moment
// possible for pending (so the guard errs on the side of stopping) and as
// absent for the outcomes.
func decideCreate(ann map[string]string, now time.Time, grace time.Duration, deterministic bool) guard {
	pending, hasPending := annotationTime(ann, AnnotationCreatePending, now)
	succeeded, hasSucceeded := annotationTime(ann, AnnotationCreateSucceeded, time.Time{})
	failed, hasFailed := annotationTime(ann, AnnotationCreateFailed, time.Time{})
	if hasPending && (!hasSucceeded || pending.After(succeeded)) && (!hasFailed || pending.After(failed)) {
		if !deterministic {
			return guardIncomplete
		}
		if now.Sub(pending) < grace {
			return guardWait
		}
		return guardCreate
	}
	if hasSucceeded && (!hasFailed || succeeded.After(failed)) && now.Sub(succeeded) < grace {
		return guardWait
	}
	return guardCreate
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
	v, ok := ann[AnnotationOperation]
	if !ok {
		return Operation{}, false
	}
	kind, token, _ := strings.Cut(v, ":")
	return Operation{Kind: kind, Token: token}, true
}

// operationValue returns the value of AnnotationOperation for op.
func operationValue(op Operation) string { return op.Kind + ":" + op.Token }

// observing reports whether the policies only observe: the step changes
// nothing outside, and an unmarked resource under the external name is
// reported as the object's.
func (p Policies) observing() bool { return !p.Create && !p.Update && !p.Delete }
