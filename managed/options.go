package managed

import (
	"math/rand/v2"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/managed/changelog"
)

// Defaults of the step's options.
const (
	// DefaultPollInterval is how long a step waits, give or take
	// PollJitter, before it observes an available, up-to-date resource
	// again.
	DefaultPollInterval = time.Minute
	// DefaultMinPollInterval is the shortest poll interval an object's
	// AnnotationPollInterval may ask for.
	DefaultMinPollInterval = 5 * time.Second
	// DefaultShortInterval is how long a step waits before it looks again at
	// a resource that is being created, updated or deleted.
	DefaultShortInterval = 5 * time.Second
	// DefaultCreationGracePeriod is how long after a Create a "not found"
	// from Observe is taken for the external system lagging behind rather
	// than for a missing resource.
	DefaultCreationGracePeriod = 30 * time.Second
	// DefaultCallTimeout bounds each call of the Connector and the ExternalClient:
	// long enough for a slow create in most external systems, short enough
	// that a hung endpoint holds a worker for a minute, not for ever.
	DefaultCallTimeout = time.Minute
	// DefaultRecordTimeout bounds the writes after a Create that go on when
	// the reconcile's context ends (see WithRecordTimeout).
	DefaultRecordTimeout = 30 * time.Second
	// PollJitter is the fraction by which a poll interval is spread, so
	// that objects created together do not poll together.
	PollJitter = 0.1

	// DefaultConditionSynced is the default type of the condition that
	// reports whether the last pass reached the external system and did
	// what was needed.
	DefaultConditionSynced = "Synced"
	// DefaultConditionAvailable is the default type of the condition that
	// reports whether the external resource is ready for use.
	DefaultConditionAvailable = "Available"

	defaultOutcomeAttempts = 5
	defaultOutcomeBackoff  = 100 * time.Millisecond
)

// Option configures a step made by NewStep.
type Option func(*config)

type config struct {
	name            string
	synced          string
	available       string
	nameFn          func(client.Object) string
	providerNames   bool
	poll            time.Duration
	minPoll         time.Duration
	short           time.Duration
	grace           time.Duration
	policies        Policies
	deletion        DeletionPolicy
	order           DeletionOrder
	changeLogLength int
	secretName      func(client.Object) string
	outcomeAttempts int
	outcomeBackoff  time.Duration
	callTimeout     time.Duration
	recordTimeout   time.Duration
	hook            CallHook
	limiter         *Limiter
	now             func() time.Time
	rand            func() float64
}

func defaults() config {
	return config{
		name:            "managed",
		synced:          DefaultConditionSynced,
		available:       DefaultConditionAvailable,
		nameFn:          NameFromNamespacedName,
		poll:            DefaultPollInterval,
		minPoll:         DefaultMinPollInterval,
		short:           DefaultShortInterval,
		grace:           DefaultCreationGracePeriod,
		policies:        AllPolicies(),
		deletion:        DeletionDelete,
		order:           DeletionOrderImmediate,
		changeLogLength: changelog.DefaultLength,
		outcomeAttempts: defaultOutcomeAttempts,
		outcomeBackoff:  defaultOutcomeBackoff,
		callTimeout:     DefaultCallTimeout,
		recordTimeout:   DefaultRecordTimeout,
		now:             time.Now,
		rand:            rand.Float64,
	}
}

// WithName names the step (default "managed"); a reconciler with two
// managed steps needs different names and WithConditionTypes.
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithConditionTypes sets the types of the two conditions the step owns
// (default DefaultConditionSynced and DefaultConditionAvailable).
func WithConditionTypes(synced, available string) Option {
	return func(c *config) { c.synced, c.available = synced, available }
}

// WithExternalName sets how the external name is chosen for an object that
// has none yet (default NameFromNamespacedName; see also NameFromUID and
// NameFromMetadata). Choose names unique to each object: two objects that
// get the same name cannot both have a resource. The name is recorded in
// AnnotationExternalName together with the pending mark committed before
// Create (or, under observe-only policies, once the resource is found), and
// never changes afterwards. Such names are deterministic: a pass that finds
// a create started and its outcome unrecorded looks for the resource by
// that name and adopts it.
func WithExternalName(name func(client.Object) string) Option {
	return func(c *config) { c.nameFn, c.providerNames = name, false }
}

// WithProviderNames declares that the external system assigns the name on
// Create: the ExternalClient's Create records it with SetExternalName, and the step
// commits it with the outcome. When the resource a recorded name names is
// gone (deleted outside the operator) and the creation grace period is
// over, the step creates one replacement and records its name in place of
// the old one. Such names are not deterministic: when a pass finds a
// create started and its outcome unrecorded (or unknown), the step stops
// with Synced False, reason ReasonCreateIncomplete, because it cannot tell
// whether a resource was made or what it is called; so does a Create that
// succeeds without recording a name.
func WithProviderNames() Option { return func(c *config) { c.providerNames = true } }

// WithPollInterval sets how often an available, up-to-date resource is
// observed again (default DefaultPollInterval), give or take PollJitter.
// An object overrides it with AnnotationPollInterval; a value there that
// does not parse, or is not positive, is ignored in favour of this one.
func WithPollInterval(d time.Duration) Option { return func(c *config) { c.poll = d } }

// WithMinPollInterval sets the shortest poll interval (default
// DefaultMinPollInterval); shorter ones, configured or annotated, are raised
// to it.
func WithMinPollInterval(d time.Duration) Option { return func(c *config) { c.minPoll = d } }

// WithShortInterval sets how soon a resource being created, updated or
// deleted is looked at again (default DefaultShortInterval).
func WithShortInterval(d time.Duration) Option { return func(c *config) { c.short = d } }

// WithCreationGracePeriod sets how long after a Create the step does not
// take "not found" for an answer (default DefaultCreationGracePeriod).
func WithCreationGracePeriod(d time.Duration) Option { return func(c *config) { c.grace = d } }

// WithManagementPolicies sets the management policies of objects without
// AnnotationManagementPolicies (default AllPolicies).
func WithManagementPolicies(p Policies) Option { return func(c *config) { c.policies = p } }

// WithDeletionPolicy sets the deletion policy of objects without
// AnnotationDeletionPolicy (default DeletionDelete).
func WithDeletionPolicy(p DeletionPolicy) Option { return func(c *config) { c.deletion = p } }

// WithDeletionOrder sets the deletion order of objects without
// AnnotationDeletionOrder (default DeletionOrderImmediate). With
// DeletionOrderLast the step deletes the external resource only once the
// object holds no finalizer but the engine's own; meanwhile Synced and
// Ready are False with ReasonWaitingForFinalizers. Controllers that both
// delete last on one object do not wait for each other (see
// AnnotationDeletingLast).
func WithDeletionOrder(o DeletionOrder) Option { return func(c *config) { c.order = o } }

// WithChangeLogLength sets how many entries the change log of an object
// keeps, the newest (default changelog.DefaultLength). Values below 1
// keep the default.
func WithChangeLogLength(n int) Option { return func(c *config) { c.changeLogLength = n } }

// WithConnectionSecret publishes connection details to the Secret, in the
// object's namespace, that name returns for the object (usually a field of
// its spec). An empty name publishes nothing. The Secret is created owned by
// the object (a controller reference), updated only when its data would
// change, and deleted with the object. Values are added to what the Secret
// holds, never removed, so a password that only Create reveals stays.
//
// The operator needs get, list, watch, create, update and delete on Secrets.
func WithConnectionSecret[T client.Object](name func(T) string) Option {
	return func(c *config) {
		c.secretName = func(obj client.Object) string {
			t, ok := obj.(T)
			if !ok {
				return ""
			}
			return name(t)
		}
	}
}

// WithOutcomeRetry sets how often the step tries to record the outcome of a
// Create (default 5) and the backoff before the second try, doubled for
// each further one (default 100ms).
func WithOutcomeRetry(attempts int, backoff time.Duration) Option {
	return func(c *config) { c.outcomeAttempts, c.outcomeBackoff = attempts, backoff }
}

// WithClock sets the clock the step reads (default time.Now), for tests.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// WithCallTimeout bounds each call of the Connector and the ExternalClient
// (Connect, Observe, Create, Update, Delete, RepairCredentials, Disconnect)
// with a context deadline (default DefaultCallTimeout), so that an external
// system that does not answer cannot hold a worker of the controller. A
// call that runs out of time fails the pass with an error that says so, in
// Synced with the reason of the operation, and is retried with backoff. The
// ExternalClient must honour its context for this to work.
func WithCallTimeout(d time.Duration) Option { return func(c *config) { c.callTimeout = d } }

// WithRecordTimeout bounds the writes that follow a Create, publishing what
// it returned and recording its outcome (default DefaultRecordTimeout).
// They do not end when the reconcile's context does (a manager stopping for
// a rollout), only after this timeout, so that a stop in the middle of a
// create does not lose them.
func WithRecordTimeout(d time.Duration) Option { return func(c *config) { c.recordTimeout = d } }
