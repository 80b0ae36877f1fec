package managed

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// Seams of WithAnnotationPrefix with the rest of the managed step.

// secondPrefix is the annotation prefix of the second step in these tests.
const secondPrefix = "second.bosun.dev"

// bothConverged are the conditions of a Bucket whose two steps (the
// default one and "second") are both in line with their resources.
var bothConverged = map[string]cond{
	defaultConditionSynced:    {metav1.ConditionTrue, ReasonReconcileSuccess},
	defaultConditionAvailable: {metav1.ConditionTrue, ReasonAvailable},
	"SecondSynced":            {metav1.ConditionTrue, ReasonReconcileSuccess},
	"SecondAvailable":         {metav1.ConditionTrue, ReasonAvailable},
}

// secondStep returns the rig of two steps on one Bucket: the default one
// in first and, joined after it, a step named "second" with condition
// types and annotation prefix of its own whose cloud assigns the names,
// connecting through connector, with extra options.
func secondStep(connector Connector[*v1.Bucket], extra ...Option) rig {
	return rig{step: func(s *Step[*v1.Bucket]) bosun.Step[*v1.Bucket] {
		opts := append(testOpts(), WithName("second"), WithConditionTypes("SecondSynced", "SecondAvailable"),
			WithAnnotationPrefix(secondPrefix), WithProviderNames())
		return bosun.Join[*v1.Bucket](s, NewStep[*v1.Bucket](connector, append(opts, extra...)...))
	}}
}

// seeingConnector is a cloud's Connector that records the external name
// (ExternalName) of the object it is handed at each Connect, as a
// Connector does that validates the name or picks an endpoint by it (see
// examples/postgres: RoleConnector refuses a deleted Role whose name is
// invalid).
type seeingConnector struct {
	*cloud
	mu   sync.Mutex
	seen []string
}

func (s *seeingConnector) Connect(ctx context.Context, obj *v1.Bucket) (ExternalClient[*v1.Bucket], error) {
	s.mu.Lock()
	s.seen = append(s.seen, ExternalName(obj))
	s.mu.Unlock()
	return s.cloud.Connect(ctx, obj)
}

func (s *seeingConnector) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// TestPrefixConnectorSeesItsOwnName: the Connector of a step with an
// annotation prefix is handed the object with the step's own external
// name under AnnotationExternalName, as its ExternalClient's calls are.
// Seen failing before the fix: Connect was handed the default step's
// name, and a Connector that reads ExternalName, as the example's do,
// judged the other step's resource.
func TestPrefixConnectorSeesItsOwnName(t *testing.T) {
	first, second := newCloud(), newCloud()
	second.assignNames = true
	conn := &seeingConnector{cloud: second}
	e := startRig(t, first, secondStep(conn))
	e.create("pair", 1, "", nil)
	b := e.wait("pair", bothConverged)
	mine := b.Annotations[secondPrefix+"/external-name"]
	if mine == "" {
		t.Fatalf("annotations %v lack the second step's name", b.Annotations)
	}
	// The passes of the polls that follow connect with both names
	// recorded.
	from := len(conn.names())
	bosuntest.Eventually(t, func(context.Context) error {
		if n := len(conn.names()) - from; n < 2 {
			return fmt.Errorf("%d connects since convergence, want 2", n)
		}
		return nil
	})
	for _, got := range conn.names()[from:] {
		if got != mine {
			t.Fatalf("the second step's Connector was handed the object with external name %q (the first step's is %q), want its own %q",
				got, ExternalName(b), mine)
		}
	}
}

// TestPrefixStepsSharingASecretAreRefused: two managed steps on one
// Bucket, the second with a prefix of its own, both configured to publish
// to the Bucket's connection Secret (spec.connectionSecret, as testOpts
// does for every step). The Secret is the first step's; the second
// refuses to write it, with a clear reason, rather than writing its
// endpoint and password over the first's at every pass: the Secret is
// not written while the Bucket settles, and its password still opens the
// first bucket. Seen failing before the fix: 78 and 126 updates of the
// Secret in the window, its password the second bucket's.
func TestPrefixStepsSharingASecretAreRefused(t *testing.T) {
	first, second := newCloud(), newCloud()
	second.assignNames = true
	e := startRig(t, first, secondStep(second))
	e.create("pair", 1, "pair-conn", nil)
	b := e.wait("pair", map[string]cond{
		defaultConditionSynced:    {metav1.ConditionTrue, ReasonReconcileSuccess},
		defaultConditionAvailable: {metav1.ConditionTrue, ReasonAvailable},
		"SecondSynced":            {metav1.ConditionFalse, ReasonConnectionSecretFailed},
	})
	if msg := conditionMessage(b, "SecondSynced"); !strings.Contains(msg, "published by another managed step") {
		t.Errorf("SecondSynced says %q, want it to name the other step's Secret", msg)
	}
	e.touch("pair", "settled")
	e.writes.Reset()
	e.window("pair", time.Second, 3)
	if n := e.writes.Counts()["update Secret"]; n != 0 {
		t.Errorf("connection Secret pair-conn updated %d times while the first resource is converged, want none", n)
	}
	sec, err := e.secret(t.Context(), "pair-conn")
	if err != nil {
		t.Fatal(err)
	}
	if !first.login(ExternalName(b), sec.Data["password"]) {
		t.Errorf("the Secret's password no longer opens the first bucket %q", ExternalName(b))
	}
	e.delete("pair")
	e.waitGone("pair")
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if _, err := e.secret(ctx, "pair-conn"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("connection Secret: %w, want NotFound", err)
		}
		return nil
	})
}

// conditionMessage returns the message of b's condition typ.
func conditionMessage(b *v1.Bucket, typ string) string {
	if c := conditions.Find(b.Status.Conditions, typ); c != nil {
		return c.Message
	}
	return ""
}

// TestPrefixStepsOfOneSystemNeedNamesOfTheirOwn: two managed steps on one
// Bucket in one external system each get a resource of their own when
// the second also chooses names of its own (WithExternalName), as the
// package documentation asks: both clients mark the resources with the
// object's Identity, so the external name is all that tells them apart.
func TestPrefixStepsOfOneSystemNeedNamesOfTheirOwn(t *testing.T) {
	cl := newCloud()
	e := startRig(t, cl, rig{step: func(s *Step[*v1.Bucket]) bosun.Step[*v1.Bucket] {
		return bosun.Join[*v1.Bucket](s, NewStep[*v1.Bucket](cl, append(testOpts(), WithName("second"),
			WithConditionTypes("SecondSynced", "SecondAvailable"), WithAnnotationPrefix(secondPrefix),
			WithExternalName(func(o client.Object) string { return "second-" + NameFromNamespacedName(o) }))...))
	}})
	e.create("pair", 1, "", nil)
	b := e.wait("pair", bothConverged)
	firstName, secondName := ExternalName(b), b.Annotations[secondPrefix+"/external-name"]
	if c, _, _ := cl.counts(); firstName == secondName || c != 2 || len(cl.live()) != 2 {
		t.Errorf("the two steps record external names %q and %q and the cloud saw %d creates, holding %v: want two resources, one per step",
			firstName, secondName, c, cl.live())
	}
	e.delete("pair")
	e.waitGone("pair")
	if got := cl.live(); len(got) != 0 {
		t.Errorf("cloud still holds %v after the object is gone", got)
	}
}
