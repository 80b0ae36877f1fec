package managed

import (
	"math/rand/v2"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Defaults of the step's options, stated in the docs of the options.
const (
	defaultPollInterval        = time.Minute
	defaultMinPollInterval     = 5 * time.Second
	defaultShortInterval       = 5 * time.Second
	defaultCreationGracePeriod = 30 * time.Second
	defaultCallTimeout         = time.Minute
	defaultRecordTimeout       = 30 * time.Second
	defaultConditionSynced     = "Synced"
	defaultConditionAvailable  = "Available"
	defaultChangeLogLength     = 10
	defaultOutcomeAttempts     = 5
	defaultOutcomeBackoff      = 100 * time.Millisecond

	// pollJitter is the fraction by which a poll interval is spread, so
	// that objects created together do not poll together.
	pollJitter = 0.1
)

// Option configures a step made by NewStep.
type Option func(*config)

// config is what the options set.
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
	// adoptAll grants every object adoption (WithAdoptionGranted).
	adoptAll bool
	// keys are where the step keeps its own annotations
	// (WithAnnotationPrefix).
	keys recordKeys
	// spread is the window over which first observations are spread
	// (Timing.Spread): zero for each object's poll interval, below zero
	// for none. batch is Timing.Batch.
	spread time.Duration
	batch  time.Duration
	now    func() time.Time
	rand   func() float64
}

// defaults returns the configuration of a step without options.
func defaults() config {
	return config{
		name:            "managed",
		synced:          defaultConditionSynced,
		available:       defaultConditionAvailable,
		nameFn:          NameFromNamespacedName,
		poll:            defaultPollInterval,
		minPoll:         defaultMinPollInterval,
		short:           defaultShortInterval,
		grace:           defaultCreationGracePeriod,
		policies:        AllPolicies(),
		deletion:        DeletionDelete,
		order:           DeletionOrderImmediate,
		changeLogLength: defaultChangeLogLength,
		outcomeAttempts: defaultOutcomeAttempts,
		outcomeBackoff:  defaultOutcomeBackoff,
		callTimeout:     defaultCallTimeout,
		recordTimeout:   defaultRecordTimeout,
		now:             time.Now,
		rand:            rand.Float64,
	}
}

// WithName names the step (default "managed"); two managed steps on one
// object need different names, WithConditionTypes and
// WithAnnotationPrefix (see the package documentation).
func WithName(name string) Option { return func(c *config) { c.name = name } }

// WithAnnotationPrefix keeps the annotations the step writes for itself
// under prefix, a DNS subdomain, in place of bosun.dev: with
// "billing.bosun.dev" the external name is in
// billing.bosun.dev/external-name, the leak guard's marks in
// billing.bosun.dev/external-create-pending and the rest, and likewise
// the delete fence, the first-available mark and a long operation. An
// object with two managed steps (two steps of one reconciler, or two
// controllers) needs a prefix of its own for each step but one, as it
// needs WithName and WithConditionTypes: steps that share the annotations
// take each other's creates, deletes and operations for their own (see
// the package documentation for names and Secrets of their own). The
// annotations that set policies (AnnotationManagementPolicies,
// AnnotationDeletionPolicy, AnnotationDeletionOrder,
// AnnotationPollInterval) stay under bosun.dev/ and apply to every step of
// the object. The ExternalClient reads and sets the step's name with
// ExternalName and SetExternalName as with the default: during its calls
// and its Connector's the object carries the step's name under
// AnnotationExternalName. NewStep
// panics if prefix is not a DNS subdomain, a programming error.
func WithAnnotationPrefix(prefix string) Option {
	return func(c *config) {
		if prefix == defaultAnnotationPrefix {
			prefix = ""
		}
		c.keys = recordKeys{prefix: prefix}
	}
}

// WithConditionTypes sets the types of the two conditions the step owns
// (default "Synced" and "Available").
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
// with Synced False, reason CreateIncomplete, because it cannot tell
// whether a resource was made or what it is called; so does a Create that
// succeeds without recording a name.
func WithProviderNames() Option { return func(c *config) { c.providerNames = true } }

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
// Ready are False with reason WaitingForFinalizers. Controllers that both
// delete last on one object do not wait for each other (see
// annotation bosun.dev/deleting-last).
func WithDeletionOrder(o DeletionOrder) Option { return func(c *config) { c.order = o } }

// WithChangeLogLength sets how many entries the change log of an object
// keeps, the newest (default 10). Values below 1 keep the default.
func WithChangeLogLength(n int) Option { return func(c *config) { c.changeLogLength = n } }

// WithConnectionSecret publishes connection details to the Secret, in the
// object's namespace, that name returns for the object (usually a field of
// its spec). An empty name publishes nothing. The Secret is created owned by
// the object (a controller reference) and labelled LabelConnectionSecret,
// updated only when its data would change or it lacks the label, and
// deleted with the object (see CacheConnectionSecretsOnly for the cache
// its watch needs). Values are added to what the Secret
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

// WithAdoptionGranted grants adoption to every object of the step,
// whatever its Namespace says (see AnnotationAdoptExternal): a hand-set
// AnnotationExternalName then adopts an unmarked resource the step did not
// create. It is for operators whose users may all take over such
// resources (one team, or a cluster-scoped kind only administrators
// create); an operator that serves several tenants should leave the grant
// to the Namespace annotation.
func WithAdoptionGranted() Option { return func(c *config) { c.adoptAll = true } }

// WithOutcomeRetry sets how often the step tries to record the outcome of a
// Create (default 5) and the backoff before the second try, doubled for
// each further one (default 100ms).
func WithOutcomeRetry(attempts int, backoff time.Duration) Option {
	return func(c *config) { c.outcomeAttempts, c.outcomeBackoff = attempts, backoff }
}

// WithClock sets the clock the step reads (default time.Now), for tests.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// Timing holds the step's intervals and timeouts (WithTiming). A field
// that is not positive keeps its default.
//
// For example, WithTiming(Timing{Poll: 2 * time.Minute}) polls every two
// minutes and keeps every other default.
type Timing struct {
	// Poll is how often an available, up-to-date resource is observed
	// again, give or take 10% so that objects created together do not
	// poll together (default one minute). An object overrides it with
	// AnnotationPollInterval; a value there that does not parse, or is not
	// positive, is ignored in favour of this one.
	Poll time.Duration
	// MinPoll is the shortest poll interval (default 5s); shorter ones,
	// configured or annotated, are raised to it.
	MinPoll time.Duration
	// Short is how soon a resource being created, updated or deleted is
	// looked at again (default 5s); it is also the first backoff after a
	// failed call.
	Short time.Duration
	// CreationGrace is how long after a Create the step does not take
	// "not found" for an answer (default 30s).
	CreationGrace time.Duration
	// Call bounds each call of the Connector and the ExternalClient
	// (Connect, Observe, Create, Update, Delete, RepairCredentials,
	// PollOperation, Disconnect) with a context deadline (default one
	// minute: long enough for a slow create in most external systems,
	// short enough that a hung endpoint holds a worker for a minute, not
	// for ever). A call that runs out of time fails the pass with an error
	// that says so, in Synced with the reason of the operation, and is
	// retried with backoff. The ExternalClient must honour its context for
	// this to work.
	Call time.Duration
	// Record bounds the writes that follow a Create, publishing what it
	// returned and recording its outcome (default 30s). They do not end
	// when the reconcile's context does (a manager stopping for a
	// rollout), only after this timeout, so that a stop in the middle of a
	// create does not lose them.
	Record time.Duration
	// Spread is the window over which the step spreads its first
	// observations, in this process, of resources already in line with
	// their objects (see the package documentation), so that a process
	// that starts does not observe them all at once: by default each
	// object's poll interval. Unlike the other fields, a negative Spread
	// means something: the step then observes every object on its first
	// pass.
	Spread time.Duration
	// Batch is, with a BatchObserver, how far ahead of their polls the
	// resources are observed in one batch, and so about how old a batch's
	// observation may be when a pass uses it (default a tenth of Poll).
	Batch time.Duration
}

// WithTiming sets the step's intervals and timeouts: the fields of t that
// are positive (see Timing). The others keep their defaults, or what an
// earlier WithTiming set.
func WithTiming(t Timing) Option {
	return func(c *config) {
		for _, p := range []struct {
			dst *time.Duration
			v   time.Duration
		}{
			{&c.poll, t.Poll}, {&c.minPoll, t.MinPoll}, {&c.short, t.Short}, {&c.grace, t.CreationGrace},
			{&c.callTimeout, t.Call}, {&c.recordTimeout, t.Record}, {&c.spread, t.Spread}, {&c.batch, t.Batch},
		} {
			if p.v > 0 {
				*p.dst = p.v
			}
		}
		if t.Spread < 0 {
			c.spread = -1
		}
	}
}

// fill gives the durations that are not positive, and the counts below
// one, their defaults.
func (c *config) fill() {
	d := defaults()
	for _, p := range []struct{ got, def *time.Duration }{
		{&c.poll, &d.poll}, {&c.minPoll, &d.minPoll}, {&c.short, &d.short}, {&c.grace, &d.grace}, {&c.outcomeBackoff, &d.outcomeBackoff},
		{&c.callTimeout, &d.callTimeout}, {&c.recordTimeout, &d.recordTimeout},
	} {
		if *p.got <= 0 {
			*p.got = *p.def
		}
	}
	if c.outcomeAttempts < 1 {
		c.outcomeAttempts = 1
	}
	if c.batch <= 0 {
		c.batch = c.poll / 10
	}
	if c.changeLogLength < 1 {
		c.changeLogLength = d.changeLogLength
	}
	if c.nameFn == nil {
		c.nameFn = NameFromNamespacedName
	}
}

// WithCallHook sets the hook that sees every call of the ExternalClient. Nil, the
// default, means none.
func WithCallHook(h CallHook) Option { return func(c *config) { c.hook = h } }

// WithLimiter makes the step's calls wait for l, which other steps may
// share: one Limiter per external system keeps the calls of every
// controller that talks to it within its limits, and
// WithLimiter(NewLimiter(limits)) gives a step one of its own. Nil, the
// default, sets no limit.
func WithLimiter(l *Limiter) Option { return func(c *config) { c.limiter = l } }
