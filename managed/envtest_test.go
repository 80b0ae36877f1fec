package managed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// TestLifecycle follows a Bucket through create, late initialisation,
// update, drift correction and delete, with its connection Secret.
func TestLifecycle(t *testing.T) {
	cl := newCloud()
	e := start(t, cl, nil)
	e.create("b1", 1, "b1-conn", nil)

	b := e.wait("b1", converged)
	uid := string(b.UID)
	name := e.ns + ".b1"
	if got := ExternalName(b); got != name {
		t.Errorf("external name %q, want %q (namespace and name)", got, name)
	}
	if _, ok := b.Annotations[annotationCreateSucceeded]; !ok {
		t.Errorf("annotations %v lack %s", b.Annotations, annotationCreateSucceeded)
	}
	if b.Spec.Region != defaultRegion {
		t.Errorf("spec.region %q, want the late-initialised %q", b.Spec.Region, defaultRegion)
	}
	if diff := cmp.Diff(&v1.BucketObservation{Size: 1, Region: defaultRegion, Owner: uid}, b.Status.AtProvider); diff != "" {
		t.Errorf("status.atProvider (-want +got):\n%s", diff)
	}
	sec, err := e.secret(t.Context(), "b1-conn")
	if err != nil {
		t.Fatalf("connection secret: %v", err)
	}
	want := map[string][]byte{"password": []byte("pw-" + name + "-s3cr3t"), "endpoint": []byte("https://cloud.test/" + name)}
	if diff := cmp.Diff(want, sec.Data); diff != "" {
		t.Errorf("connection secret data (-want +got):\n%s", diff)
	}
	if !metav1.IsControlledBy(sec, b) {
		t.Errorf("connection secret owners %v, want controlled by the bucket", sec.OwnerReferences)
	}

	// A spec change is applied with Update.
	e.change("b1", func(b *v1.Bucket) { b.Spec.Size = 2 })
	bosuntest.Eventually(t, func(context.Context) error {
		if got, _ := cl.bucket(name); got.size != 2 {
			return fmt.Errorf("cloud size %d, want 2", got.size)
		}
		return nil
	})
	e.wait("b1", converged)

	// A change behind the operator's back is undone within the poll
	// interval, and counted as a drift correction.
	drift0 := counterValue(t, "bucket-"+e.ns, "managed")
	cl.set(func(c *cloud) { c.buckets[name].size = 7 })
	bosuntest.Eventually(t, func(context.Context) error {
		if got, _ := cl.bucket(name); got.size != 2 {
			return fmt.Errorf("cloud size %d, want 2", got.size)
		}
		return nil
	})
	if got := counterValue(t, "bucket-"+e.ns, "managed") - drift0; got != 1 {
		t.Errorf("drift corrections counted %v, want 1", got)
	}

	// Delete waits until the cloud says the bucket is gone, with
	// Available False, reason Deleting, meanwhile.
	cl.set(func(c *cloud) { c.deleteObserves = 1 << 30 })
	e.delete("b1")
	bosuntest.Eventually(t, func(ctx context.Context) error {
		b := &v1.Bucket{}
		if err := e.c.Get(ctx, e.key("b1"), b); err != nil {
			return err
		}
		c := conditions.Find(b.Status.Conditions, defaultConditionAvailable)
		if c == nil || c.Status != metav1.ConditionFalse || c.Reason != string(ReasonDeleting) {
			return fmt.Errorf("Available is %v, want False/%s", c, ReasonDeleting)
		}
		return nil
	})
	cl.set(func(c *cloud) { c.buckets[name].deleting = 0 })
	e.waitGone("b1")
	if _, ok := cl.bucket(name); ok {
		t.Error("cloud bucket b1 still exists after the object is gone")
	}
	if _, err := e.secret(t.Context(), "b1-conn"); err == nil {
		t.Error("connection secret still exists after the object is gone")
	}
	cl.set(func(c *cloud) {
		if c.creates[uid] != 1 || c.updates[uid] != 2 || c.deletes[uid] < 1 || c.repairs[uid] != 0 {
			t.Errorf("cloud calls: creates %d, updates %d, deletes %d, credential repairs %d; want 1, 2, at least 1, 0",
				c.creates[uid], c.updates[uid], c.deletes[uid], c.repairs[uid])
		}
	})
}

// TestConvergedIsQuiet checks that reconciling a converged Bucket again
// makes no write to the API server and no call to the cloud beyond Observe.
func TestConvergedIsQuiet(t *testing.T) {
	cl := newCloud()
	e := start(t, cl, nil)
	e.create("quiet", 3, "quiet-conn", nil)
	e.wait("quiet", converged)
	// The passes that converged the Bucket have ended.
	e.touch("quiet", "settled")

	e.writes.Reset()
	c0, u0, d0 := cl.counts()
	o0 := cl.observed()
	bosuntest.Eventually(t, func(context.Context) error {
		if n := cl.observed() - o0; n < 4 {
			return fmt.Errorf("%d polls so far, want 4", n)
		}
		return nil
	})
	if w := e.writes.Writes(); len(w) != 0 {
		t.Errorf("writes while converged: %v, want none", w)
	}
	if c, u, d := cl.counts(); c != c0 || u != u0 || d != d0 {
		t.Errorf("cloud calls while converged: creates %d, updates %d, deletes %d more, want none", c-c0, u-u0, d-d0)
	}
}

// TestObserveOnly checks that the observe-only policy never creates,
// updates or deletes, and does not late-initialise; that observing is the
// whole job, so a pass that observes the resource is a success (Synced
// True, as in Crossplane), and one that finds nothing is not (Synced False,
// ExternalNotFound); and that Ready follows what is observed.
func TestObserveOnly(t *testing.T) {
	cl := newCloud()
	// Observing a bucket made outside the operator is adoption.
	e := start(t, cl, nil, WithAdoptionGranted())
	e.create("watched", 5, "", annotated(AnnotationManagementPolicies, string(policyObserve)))
	b := e.wait("watched", map[string]cond{
		conditions.TypeReady:      {metav1.ConditionFalse, ReasonExternalNotFound},
		defaultConditionSynced:    {metav1.ConditionFalse, ReasonExternalNotFound},
		defaultConditionAvailable: {metav1.ConditionFalse, ReasonExternalNotFound},
	})
	if msg := conditions.Find(b.Status.Conditions, defaultConditionSynced).Message; !strings.Contains(msg, "(observe)") {
		t.Errorf("Synced message %q does not name the policies that forbid creating the resource", msg)
	}

	// The bucket appears outside the operator, different from the spec.
	name := e.ns + ".watched"
	cl.set(func(c *cloud) {
		c.buckets[name] = &cloudBucket{size: 9, region: "us-2", created: time.Now().Add(-time.Hour)}
	})
	b = e.wait("watched", map[string]cond{
		conditions.TypeReady:      {metav1.ConditionTrue, conditions.ReasonSucceeded},
		defaultConditionSynced:    {metav1.ConditionTrue, ReasonReconcileSuccess},
		defaultConditionAvailable: {metav1.ConditionTrue, ReasonAvailable},
	})
	if msg := conditions.Find(b.Status.Conditions, defaultConditionSynced).Message; !strings.Contains(msg, "do not allow Update") {
		t.Errorf("Synced message %q does not say that the resource differs and may not be updated", msg)
	}
	if b.Spec.Region != "" {
		t.Errorf("spec.region %q, want it left empty under observe-only", b.Spec.Region)
	}
	if diff := cmp.Diff(&v1.BucketObservation{Size: 9, Region: "us-2"}, b.Status.AtProvider); diff != "" {
		t.Errorf("status.atProvider under observe-only (-want +got):\n%s", diff)
	}
	e.delete("watched")
	e.waitGone("watched")
	if got, ok := cl.bucket(name); !ok || got.size != 9 {
		t.Errorf("cloud bucket after delete: %+v, %v; want it untouched", got, ok)
	}
	if c, u, d := cl.counts(); c+u+d != 0 {
		t.Errorf("cloud calls: creates %d, updates %d, deletes %d; want none", c, u, d)
	}
}

// TestOrphan checks that the Orphan deletion policy leaves the bucket and
// removes the connection Secret.
func TestOrphan(t *testing.T) {
	cl := newCloud()
	e := start(t, cl, nil)
	e.create("kept", 1, "kept-conn", annotated(AnnotationDeletionPolicy, string(DeletionOrphan)))
	e.wait("kept", converged)
	e.delete("kept")
	e.waitGone("kept")
	if _, ok := cl.bucket(e.ns + ".kept"); !ok {
		t.Error("cloud bucket was deleted under the Orphan policy")
	}
	if _, _, d := cl.counts(); d != 0 {
		t.Errorf("%d deletes, want none", d)
	}
	if _, err := e.secret(t.Context(), "kept-conn"); err == nil {
		t.Error("connection secret still exists after the object is gone")
	}
}

// failOutcome is a client wrapper that fails every write recording the
// outcome of a create, the crash window of the leak guard.
func failOutcome(c client.Client) client.Client {
	return interceptor.NewClient(asWithWatch(c), interceptor.Funcs{
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			data, err := patch.Data(obj)
			// Nothing written after the Create gets through: neither the
			// outcome nor a name the cloud assigned.
			body := string(data)
			lost := strings.Contains(body, annotationCreateSucceeded) || strings.Contains(body, annotationCreateFailed) ||
				strings.Contains(body, AnnotationExternalName) && !strings.Contains(body, AnnotationCreatePending)
			if err == nil && lost {
				return errors.New("injected: lost the create outcome")
			}
			return cl.Patch(ctx, obj, patch, opts...)
		},
	})
}

func asWithWatch(c client.Client) client.WithWatch {
	if w, ok := c.(client.WithWatch); ok {
		return w
	}
	panic("client cannot watch")
}

const crashTrials = 20

// TestCrashWindowAdopts checks that with deterministic names a lost create
// outcome never leads to a second Create: the next pass finds the bucket
// and adopts it.
func TestCrashWindowAdopts(t *testing.T) {
	cl := newCloud()
	e := start(t, cl, failOutcome)
	for i := range crashTrials {
		e.create(fmt.Sprintf("crash-%d", i), 1, "", nil)
	}
	for i := range crashTrials {
		b := e.wait(fmt.Sprintf("crash-%d", i), converged)
		if _, ok := b.Annotations[AnnotationCreatePending]; !ok {
			t.Errorf("%s: annotations %v lack %s", b.Name, b.Annotations, AnnotationCreatePending)
		}
	}
	cl.set(func(c *cloud) {
		if len(c.creates) != crashTrials {
			t.Errorf("%d objects created buckets, want %d", len(c.creates), crashTrials)
		}
		for uid, n := range c.creates {
			if n != 1 {
				t.Errorf("object %s: %d creates, want 1", uid, n)
			}
		}
	})
}

// TestCrashWindowStops checks that with names the cloud assigns, a lost
// create outcome stops the object with CreateIncomplete and a message
// naming the annotation to remove, and never creates twice.
func TestCrashWindowStops(t *testing.T) {
	cl := newCloud()
	cl.assignNames = true
	e := start(t, cl, failOutcome, WithProviderNames())
	// clock only observes: it creates nothing, and its polls measure the
	// window below.
	e.create("clock", 1, "", annotated(AnnotationManagementPolicies, string(policyObserve)))
	for i := range crashTrials {
		e.create(fmt.Sprintf("lost-%d", i), 1, "", nil)
	}
	incomplete := map[string]cond{
		conditions.TypeReady:   {metav1.ConditionFalse, ReasonCreateIncomplete},
		defaultConditionSynced: {metav1.ConditionFalse, ReasonCreateIncomplete},
	}
	for i := range crashTrials {
		b := e.wait(fmt.Sprintf("lost-%d", i), incomplete)
		msg := conditions.Find(b.Status.Conditions, defaultConditionSynced).Message
		if !strings.Contains(msg, AnnotationCreatePending) || !strings.Contains(msg, "check the external system") {
			t.Errorf("%s: Synced message %q does not say what to check and which annotation to remove", b.Name, msg)
		}
	}
	// Stopped means stopped: no further creates, neither in a pass that
	// a change of the object brings nor in the window of 500ms and 3 polls
	// of the clock that follows.
	for i := range crashTrials {
		e.touch(fmt.Sprintf("lost-%d", i), "stopped")
	}
	e.window("clock", 500*time.Millisecond, 3)
	cl.set(func(c *cloud) {
		if len(c.creates) != crashTrials || len(c.buckets) != crashTrials {
			t.Errorf("%d objects created %d buckets, want %d", len(c.creates), len(c.buckets), crashTrials)
		}
		for uid, n := range c.creates {
			if n != 1 {
				t.Errorf("object %s: %d creates, want 1", uid, n)
			}
		}
	})
}

// TestEventualConsistency checks that a cloud that hides a new bucket for a
// while causes no second Create.
func TestEventualConsistency(t *testing.T) {
	cl := newCloud()
	cl.lag = 2 * time.Second
	e := start(t, cl, nil)
	e.create("slow", 1, "", nil)
	bosuntest.Eventually(t, func(ctx context.Context) error {
		b := &v1.Bucket{}
		if err := e.c.Get(ctx, e.key("slow"), b); err != nil {
			return err
		}
		return checkConditions(b, map[string]cond{
			conditions.TypeReady:      {metav1.ConditionFalse, ReasonCreating},
			defaultConditionAvailable: {metav1.ConditionFalse, ReasonCreating},
			defaultConditionSynced:    {metav1.ConditionTrue, ReasonReconcileSuccess},
		})
	})
	e.wait("slow", converged)
	if c, _, _ := cl.counts(); c != 1 {
		t.Errorf("%d creates, want 1", c)
	}
	if o := cl.observed(); o < 5 {
		t.Errorf("%d observations during the lag, want the step to have looked again several times", o)
	}
}

// TestCreateErrors checks Synced and Ready reasons for failing creates:
// a failure worth retrying backs off rather than looping hot, and recovers;
// an invalid spec is not retried.
func TestCreateErrors(t *testing.T) {
	cl := newCloud()
	cl.failCreate = errors.New("cloud is down")
	e := start(t, cl, nil)
	e.create("flaky", 1, "", nil)
	failing := map[string]cond{
		conditions.TypeReady:   {metav1.ConditionFalse, ReasonCreateFailed},
		defaultConditionSynced: {metav1.ConditionFalse, ReasonCreateFailed},
	}
	e.wait("flaky", failing)
	// An upper bound on the creates in a fixed time: a busy machine runs
	// fewer passes in it, which only makes the bound easier to keep.
	time.Sleep(2 * time.Second)
	if c, _, _ := cl.counts(); c > 15 {
		t.Errorf("%d creates in about 2s, want backoff to keep it low", c)
	}
	b := e.get("flaky")
	if _, ok := b.Annotations[annotationCreateFailed]; !ok {
		t.Errorf("annotations %v lack %s", b.Annotations, annotationCreateFailed)
	}
	cl.set(func(c *cloud) { c.failCreate = nil })
	// Nudge the object rather than wait out the backoff.
	e.change("flaky", func(b *v1.Bucket) { b.Labels = map[string]string{"nudge": "1"} })
	e.wait("flaky", converged)

	e.create("bad", -1, "", nil)
	e.wait("bad", map[string]cond{
		conditions.TypeReady:   {metav1.ConditionFalse, ReasonInvalidSpec},
		defaultConditionSynced: {metav1.ConditionFalse, ReasonInvalidSpec},
	})
	uid := string(e.get("bad").UID)
	// No retry in 1s and 3 polls of the converged flaky.
	e.window("flaky", time.Second, 3)
	cl.set(func(c *cloud) {
		if c.creates[uid] != 1 {
			t.Errorf("invalid spec: %d creates, want 1 (terminal, not retried)", c.creates[uid])
		}
	})
}

// TestPanicInClient checks that a panicking client is reported with reason
// Panic on Synced and Ready.
func TestPanicInClient(t *testing.T) {
	cl := newCloud()
	cl.panicObserve = true
	e := start(t, cl, nil)
	e.create("boom", 1, "", nil)
	e.wait("boom", map[string]cond{
		conditions.TypeReady:   {metav1.ConditionFalse, conditions.ReasonPanic},
		defaultConditionSynced: {metav1.ConditionFalse, conditions.ReasonPanic},
	})
	cl.set(func(c *cloud) { c.panicObserve = false })
	e.change("boom", func(b *v1.Bucket) { b.Labels = map[string]string{"nudge": "1"} })
	e.wait("boom", converged)
}

// TestSecretsStayOut checks that connection details, those of Create and
// those of a credential repair, reach the Secret and no log line and no
// event.
func TestSecretsStayOut(t *testing.T) {
	cl := newCloud()
	e := start(t, cl, nil)
	e.create("sec", 1, "sec-conn", nil)
	bucket := nameOf(e.wait("sec", converged))
	created := e.waitCredentials("sec-conn", bucket)
	e.change("sec", func(b *v1.Bucket) { b.Spec.Size = 4 })
	e.wait("sec", converged)
	if err := e.c.Delete(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "sec-conn"}}); err != nil {
		t.Fatal(err)
	}
	repaired := e.waitCredentials("sec-conn", bucket)
	e.delete("sec")
	e.waitGone("sec")

	passwords := []string{string(created), string(repaired)}
	for _, l := range e.logs.Entries() {
		for _, password := range passwords {
			if strings.Contains(l.String(), password) {
				t.Errorf("log line holds a password: %s", l)
			}
		}
	}
	var evs eventsv1.EventList
	if err := e.c.List(t.Context(), &evs, client.InNamespace(e.ns)); err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) == 0 {
		t.Error("no events recorded, want some to scan")
	}
	for _, ev := range evs.Items {
		for _, password := range passwords {
			if strings.Contains(ev.Note, password) || strings.Contains(ev.Reason, password) {
				t.Errorf("event holds a password: %s %s", ev.Reason, ev.Note)
			}
		}
	}
}

// TestSecretUpdatedOnlyWhenChanged checks that the Secret is written when
// its data changes and not otherwise.
func TestSecretUpdatedOnlyWhenChanged(t *testing.T) {
	cl := newCloud()
	e := start(t, cl, nil)
	e.create("sw", 1, "sw-conn", nil)
	e.wait("sw", converged)
	sec, err := e.secret(t.Context(), "sw-conn")
	if err != nil {
		t.Fatal(err)
	}
	// Someone removes a key: the next poll puts it back.
	delete(sec.Data, "endpoint")
	if err := e.c.Update(t.Context(), sec); err != nil {
		t.Fatal(err)
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		s, err := e.secret(ctx, "sw-conn")
		if err != nil {
			return err
		}
		if string(s.Data["endpoint"]) != "https://cloud.test/"+e.ns+".sw" || string(s.Data["password"]) != "pw-"+e.ns+".sw-s3cr3t" {
			return fmt.Errorf("secret keys %v", sortedKeys(s.Data))
		}
		return nil
	})
	// Once the passes that repaired the Secret have ended, the polls that
	// follow (1s, and at least 3 of them) leave the Secret alone.
	e.touch("sw", "repaired")
	e.writes.Reset()
	e.window("sw", time.Second, 3)
	if n := e.writes.Counts()["update Secret"]; n != 0 {
		t.Errorf("%d secret updates while unchanged, want none", n)
	}
}

// counterValue returns the drift corrections counted, in
// controller-runtime's registry, for step under controller.
func counterValue(t *testing.T, controller, step string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != metricDriftCorrections {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelsOf(m) == (metricLabelValues{controller: controller, step: step}) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// metricLabelValues are the labels of a series of the step.
type metricLabelValues struct{ controller, step string }

func labelsOf(m *dto.Metric) metricLabelValues {
	var l metricLabelValues
	for _, p := range m.GetLabel() {
		switch p.GetName() {
		case "controller":
			l.controller = p.GetValue()
		case "step":
			l.step = p.GetValue()
		}
	}
	return l
}

// TestFailedCreateWithFailedRecordStaysVisible makes every Create fail and
// every write of its outcome fail too: Synced and Ready show the create's
// error, CreateFailed, with the failed record named in the message, pass
// after pass, rather than the engine's write failure or a resource
// "being created".
func TestFailedCreateWithFailedRecordStaysVisible(t *testing.T) {
	cl := newCloud()
	cl.failCreate = errors.New("cloud is down")
	e := start(t, cl, failOutcomeOnly, WithTiming(Timing{CreationGrace: time.Minute}))
	e.create("failing", 1, "", nil)
	failing := map[string]cond{
		conditions.TypeReady:   {metav1.ConditionFalse, ReasonCreateFailed},
		defaultConditionSynced: {metav1.ConditionFalse, ReasonCreateFailed},
	}
	b := e.wait("failing", failing)
	msg := conditions.Find(b.Status.Conditions, defaultConditionSynced).Message
	if !strings.Contains(msg, "cloud is down") || !strings.Contains(msg, "recording") || !strings.Contains(msg, "injected") {
		t.Errorf("Synced message %q does not hold the create's error and the failed record", msg)
	}
	// Several more creates, each failing and each unrecorded: the object
	// says so all along.
	var seen []string
	bosuntest.Eventually(t, func(ctx context.Context) error {
		b := &v1.Bucket{}
		if err := e.c.Get(ctx, e.key("failing"), b); err != nil {
			return err
		}
		if err := checkConditions(b, failing); err != nil {
			seen = append(seen, err.Error())
		}
		if c, _, _ := cl.counts(); c < 3 {
			return fmt.Errorf("%d creates so far, want 3", c)
		}
		return nil
	})
	if len(seen) > 0 {
		t.Errorf("the failed create was hidden %d times, first: %s", len(seen), seen[0])
	}
}
