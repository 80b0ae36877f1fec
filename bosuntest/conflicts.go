package bosuntest

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ConflictInjector answers some of the writes made through the clients it
// wraps with a 409 Conflict, as the API server does when an object changed
// since it was read, without sending them. It tests that a controller treats
// conflicts as a reason to try again, not as failures.
//
// Which writes conflict is decided in order: the n-th write that matches
// Verbs and Kinds conflicts or not depending only on Seed, Fraction and n.
// A test whose writes happen in a fixed order therefore sees the same
// conflicts on every run; with concurrent writers the order, and so which
// object gets which answer, may vary.
//
// Set the fields before the first write and do not change them afterwards.
// The methods are safe for concurrent use.
type ConflictInjector struct {
	// Fraction is the share of matching writes answered with a conflict:
	// 0 answers none, 1 (or more) every one.
	Fraction float64
	// Seed chooses the sequence of decisions.
	Seed uint64
	// Verbs restricts the conflicts to these operations: a Verb constant,
	// followed by a space and the subresource for subresource writes, such
	// as "update", "patch" or "patch status". "patch" does not match
	// status patches. Empty means every write. The API server answers a
	// create of an existing object with AlreadyExists, never Conflict, so
	// tests usually leave "create" out.
	Verbs []string
	// Kinds restricts the conflicts to objects of these kinds. Empty means
	// every kind.
	Kinds []string
	// Limit, if positive, is the most conflicts injected; after that every
	// write goes through.
	Limit int

	mu       sync.Mutex
	rng      *rand.Rand
	matched  int
	injected []Write
}

// injectedMessage ends the message of every injected conflict.
const injectedMessage = "conflict injected by bosuntest"

// Wrap returns a client that makes its calls through c except the writes the
// injector answers with a conflict.
func (f *ConflictInjector) Wrap(c client.Client) client.WithWatch {
	return wrapWrites(c, func(_ context.Context, w Write, gvk schema.GroupVersionKind) error {
		if !f.decide(w) {
			return nil
		}
		return newConflict(c, w, gvk)
	})
}

// decide reports whether w is answered with a conflict, and records it.
func (f *ConflictInjector) decide(w Write) bool {
	if len(f.Verbs) > 0 && !slices.Contains(f.Verbs, w.verbOp()) {
		return false
	}
	if len(f.Kinds) > 0 && !slices.Contains(f.Kinds, w.Kind) {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rng == nil {
		f.rng = rand.New(rand.NewPCG(f.Seed, 0))
	}
	f.matched++
	// Draw for every matching write, even past the limit, so that the
	// decisions depend on the position of a write only.
	hit := f.rng.Float64() < f.Fraction
	if !hit || f.Limit > 0 && len(f.injected) >= f.Limit {
		return false
	}
	f.injected = append(f.injected, w)
	return true
}

// newConflict returns the error the API server would give for a conflicting
// write w, of an object of kind gvk, made through c.
func newConflict(c client.Client, w Write, gvk schema.GroupVersionKind) error {
	return apierrors.NewConflict(groupResource(c, w.Kind, gvk), w.Name, errors.New(injectedMessage))
}

// groupResource returns the group and resource of gvk as c's REST mapper
// knows them, or the lower-case kind when it does not know them.
func groupResource(c client.Client, kind string, gvk schema.GroupVersionKind) schema.GroupResource {
	if mapper := c.RESTMapper(); mapper != nil && !gvk.Empty() {
		if m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			return m.Resource.GroupResource()
		}
	}
	return schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(kind)}
}

// Injected returns the number of conflicts injected since the injector was
// made or last Reset.
func (f *ConflictInjector) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.injected)
}

// InjectedWrites returns the writes answered with a conflict, in order. The
// slice is the caller's.
func (f *ConflictInjector) InjectedWrites() []Write {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Write(nil), f.injected...)
}

// Matched returns the number of writes that matched Verbs and Kinds, whether
// or not they were answered with a conflict.
func (f *ConflictInjector) Matched() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.matched
}

// Reset forgets the injected conflicts and starts the sequence of decisions
// from Seed again.
func (f *ConflictInjector) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rng = nil
	f.matched = 0
	f.injected = nil
}

// IsInjectedConflict reports whether err is, or wraps, a conflict injected
// by a ConflictInjector.
func IsInjectedConflict(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsConflict(err) || !errors.As(err, &status) {
		return false
	}
	return strings.HasSuffix(status.Status().Message, injectedMessage)
}
