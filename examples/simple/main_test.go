package simple

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
)

// shared is the control plane, with the Simple CRD installed, that the
// envtest tests of this package share. Each test runs its own manager and
// works in a namespace of its own.
var shared = bosuntest.Shared{Options: controlplane.OptionsFor(AddToScheme, CRDs)}

func TestMain(m *testing.M) { shared.Main(m) }

// runController runs the Simple controller, set up as the demo sets it up,
// until the test ends. wrap, when not nil, wraps the client the controller
// writes through.
func runController(t *testing.T, wrap func(client.Client) client.WithWatch) *controlplane.ControlPlane {
	t.Helper()
	cp, _ := runWatched(t, wrap)
	return cp
}

// runWatched is runController, and returns the record of the controller's
// passes too.
func runWatched(t *testing.T, wrap func(client.Client) client.WithWatch) (*controlplane.ControlPlane, *passes) {
	t.Helper()
	cp := shared.ControlPlane(t)
	p := &passes{}
	bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		bosun.ObservationOf(mgr).AddObserver(p)
		c := p.wrap(mgr.GetClient())
		if wrap != nil {
			c = wrap(c)
		}
		return SetupWithManager(bosuntest.ManagerWithClient(mgr, c))
	})
	return cp, p
}

// labelTouch is the label touch changes on a Simple to bring a pass.
const labelTouch = "test.bosun.dev/touch"

// passes records the passes of a controller, and when it first loaded each
// Simple with each value of the label labelTouch, so that a test can wait
// for the pass that saw a change it made.
type passes struct {
	mu      sync.Mutex
	reports []bosun.PassReport
	// loaded maps "name value" to when the Simple name was first loaded
	// with labelTouch set to value.
	loaded map[string]time.Time
}

// ObservePass implements bosun.PassObserver.
func (p *passes) ObservePass(_ context.Context, r bosun.PassReport) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reports = append(p.reports, r)
}

// wrap returns c, noting the Simples its Gets load.
func (p *passes) wrap(c client.Client) client.Client { return &loadNoter{Client: c, p: p} }

// loadNoter is a client that notes in p when it loads a Simple with the
// label labelTouch.
type loadNoter struct {
	client.Client
	p *passes
}

func (l *loadNoter) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := l.Client.Get(ctx, key, obj, opts...)
	v, ok := obj.GetLabels()[labelTouch]
	if _, simple := obj.(*simplev1.Simple); !simple || !ok || err != nil {
		return err
	}
	l.p.mu.Lock()
	defer l.p.mu.Unlock()
	if l.p.loaded == nil {
		l.p.loaded = map[string]time.Time{}
	}
	if _, seen := l.p.loaded[key.Name+" "+v]; !seen {
		l.p.loaded[key.Name+" "+v] = time.Now()
	}
	return err
}

// sawEnd reports whether the pass that first loaded the Simple name with
// labelTouch set to value has ended.
func (p *passes) sawEnd(name, value string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	at, ok := p.loaded[name+" "+value]
	if !ok {
		return fmt.Errorf("no pass has loaded %s with %s=%s yet", name, labelTouch, value)
	}
	for _, r := range p.reports {
		if r.Object.Name == name && !r.Start.After(at) && !r.Start.Add(r.Duration).Before(at) {
			return nil
		}
	}
	return fmt.Errorf("the pass that loaded %s with %s=%s has not ended yet", name, labelTouch, value)
}

// touch sets the label labelTouch of the Simple at key to value and waits
// until the pass of the controller p records that loaded it so has ended.
// The watch delivers the events of one Simple in order, so by then the
// passes that its earlier changes (the controller's own writes among them)
// brought have ended too.
func touch(t *testing.T, c client.Client, p *passes, key client.ObjectKey, value string) {
	t.Helper()
	s := &simplev1.Simple{}
	if err := c.Get(t.Context(), key, s); err != nil {
		t.Fatalf("get simple %s: %v", key.Name, err)
	}
	base := s.DeepCopy()
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Labels[labelTouch] = value
	if err := c.Patch(t.Context(), s, client.MergeFrom(base)); err != nil {
		t.Fatalf("touch simple %s: %v", key.Name, err)
	}
	bosuntest.Eventually(t, func(context.Context) error { return p.sawEnd(key.Name, value) })
}

// window returns once at least d has gone by and the Simple at clock has
// had at least n reconciles since the call, as counter counts them,
// changing a label of clock on each check to bring them. It is the time a
// test gives something to happen that must not, measured in the
// controller's passes as well as in time: on a busy machine, where passes
// come slower, it grows with them rather than end before the controller did
// anything.
func window(t *testing.T, c client.Client, counter *bosuntest.ReconcileCounter, clock client.ObjectKey, d time.Duration, n int) {
	t.Helper()
	start, base := time.Now(), counter.Count(clock)
	tick := 0
	bosuntest.Eventually(t, func(ctx context.Context) error {
		got := counter.Count(clock) - base
		if got >= n && time.Since(start) >= d {
			return nil
		}
		s := &simplev1.Simple{}
		if err := c.Get(ctx, clock, s); err != nil {
			return err
		}
		base := s.DeepCopy()
		tick++
		s.Labels = map[string]string{"test.bosun.dev/tick": fmt.Sprint(tick)}
		if err := c.Patch(ctx, s, client.MergeFrom(base)); err != nil {
			return err
		}
		return fmt.Errorf("%d reconciles of %s in %s, want %d and at least %s", got, clock.Name, time.Since(start).Round(time.Millisecond), n, d)
	}, bosuntest.Timeout(5*time.Minute), bosuntest.Interval(200*time.Millisecond))
}

// createSimple creates a Simple in namespace ns.
func createSimple(t *testing.T, c client.Client, ns, name string, dividend, divisor int64) client.ObjectKey {
	t.Helper()
	s := &simplev1.Simple{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       simplev1.SimpleSpec{Dividend: dividend, Divisor: divisor},
	}
	if err := c.Create(t.Context(), s); err != nil {
		t.Fatalf("create simple %s: %v", name, err)
	}
	return client.ObjectKeyFromObject(s)
}

// condition describes a condition by the fields the tests check.
type condition struct {
	Status metav1.ConditionStatus
	Reason string
}

// waitStatus waits until the Simple at key has the Ready and DivisorValid
// conditions given, both for its current generation, as well as
// status.observedGeneration, and returns it.
func waitStatus(t *testing.T, c client.Client, key client.ObjectKey, ready, divisorValid condition) *simplev1.Simple {
	t.Helper()
	var got *simplev1.Simple
	bosuntest.Eventually(t, func(ctx context.Context) error {
		s := &simplev1.Simple{}
		if err := c.Get(ctx, key, s); err != nil {
			return err
		}
		if s.Status.ObservedGeneration != s.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", s.Status.ObservedGeneration, s.Generation)
		}
		for typ, want := range map[string]condition{conditions.TypeReady: ready, simplev1.ConditionDivisorValid: divisorValid} {
			cond := conditions.Find(s.Status.Conditions, typ)
			switch {
			case cond == nil:
				return errors.New("no " + typ + " condition")
			case cond.Status != want.Status || cond.Reason != want.Reason:
				return fmt.Errorf("%s is %s/%s (%q), want %s/%s", typ, cond.Status, cond.Reason, cond.Message, want.Status, want.Reason)
			case cond.ObservedGeneration != s.Generation:
				return fmt.Errorf("%s describes generation %d, object is at %d", typ, cond.ObservedGeneration, s.Generation)
			}
		}
		got = s
		return nil
	})
	return got
}
