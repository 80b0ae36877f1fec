package managed

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ConnectionDetails are the values another program needs to use an external
// resource: endpoints, user names, passwords. The step publishes them to the
// connection Secret and never writes them to logs, events or conditions.
type ConnectionDetails map[string][]byte

// Observation is what ExternalClient.Observe found out about the external resource.
type Observation struct {
	// Exists reports that the external resource exists.
	Exists bool
	// UpToDate reports that the external resource matches the object's spec.
	// It is meaningful only when Exists is true.
	UpToDate bool
	// Available reports that the external resource is ready for use. It is
	// false while the resource is still coming up, and makes the step's
	// availability condition False with reason Creating or Unavailable.
	Available bool
	// LateInitialized reports that Observe filled spec fields of the object
	// that were unset with the values the external system chose. The step
	// lets the engine commit them when the management policies allow
	// LateInitialize, and drops them otherwise.
	LateInitialized bool
	// ConnectionDetails are published to the connection Secret. They are
	// never logged.
	ConnectionDetails ConnectionDetails
	// Diff describes, for humans, how the external resource differs from the
	// spec when UpToDate is false. It appears in events and logs, so it must
	// not hold secrets.
	Diff string
	// Owner is the identity (see Identity) of the object the external
	// resource belongs to, as the ExternalClient recorded it on the resource when it
	// created or adopted it; empty when the resource carries no such mark or
	// the external system cannot keep one. The step never updates, deletes,
	// late-initialises from or publishes the details of a resource whose
	// Owner names another object; it reports reason ExternalResourceConflict. An
	// unmarked resource is the object's only when the step created it, the
	// user asked for adoption or the policies only observe.
	Owner string
}

// Identity returns the identity an ExternalClient records on the external resources
// it creates for obj, and that Observe reports in Observation.Owner: the
// object's UID, unique to this object across namespaces and across
// re-creations under the same name.
func Identity(obj client.Object) string { return string(obj.GetUID()) }

// CredentialRepairer is implemented by an ExternalClient whose Create returns
// credentials that Observe cannot read back, such as a generated password.
// When the resource exists and the connection Secret lacks any of the keys
// CredentialKeys names (the Secret was deleted, or the process stopped
// between Create and publishing), the step calls RepairCredentials, which
// sets new credentials on the external resource and returns them, and
// publishes them.
type CredentialRepairer[T client.Object] interface {
	// CredentialKeys names the connection-detail keys only Create and
	// RepairCredentials return.
	CredentialKeys() []string
	// RepairCredentials replaces the credentials of the existing external
	// resource and returns the new ones.
	RepairCredentials(ctx context.Context, obj T) (ConnectionDetails, error)
}

// ErrOutcomeUnknown is matched (with errors.Is) by the errors of calls
// after which nobody can tell whether the call took effect: the request may
// have reached the external system and its answer been lost. An ExternalClient marks
// such an error with OutcomeUnknown when the step could not tell by itself.
//
// A Create that fails this way is not recorded as failed: the leak guard
// treats it like a stop between Create and recording its outcome (see the
// package documentation). The step also counts as unknown, without a mark,
// errors matching context.DeadlineExceeded, context.Canceled,
// io.ErrUnexpectedEOF or syscall.ECONNRESET, and a net.Error whose Timeout
// is true.
var ErrOutcomeUnknown = errors.New("outcome of the call unknown")

// OutcomeUnknown marks err as the error of a call whose effect is unknown:
// the result matches ErrOutcomeUnknown and, through Unwrap, err. It returns
// nil for nil.
func OutcomeUnknown(err error) error {
	if err == nil {
		return nil
	}
	return &unknownOutcome{err: err}
}

// unknownOutcome is an error marked with OutcomeUnknown.
type unknownOutcome struct{ err error }

func (e *unknownOutcome) Error() string { return e.err.Error() }

// Unwrap returns the marked error.
func (e *unknownOutcome) Unwrap() error { return e.err }

// Is matches ErrOutcomeUnknown.
func (e *unknownOutcome) Is(target error) bool { return target == ErrOutcomeUnknown }

// Creation is what ExternalClient.Create reports.
type Creation struct {
	// ConnectionDetails are published to the connection Secret, added to
	// what is there; use them for values that only creation reveals, such
	// as a generated password.
	ConnectionDetails ConnectionDetails
	// Operation, when not empty, says that the external system accepted
	// the create and goes on with it after Create returned: it is the
	// token by which OperationPoller.PollOperation asks how the create is
	// going. The step records it on the object before the pass ends and
	// polls it on the next passes, in this process or the next, instead of
	// creating again. The client must implement OperationPoller.
	Operation string
}

// UpdateResult is what ExternalClient.Update reports.
type UpdateResult struct {
	// ConnectionDetails are published to the connection Secret, added to
	// what is there.
	ConnectionDetails ConnectionDetails
	// Operation is, like Creation.Operation, the token of an update that
	// the external system goes on with after Update returned.
	Operation string
}

// Operation is a long operation that Create or Update started and the
// step polls.
type Operation struct {
	// Kind is "create" or "update".
	Kind string
	// Token is what Creation.Operation or UpdateResult.Operation held.
	Token string
}

// OperationStatus is what OperationPoller.PollOperation reports.
type OperationStatus struct {
	// Done reports that the operation has ended.
	Done bool
	// Err, for an operation that has ended, is why it failed; nil when it
	// succeeded. It appears in conditions, events and the change log, so
	// it must not hold secrets. A terminal error (InvalidSpec) waits for a
	// change of the object.
	Err error
	// ConnectionDetails, for an operation that has ended, are published to
	// the connection Secret, added to what is there.
	ConnectionDetails ConnectionDetails
}

// OperationPoller is implemented by an ExternalClient whose Create or
// Update may start an operation that outlives the call (a cloud database
// that takes minutes to make) and return its token. On every pass while
// the token is recorded on the object (annotation
// bosun.dev/external-operation), the step
// calls PollOperation instead of Observe, Create or Update; once the
// operation is done it forgets the token and observes as usual.
//
// PollOperation must not change the external resource. It may be called
// again for an operation it already reported done (when the step stopped
// before it could forget the token), and must then report the same.
type OperationPoller[T client.Object] interface {
	// PollOperation reports how op, started for obj, is going. An error
	// means the poll itself failed; it is retried with backoff and the
	// operation is polled again.
	PollOperation(ctx context.Context, obj T, op Operation) (OperationStatus, error)
}

// Connector turns an object into an ExternalClient for the external system it
// describes: it reads credentials, picks an endpoint, opens a connection.
// The step calls Connect once per reconcile pass.
type Connector[T client.Object] interface {
	// Connect returns an ExternalClient for obj. It must not change the external
	// system. If the returned ExternalClient is also a Disconnecter, the step calls
	// Disconnect at the end of the pass.
	Connect(ctx context.Context, obj T) (ExternalClient[T], error)
}

// ExternalClient acts on one external resource, the one the object describes and
// ExternalName names. The step calls at most one of Create, Update or Delete
// per pass, always after Observe.
//
// Obligations of every implementation:
//
//   - Every method is idempotent: called twice with the same object, the
//     second call changes nothing more than the first.
//   - Observe never changes the external resource. It may change the
//     object's spec only to fill fields that are unset (late
//     initialisation), and then reports LateInitialized. It may write
//     what it read of the resource into the object's status (by
//     convention a field status.atProvider), and clear it when the
//     resource does not exist; it must write the same status for the
//     same resource, so that an unchanged resource costs no write.
//   - Delete of a resource that does not exist is success.
//   - A resource that cannot be created or changed because of the spec is
//     reported with an error wrapping conditions.Terminal (InvalidSpec helps
//     with that), so that it is not retried until the spec changes. Any
//     other error is retried with backoff.
//   - Identifiers and values from the spec never reach the external system
//     unescaped.
//   - When names are assigned by the external system (WithProviderNames),
//     Create records the assigned name with SetExternalName, and Observe
//     of an object without an external name reports Exists false.
//   - Where the external system can keep one, Create marks the resource
//     with Identity(obj) and Observe reports the mark in
//     Observation.Owner. Observe reports UpToDate false when the mark is not
//     obj's, and Update writes it: the step calls Update on a resource
//     with no mark only when it is the object's (created by the step, or
//     adopted because the user asked), never on one marked for another
//     object, so this is how an adopted resource gets its mark.
//   - Every method returns when its context ends (the step gives each call
//     a deadline, Timing.Call). An error after which it is unknown
//     whether the call took effect is marked with OutcomeUnknown, unless it
//     already matches one of the errors ErrOutcomeUnknown lists.
type ExternalClient[T client.Object] interface {
	// Observe reports whether the external resource exists, whether it is
	// up to date and available, and its connection details. What it
	// writes into obj's status (the resource's observed state) the step
	// keeps under every policy, observe-only and skip included, unless the
	// resource is another object's.
	Observe(ctx context.Context, obj T) (Observation, error)
	// Create creates the external resource.
	Create(ctx context.Context, obj T) (Creation, error)
	// Update brings the external resource in line with the spec.
	Update(ctx context.Context, obj T) (UpdateResult, error)
	// Delete deletes the external resource; a missing one is success.
	Delete(ctx context.Context, obj T) error
}

// Disconnecter is implemented by an ExternalClient that holds something to release,
// such as a network connection. The step calls Disconnect once per pass,
// after the last call of the ExternalClient; its error is logged, not returned.
type Disconnecter interface {
	// Disconnect releases the client's resources.
	Disconnect(ctx context.Context) error
}

// ConnectorFunc adapts a function to Connector.
type ConnectorFunc[T client.Object] func(ctx context.Context, obj T) (ExternalClient[T], error)

// Connect calls f.
func (f ConnectorFunc[T]) Connect(ctx context.Context, obj T) (ExternalClient[T], error) {
	return f(ctx, obj)
}

// ExternalClientFuncs adapts functions to ExternalClient. A nil function does nothing and
// succeeds; a nil ObserveFn reports a resource that exists, is up to date
// and is available.
type ExternalClientFuncs[T client.Object] struct {
	// ObserveFn implements Observe.
	ObserveFn func(ctx context.Context, obj T) (Observation, error)
	// CreateFn implements Create.
	CreateFn func(ctx context.Context, obj T) (Creation, error)
	// UpdateFn implements Update.
	UpdateFn func(ctx context.Context, obj T) (UpdateResult, error)
	// DeleteFn implements Delete.
	DeleteFn func(ctx context.Context, obj T) error
	// DisconnectFn, if set, is called by Disconnect.
	DisconnectFn func(ctx context.Context) error
}

var (
	_ ExternalClient[client.Object] = ExternalClientFuncs[client.Object]{}
	_ Disconnecter                  = ExternalClientFuncs[client.Object]{}
	_ Connector[client.Object]      = ConnectorFunc[client.Object](nil)
	_ Connector[client.Object]      = NopConnector[client.Object]()
)

// Observe calls ObserveFn.
func (c ExternalClientFuncs[T]) Observe(ctx context.Context, obj T) (Observation, error) {
	if c.ObserveFn == nil {
		return Observation{Exists: true, UpToDate: true, Available: true}, nil
	}
	return c.ObserveFn(ctx, obj)
}

// Create calls CreateFn.
func (c ExternalClientFuncs[T]) Create(ctx context.Context, obj T) (Creation, error) {
	if c.CreateFn == nil {
		return Creation{}, nil
	}
	return c.CreateFn(ctx, obj)
}

// Update calls UpdateFn.
func (c ExternalClientFuncs[T]) Update(ctx context.Context, obj T) (UpdateResult, error) {
	if c.UpdateFn == nil {
		return UpdateResult{}, nil
	}
	return c.UpdateFn(ctx, obj)
}

// Delete calls DeleteFn.
func (c ExternalClientFuncs[T]) Delete(ctx context.Context, obj T) error {
	if c.DeleteFn == nil {
		return nil
	}
	return c.DeleteFn(ctx, obj)
}

// Disconnect calls DisconnectFn.
func (c ExternalClientFuncs[T]) Disconnect(ctx context.Context) error {
	if c.DisconnectFn == nil {
		return nil
	}
	return c.DisconnectFn(ctx)
}

// NopExternalClient returns an ExternalClient for an external resource that always exists,
// is up to date and available, and that Create, Update and Delete leave
// alone.
func NopExternalClient[T client.Object]() ExternalClient[T] { return ExternalClientFuncs[T]{} }

// NopConnector returns a Connector whose clients are NopExternalClient.
func NopConnector[T client.Object]() Connector[T] {
	return ConnectorFunc[T](func(context.Context, T) (ExternalClient[T], error) { return NopExternalClient[T](), nil })
}

// BatchObserver is implemented by an ExternalClient, or by a Connector,
// that observes many resources of its kind in one call of the external
// system, as one catalog query reads every role of a database server.
// The step then observes together the resources of the objects whose
// polls are due within the batch window (Timing.Batch), in one call per
// round, and a pass whose object a round observed lately takes that
// observation in place of a Connect and an Observe of its own (the package
// documentation says when a pass still observes on its own).
//
// ObserveBatch observes the resource of each of objs as Observe would
// observe it alone, under the same obligations: it changes nothing
// outside, writes what it read of each resource into that object's status
// (and may fill unset fields of its spec, reporting LateInitialized), and
// returns one Observation per object, in the order of objs. objs are
// copies that carry their external names. An error fails the whole
// round: its passes then observe one by one. A Connector that implements
// it is called without Connect, and opens and releases what it needs; a
// client that does is connected for the round with the object of the
// pass that runs it, and disconnected after.
type BatchObserver[T client.Object] interface {
	ObserveBatch(ctx context.Context, objs []T) ([]Observation, error)
}
