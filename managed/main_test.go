package managed

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	corev1 "k8s.io/api/core/v1"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// shared is the control plane, with the Bucket CRD installed, that the
// envtest tests of this package share. It runs kube-controller-manager's
// garbage collector (and namespace controller) for gc_test.go.
var shared = bosuntest.Shared{Options: func() (controlplane.Options, error) {
	scheme := controlplane.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		return controlplane.Options{}, err
	}
	crd, err := v1.CRD()
	if err != nil {
		return controlplane.Options{}, err
	}
	return controlplane.Options{Scheme: scheme, CRDs: []*apiextensionsv1.CustomResourceDefinition{crd}, ControllerManager: true}, nil
}}

func TestMain(m *testing.M) { shared.Main(m) }

// finalizer is the finalizer of the test reconcilers.
const finalizer = "managed.test.bosun.dev/external"

// defaultRegion is where the cloud puts a bucket whose spec names no region.
const defaultRegion = "eu-1"

// cloudBucket is one bucket of the in-memory cloud.
type cloudBucket struct {
	size     int64
	region   string
	password string
	created  time.Time
	// owner is the identity of the object the bucket belongs to, as the
	// cloud's Create or Update marked it; empty for a bucket made outside
	// the operator or by a cloud that keeps no marks.
	owner string
	// want and wantAt are the size an Update asked for and when the
	// cloud applies it, with the cloud's updateDelay.
	want   int64
	wantAt time.Time
	// deleting counts the observations left before a deleted bucket is
	// gone, and goneAt is the moment before which it is not gone.
	deleting int
	goneAt   time.Time
	deleted  bool
	// creating: a long create of the bucket is still running.
	creating bool
}

// cloudOp is a long operation of the cloud (see cloud.async).
type cloudOp struct {
	kind   string // opCreate or opUpdate
	bucket string
	size   int64 // the size an update sets
	done   bool
}

// cloud is an in-memory external system of buckets, with switches for the
// faults the tests need. It is safe for concurrent use.
type cloud struct {
	mu      sync.Mutex
	buckets map[string]*cloudBucket
	// creates, updates, deletes, repairs and observesOf count the calls
	// per object UID; observes counts every Observe.
	creates, updates, deletes, repairs, observesOf map[string]int
	observes                                       int
	// batch makes the cloud's clients BatchObservers; batches counts their
	// ObserveBatch calls, batchedOf the observations they made per object
	// UID, and failBatch, if set, is returned by every ObserveBatch.
	batch     bool
	batches   int
	batchedOf map[string]int
	failBatch error
	// made counts the buckets Create ever made.
	made int
	// failCreate, if set, is returned by every Create.
	failCreate error
	// lostAnswer, if set, is returned once by Create after it made the
	// bucket: the answer of a create that worked was lost on the way back.
	lostAnswer error
	// afterCreate, if set, is called after Create made a bucket, without
	// the cloud's lock held.
	afterCreate func(obj *v1.Bucket)
	// lag hides a bucket from Observe for this long after its creation.
	lag time.Duration
	// updateDelay is how long an Update takes to show: the bucket keeps
	// its old size until then.
	updateDelay time.Duration
	// deleteObserves keeps a deleted bucket visible for this many
	// observations.
	deleteObserves int
	// deleteDelay keeps a deleted bucket visible for this long after the
	// first Delete, like a cloud that takes its time.
	deleteDelay time.Duration
	// refuseDeletesUntil, refuseUpdatesUntil and refuseRepairsUntil make
	// Delete, Update and RepairCredentials fail until those moments.
	refuseDeletesUntil, refuseUpdatesUntil, refuseRepairsUntil time.Time
	// readyDelay keeps a new bucket unavailable for this long after its
	// creation.
	readyDelay time.Duration
	// panicObserve makes Observe panic.
	panicObserve bool
	// hang makes Observe of the objects with these names wait until its
	// context ends, like an endpoint that never answers.
	hang map[string]bool
	// assignNames makes Create choose the bucket's name.
	assignNames bool
	// noMarks makes the cloud keep no owner marks: Observe reports no
	// Owner, as for a system that has nowhere to record one.
	noMarks bool
	// noRepair makes the cloud's clients not implement
	// CredentialRepairer, so only Create returns a password.
	noRepair bool
	// failRepair, if set, is returned by every RepairCredentials.
	failRepair error
	// async makes Create and Update start long operations, which end only
	// when the test calls finish; ops holds them by token and polls
	// counts the polls of each.
	async bool
	ops   map[string]*cloudOp
	polls map[string]int
	seq   int
	// callDelay is how long every call (Connect, Observe, Create, Update,
	// Delete) takes; inFlight counts the calls running, maxInFlight the
	// most that ever ran at once, and starts holds when each began.
	callDelay             time.Duration
	inFlight, maxInFlight int
	starts                []time.Time
}

// enter records the start of a call and waits callDelay; the function it
// returns records the call's end. It runs without the cloud's lock held.
func (c *cloud) enter() func() {
	c.mu.Lock()
	c.inFlight++
	c.maxInFlight = max(c.maxInFlight, c.inFlight)
	c.starts = append(c.starts, time.Now())
	d := c.callDelay
	c.mu.Unlock()
	time.Sleep(d)
	return func() {
		c.mu.Lock()
		c.inFlight--
		c.mu.Unlock()
	}
}

func newCloud() *cloud {
	return &cloud{
		buckets: map[string]*cloudBucket{},
		creates: map[string]int{}, updates: map[string]int{}, deletes: map[string]int{}, repairs: map[string]int{},
		observesOf: map[string]int{}, batchedOf: map[string]int{}, ops: map[string]*cloudOp{}, polls: map[string]int{},
	}
}

func (c *cloud) set(fn func(c *cloud)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fn(c)
}

// counts returns the total creates, updates and deletes.
func (c *cloud) counts() (creates, updates, deletes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return sum(c.creates), sum(c.updates), sum(c.deletes)
}

func sum(m map[string]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}

func (c *cloud) observed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.observes
}

// startOp records a long operation and returns its token. The caller
// holds the lock.
func (c *cloud) startOp(op *cloudOp) string {
	c.seq++
	token := fmt.Sprintf("op-%d", c.seq)
	c.ops[token] = op
	return token
}

// finish ends the long operation token, successfully.
func (c *cloud) finish(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	op := c.ops[token]
	op.done = true
	if b, ok := c.buckets[op.bucket]; ok {
		switch op.kind {
		case opCreate:
			b.creating = false
		case opUpdate:
			b.size = op.size
		}
	}
}

// pollsOf returns how often the operation token was polled.
func (c *cloud) pollsOf(token string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.polls[token]
}

// bucket returns a copy of the bucket name, and whether it exists.
func (c *cloud) bucket(name string) (cloudBucket, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.buckets[name]
	if !ok || b.deleted {
		return cloudBucket{}, false
	}
	return *b, true
}

// live returns the names of the buckets that exist.
func (c *cloud) live() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for _, n := range sortedKeys(c.buckets) {
		if !c.buckets[n].deleted {
			names = append(names, n)
		}
	}
	return names
}

// login reports whether password opens the bucket name.
func (c *cloud) login(name string, password []byte) bool {
	b, ok := c.bucket(name)
	return ok && b.password != "" && b.password == string(password)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

// Connect implements Connector.
func (c *cloud) Connect(context.Context, *v1.Bucket) (ExternalClient[*v1.Bucket], error) {
	defer c.enter()()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.noRepair:
		return cloudClient{c}, nil
	case c.batch:
		return batchingClient{repairingClient{cloudClient{c}}}, nil
	}
	return repairingClient{cloudClient{c}}, nil
}

type cloudClient struct{ c *cloud }

var errNegativeSize = errors.New("size must not be negative")

func (cc cloudClient) Observe(ctx context.Context, obj *v1.Bucket) (Observation, error) {
	c := cc.c
	c.mu.Lock()
	c.observes++
	c.observesOf[string(obj.UID)]++
	c.mu.Unlock()
	return cc.look(ctx, obj)
}

// look observes the bucket of obj, for Observe and ObserveBatch.
func (cc cloudClient) look(ctx context.Context, obj *v1.Bucket) (Observation, error) {
	c := cc.c
	defer c.enter()()
	c.mu.Lock()
	if c.hang[obj.Name] {
		c.mu.Unlock()
		<-ctx.Done()
		return Observation{}, fmt.Errorf("waiting for the cloud: %w", ctx.Err())
	}
	defer c.mu.Unlock()
	if c.panicObserve {
		panic("cloud observe exploded")
	}
	name := ExternalName(obj)
	b, ok := c.buckets[name]
	obj.Status.AtProvider = nil
	if name == "" || !ok || time.Since(b.created) < c.lag {
		return Observation{}, nil
	}
	if b.deleted {
		if b.deleting <= 0 && !time.Now().Before(b.goneAt) {
			delete(c.buckets, name)
			return Observation{}, nil
		}
		b.deleting = max(b.deleting-1, 0)
	}
	if !b.wantAt.IsZero() && !time.Now().Before(b.wantAt) {
		b.size, b.wantAt = b.want, time.Time{}
	}
	obj.Status.AtProvider = &v1.BucketObservation{Size: b.size, Region: b.region, Owner: b.owner}
	ready := !b.deleted && !b.creating && time.Since(b.created) >= c.readyDelay
	obs := Observation{Exists: true, Available: ready, ConnectionDetails: ConnectionDetails{"endpoint": []byte("https://cloud.test/" + name)}}
	if !c.noMarks {
		obs.Owner = b.owner
	}
	if obj.Spec.Region == "" {
		obj.Spec.Region = b.region
		obs.LateInitialized = true
	}
	obs.UpToDate = b.size == obj.Spec.Size && b.region == obj.Spec.Region && (c.noMarks || b.owner == Identity(obj))
	if !obs.UpToDate {
		obs.Diff = fmt.Sprintf("size %d, want %d", b.size, obj.Spec.Size)
	}
	return obs, nil
}

func (cc cloudClient) Create(_ context.Context, obj *v1.Bucket) (Creation, error) {
	c := cc.c
	defer c.enter()()
	c.mu.Lock()
	name := ExternalName(obj)
	if c.assignNames {
		c.seq++
		name = fmt.Sprintf("bkt-%d", c.seq)
		SetExternalName(obj, name)
	}
	c.creates[string(obj.UID)]++
	if c.failCreate != nil {
		defer c.mu.Unlock()
		return Creation{}, c.failCreate
	}
	if obj.Spec.Size < 0 {
		defer c.mu.Unlock()
		return Creation{}, InvalidSpec(errNegativeSize)
	}
	if b, ok := c.buckets[name]; ok && !b.deleted {
		defer c.mu.Unlock()
		return Creation{}, fmt.Errorf("bucket %q already exists", name)
	}
	region := obj.Spec.Region
	if region == "" {
		region = defaultRegion
	}
	pw := "pw-" + name + "-s3cr3t"
	b := &cloudBucket{size: obj.Spec.Size, region: region, password: pw, created: time.Now()}
	if !c.noMarks {
		b.owner = Identity(obj)
	}
	c.buckets[name] = b
	c.made++
	var token string
	if c.async {
		b.creating = true
		token = c.startOp(&cloudOp{kind: opCreate, bucket: name})
	}
	lost := c.lostAnswer
	c.lostAnswer = nil
	hook := c.afterCreate
	c.mu.Unlock()
	if hook != nil {
		hook(obj)
	}
	if lost != nil {
		return Creation{}, lost
	}
	return Creation{ConnectionDetails: ConnectionDetails{"password": []byte(pw)}, Operation: token}, nil
}

func (cc cloudClient) Update(_ context.Context, obj *v1.Bucket) (UpdateResult, error) {
	c := cc.c
	defer c.enter()()
	c.mu.Lock()
	defer c.mu.Unlock()
	name := ExternalName(obj)
	c.updates[string(obj.UID)]++
	b, ok := c.buckets[name]
	if !ok {
		return UpdateResult{}, fmt.Errorf("bucket %q not found", name)
	}
	if obj.Spec.Size < 0 {
		return UpdateResult{}, InvalidSpec(errNegativeSize)
	}
	if time.Now().Before(c.refuseUpdatesUntil) {
		return UpdateResult{}, errors.New("the cloud refuses updates for now")
	}
	if c.async {
		for _, token := range sortedKeys(c.ops) {
			if op := c.ops[token]; op.kind == opUpdate && op.bucket == name && op.size == obj.Spec.Size && !op.done {
				return UpdateResult{Operation: token}, nil
			}
		}
		return UpdateResult{Operation: c.startOp(&cloudOp{kind: opUpdate, bucket: name, size: obj.Spec.Size})}, nil
	}
	switch {
	case c.updateDelay <= 0:
		b.size = obj.Spec.Size
	case b.wantAt.IsZero() || b.want != obj.Spec.Size:
		b.want, b.wantAt = obj.Spec.Size, time.Now().Add(c.updateDelay)
	}
	if obj.Spec.Region != "" {
		b.region = obj.Spec.Region
	}
	if !c.noMarks {
		b.owner = Identity(obj)
	}
	return UpdateResult{}, nil
}

func (cc cloudClient) Delete(_ context.Context, obj *v1.Bucket) error {
	c := cc.c
	defer c.enter()()
	c.mu.Lock()
	defer c.mu.Unlock()
	name := ExternalName(obj)
	c.deletes[string(obj.UID)]++
	if time.Now().Before(c.refuseDeletesUntil) {
		return errors.New("the cloud refuses deletes for now")
	}
	b, ok := c.buckets[name]
	if !ok || b.deleted {
		return nil
	}
	b.deleted = true
	b.deleting = c.deleteObserves
	b.goneAt = time.Now().Add(c.deleteDelay)
	return nil
}

// PollOperation reports how the long operation op is going.
func (cc cloudClient) PollOperation(_ context.Context, _ *v1.Bucket, op Operation) (OperationStatus, error) {
	c := cc.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.polls[op.Token]++
	o, ok := c.ops[op.Token]
	if !ok || o.kind != op.Kind {
		return OperationStatus{}, fmt.Errorf("no %s operation %q", op.Kind, op.Token)
	}
	return OperationStatus{Done: o.done}, nil
}

// repairingClient is a cloudClient that can set a new password on a bucket.
type repairingClient struct{ cloudClient }

var _ CredentialRepairer[*v1.Bucket] = repairingClient{}

func (rc repairingClient) CredentialKeys() []string { return []string{"password"} }

func (rc repairingClient) RepairCredentials(_ context.Context, obj *v1.Bucket) (ConnectionDetails, error) {
	c := rc.c
	c.mu.Lock()
	defer c.mu.Unlock()
	name := ExternalName(obj)
	c.repairs[string(obj.UID)]++
	if c.failRepair != nil {
		return nil, c.failRepair
	}
	if time.Now().Before(c.refuseRepairsUntil) {
		return nil, errors.New("the cloud refuses to set passwords for now")
	}
	b, ok := c.buckets[name]
	if !ok || b.deleted {
		return nil, fmt.Errorf("bucket %q not found", name)
	}
	c.seq++
	b.password = fmt.Sprintf("pw-%s-r%d", name, c.seq)
	return ConnectionDetails{"password": []byte(b.password)}, nil
}

// batchingClient is a repairingClient that observes many buckets in one
// call.
type batchingClient struct{ repairingClient }

var _ BatchObserver[*v1.Bucket] = batchingClient{}

func (bc batchingClient) ObserveBatch(ctx context.Context, objs []*v1.Bucket) ([]Observation, error) {
	c := bc.c
	c.mu.Lock()
	c.batches++
	err := c.failBatch
	if err == nil {
		for _, obj := range objs {
			c.batchedOf[string(obj.UID)]++
		}
	}
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	out := make([]Observation, len(objs))
	for i, obj := range objs {
		if out[i], err = bc.look(ctx, obj); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// env is one test's controller, cloud, client and namespace.
type env struct {
	t      *testing.T
	cp     *controlplane.ControlPlane
	c      client.Client
	ns     string
	cloud  *cloud
	writes *bosuntest.WriteCounter
	logs   *bosuntest.LogRecorder
	// passes counts the passes of the controller, and notes the Buckets it
	// loads for Touch.
	passes *bosuntest.ReconcileCounter
	// others are the further namespaces the test's controller serves
	// (see rig.namespaces).
	others []string
}

// testOpts are the step options every test starts from: short intervals.
func testOpts() []Option {
	return []Option{
		WithTiming(Timing{Poll: 300 * time.Millisecond, MinPoll: 100 * time.Millisecond, Short: 100 * time.Millisecond}),
		WithOutcomeRetry(2, 10*time.Millisecond),
		WithConnectionSecret(func(b *v1.Bucket) string { return b.Spec.ConnectionSecret }),
	}
}

// rig is how start sets up a test's controller.
type rig struct {
	// wrap, when not nil, wraps the client the controller writes through
	// (outside the write counter).
	wrap func(client.Client) client.Client
	// step, when not nil, wraps the managed step in the step the
	// reconciler runs.
	step func(*Step[*v1.Bucket]) bosun.Step[*v1.Bucket]
	// opts are added after testOpts.
	opts []Option
	// namespaces is the number of namespaces the controller serves besides
	// the test's own, made for the test and kept in env.others.
	namespaces int
	// ns, when set, is the test's namespace, made by the caller, so that a
	// controller started again finds the objects of the one before.
	ns string
	// workers, when set, is the controller's MaxConcurrentReconciles.
	workers int
	// configure, when set, changes the manager's options last.
	configure func(*ctrl.Options)
}

// start runs a Bucket controller with the managed step made with opts after
// testOpts. wrap, when not nil, wraps the client the controller writes
// through (outside the write counter).
func start(t *testing.T, cl *cloud, wrap func(client.Client) client.Client, opts ...Option) *env {
	t.Helper()
	return startRig(t, cl, rig{wrap: wrap, opts: opts})
}

// startRig runs a Bucket controller set up as rg says.
func startRig(t *testing.T, cl *cloud, rg rig) *env {
	t.Helper()
	cp := shared.ControlPlane(t)
	e := &env{t: t, cp: cp, c: cp.Client, cloud: cl, writes: &bosuntest.WriteCounter{}, logs: &bosuntest.LogRecorder{}, passes: &bosuntest.ReconcileCounter{}}
	e.ns = rg.ns
	if e.ns == "" {
		e.ns = bosuntest.Namespace(t, cp.Client)
	}
	served := map[string]bool{e.ns: true}
	for range rg.namespaces {
		ns := bosuntest.Namespace(t, cp.Client)
		e.others = append(e.others, ns)
		served[ns] = true
	}
	step := NewStep[*v1.Bucket](cl, append(testOpts(), rg.opts...)...)
	var run bosun.Step[*v1.Bucket] = step
	if rg.step != nil {
		run = rg.step(step)
	}
	bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{Configure: rg.configure}, func(mgr ctrl.Manager) error {
		var c client.Client = e.writes.Wrap(mgr.GetClient())
		if rg.wrap != nil {
			c = rg.wrap(c)
		}
		c = e.passes.WrapClient(c)
		mgr = bosuntest.ManagerWithClient(mgr, c)
		mgr = bosuntest.ManagerWithLogger(mgr, e.logs.Wrap(mgr.GetLogger()))
		r := &bosun.Reconciler[*v1.Bucket]{
			Name:      "bucket-" + e.ns,
			Steps:     []bosun.Step[*v1.Bucket]{run},
			Finalizer: finalizer,
		}
		// Objects of earlier tests stay behind in their namespaces; this
		// test's controller leaves them alone.
		mine := builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return served[o.GetNamespace()] }))
		return bosun.ControllerManagedBy[*v1.Bucket](mgr).For(nil, mine).Owns(&corev1.Secret{}, mine).WrapReconciler(e.passes.Wrap).
			WithOptions(controller.Options{MaxConcurrentReconciles: max(rg.workers, 1)}).Complete(r)
	})
	return e
}

func (e *env) key(name string) client.ObjectKey { return client.ObjectKey{Namespace: e.ns, Name: name} }

// create creates a Bucket.
func (e *env) create(name string, size int64, secret string, annotations map[string]string) *v1.Bucket {
	e.t.Helper()
	b := &v1.Bucket{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Annotations: annotations},
		Spec:       v1.BucketSpec{Size: size, ConnectionSecret: secret},
	}
	if err := e.c.Create(e.t.Context(), b); err != nil {
		e.t.Fatalf("create bucket %s: %v", name, err)
	}
	return b
}

func (e *env) get(name string) *v1.Bucket {
	e.t.Helper()
	b := &v1.Bucket{}
	if err := e.c.Get(e.t.Context(), e.key(name), b); err != nil {
		e.t.Fatalf("get bucket %s: %v", name, err)
	}
	return b
}

// change applies fn to the Bucket name and updates it, retrying conflicts.
func (e *env) change(name string, fn func(b *v1.Bucket)) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		b := &v1.Bucket{}
		if err := e.c.Get(ctx, e.key(name), b); err != nil {
			return err
		}
		fn(b)
		return e.c.Update(ctx, b)
	})
}

// cond describes a condition by the fields the tests check.
type cond struct {
	Status metav1.ConditionStatus
	Reason conditions.Reason
}

var converged = map[string]cond{
	conditions.TypeReady:      {metav1.ConditionTrue, conditions.ReasonSucceeded},
	defaultConditionSynced:    {metav1.ConditionTrue, ReasonReconcileSuccess},
	defaultConditionAvailable: {metav1.ConditionTrue, ReasonAvailable},
}

// checkConditions reports how b's conditions differ from want, each for
// b's current generation.
func checkConditions(b *v1.Bucket, want map[string]cond) error {
	if b.Status.ObservedGeneration != b.Generation {
		return fmt.Errorf("observedGeneration %d, generation %d", b.Status.ObservedGeneration, b.Generation)
	}
	for _, typ := range sortedKeys(want) {
		w := want[typ]
		c := conditions.Find(b.Status.Conditions, typ)
		switch {
		case c == nil:
			return errors.New("no " + typ + " condition")
		case c.Status != w.Status || c.Reason != string(w.Reason):
			return fmt.Errorf("%s is %s/%s (%q), want %s/%s", typ, c.Status, c.Reason, c.Message, w.Status, w.Reason)
		case c.ObservedGeneration != b.Generation:
			return fmt.Errorf("%s describes generation %d, object is at %d", typ, c.ObservedGeneration, b.Generation)
		}
	}
	return nil
}

// wait waits until the Bucket name has the conditions want and returns it.
func (e *env) wait(name string, want map[string]cond) *v1.Bucket {
	e.t.Helper()
	var got *v1.Bucket
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		b := &v1.Bucket{}
		if err := e.c.Get(ctx, e.key(name), b); err != nil {
			return err
		}
		if err := checkConditions(b, want); err != nil {
			return err
		}
		got = b
		return nil
	})
	return got
}

// waitGone waits until the Bucket name no longer exists.
func (e *env) waitGone(name string, opts ...bosuntest.EventuallyOption) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		err := e.c.Get(ctx, e.key(name), &v1.Bucket{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get bucket %s: %w, want NotFound", name, err)
	}, opts...)
}

// secret returns the data of Secret name, or nil and an error.
func (e *env) secret(ctx context.Context, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	if err := e.c.Get(ctx, e.key(name), s); err != nil {
		return nil, err
	}
	return s, nil
}

func (e *env) delete(name string) {
	e.t.Helper()
	if err := e.c.Delete(e.t.Context(), &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}}); err != nil {
		e.t.Fatalf("delete bucket %s: %v", name, err)
	}
}

// annotated returns annotations with the given key/value pairs.
func annotated(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return maps.Clone(m)
}

// in returns e working in namespace ns (one of e.others).
func (e *env) in(ns string) *env {
	c := *e
	c.ns = ns
	return &c
}

// nameOf returns the external name of b, failing when it has none.
func nameOf(b *v1.Bucket) string {
	if n := ExternalName(b); n != "" {
		return n
	}
	panic("bucket " + b.Name + " has no external name")
}

// waitName waits until the Bucket name has an external name, and returns
// it.
func (e *env) waitName(name string) string {
	e.t.Helper()
	var n string
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		b := &v1.Bucket{}
		if err := e.c.Get(ctx, e.key(name), b); err != nil {
			return err
		}
		if n = ExternalName(b); n == "" {
			return errors.New("no external name yet")
		}
		return nil
	})
	return n
}

// touch is the passes' Touch of the Bucket name.
func (e *env) touch(name, value string) {
	e.t.Helper()
	e.passes.Touch(e.t, e.c, &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}}, value)
}

// window is bosuntest.Window with the Bucket clock, which polls: it needs
// no tick.
func (e *env) window(clock string, d time.Duration, n int) {
	e.t.Helper()
	b := &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: clock}}
	bosuntest.Window(e.t, nil, b, func() int { return e.passes.Count(client.ObjectKeyFromObject(b)) }, d, n)
}
