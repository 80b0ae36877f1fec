package rwexternal

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	rwv1 "github.com/bosunkit/bosun/examples/rwexternal/api/v1alpha1"
)

// shared is the control plane, with the RWExternal CRD installed, that the
// envtest tests of this package share. Each test runs its own manager and
// works in a namespace of its own.
var shared = bosuntest.Shared{Options: controlplane.OptionsFor(AddToScheme, CRDs)}

func TestMain(m *testing.M) { shared.Main(m) }

// runController runs the RWExternal controller, set up as the demo sets it
// up, until the test ends. wrap, when not nil, wraps the client the
// controller writes through.
func runController(t *testing.T, wrap func(client.Client) client.WithWatch) *controlplane.ControlPlane {
	t.Helper()
	cp, _ := runWatched(t, wrap)
	return cp
}

// runWatched is runController, and returns the record of the controller's
// passes too.
func runWatched(t *testing.T, wrap func(client.Client) client.WithWatch) (*controlplane.ControlPlane, *watched) {
	t.Helper()
	cp := shared.ControlPlane(t)
	p := &watched{ReconcileCounter: &bosuntest.ReconcileCounter{}}
	p.mgr = bosuntest.RunManager(t, cp, func(mgr ctrl.Manager) error {
		bosun.ObservationOf(mgr).AddObserver(bosun.PassObserverFunc(func(_ context.Context, r bosun.PassReport) {
			p.Record(bosuntest.ReconcileCall{Request: reconcile.Request{NamespacedName: r.Object}, Start: r.Start, Duration: r.Duration})
		}))
		var c client.Client = p.WrapClient(mgr.GetClient())
		if wrap != nil {
			c = wrap(c)
		}
		return SetupWithManager(bosuntest.ManagerWithClient(mgr, c))
	})
	return cp, p
}

// watched is the record of a controller's passes, which notes the
// RWExternals the controller loads for its Touch, and the controller's
// manager.
type watched struct {
	*bosuntest.ReconcileCounter
	mgr ctrl.Manager
}

// touch is p's Touch of the RWExternal name.
func (e *env) touch(p *watched, name, value string) {
	e.t.Helper()
	p.Touch(e.t, e.c, &rwv1.RWExternal{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}}, value)
}

// waitCached waits until the cache of the controller's manager holds the
// Secret name.
func (e *env) waitCached(p *watched, name string) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		return p.mgr.GetClient().Get(ctx, e.key(name), &corev1.Secret{})
	})
}

// env is one test's client and namespace.
type env struct {
	t  *testing.T
	c  client.Client
	ns string
}

func newEnv(t *testing.T, cp *controlplane.ControlPlane) *env {
	return &env{t: t, c: cp.Client, ns: bosuntest.Namespace(t, cp.Client)}
}

func (e *env) key(name string) client.ObjectKey { return client.ObjectKey{Namespace: e.ns, Name: name} }

// setInput creates or replaces the input Secret name with data.
func (e *env) setInput(name string, data map[string]string) {
	e.t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}}
	err := e.c.Get(e.t.Context(), e.key(name), s)
	switch {
	case apierrors.IsNotFound(err):
		s.StringData = data
		err = e.c.Create(e.t.Context(), s)
	case err == nil:
		s.Data = nil
		s.StringData = data
		err = e.c.Update(e.t.Context(), s)
	}
	if err != nil {
		e.t.Fatalf("set input secret %s: %v", name, err)
	}
}

// create creates an RWExternal reading input, with the default output name
// and the given annotations.
func (e *env) create(name, input string, annotations map[string]string) *rwv1.RWExternal {
	e.t.Helper()
	rw := &rwv1.RWExternal{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name, Annotations: annotations},
		Spec:       rwv1.RWExternalSpec{InputSecret: input},
	}
	if err := e.c.Create(e.t.Context(), rw); err != nil {
		e.t.Fatalf("create rwexternal %s: %v", name, err)
	}
	return rw
}

// annotate sets (or, for an empty value, removes) an annotation of the
// RWExternal name.
func (e *env) annotate(name, key, value string) {
	e.t.Helper()
	rw := &rwv1.RWExternal{}
	if err := e.c.Get(e.t.Context(), e.key(name), rw); err != nil {
		e.t.Fatal(err)
	}
	base := rw.DeepCopy()
	ann := maps.Clone(rw.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	if value == "" {
		delete(ann, key)
	} else {
		ann[key] = value
	}
	rw.Annotations = ann
	if err := e.c.Patch(e.t.Context(), rw, client.MergeFrom(base)); err != nil {
		e.t.Fatalf("annotate rwexternal %s: %v", name, err)
	}
}

// condition describes a condition by the fields the tests check.
type condition struct {
	Status metav1.ConditionStatus
	Reason conditions.Reason
}

var (
	readyTrue  = condition{metav1.ConditionTrue, conditions.ReasonSucceeded}
	inputFound = condition{metav1.ConditionTrue, rwv1.ReasonInputFound}
	outputOK   = condition{metav1.ConditionTrue, rwv1.ReasonOutputUpToDate}
)

// converged is the conditions of an RWExternal whose output is written.
var converged = map[string]condition{
	conditions.TypeReady:      readyTrue,
	rwv1.ConditionInputReady:  inputFound,
	rwv1.ConditionOutputReady: outputOK,
}

// waitConditions waits until the RWExternal name has the conditions given,
// each for its current generation, and status.observedGeneration matches;
// it returns the RWExternal.
func (e *env) waitConditions(name string, want map[string]condition) *rwv1.RWExternal {
	e.t.Helper()
	var got *rwv1.RWExternal
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		rw := &rwv1.RWExternal{}
		if err := e.c.Get(ctx, e.key(name), rw); err != nil {
			return err
		}
		if rw.Status.ObservedGeneration != rw.Generation {
			return fmt.Errorf("observedGeneration %d, generation %d", rw.Status.ObservedGeneration, rw.Generation)
		}
		for typ, w := range want {
			c := conditions.Find(rw.Status.Conditions, typ)
			switch {
			case c == nil:
				return errors.New("no " + typ + " condition")
			case c.Status != w.Status || c.Reason != string(w.Reason):
				return fmt.Errorf("%s is %s/%s (%q), want %s/%s", typ, c.Status, c.Reason, c.Message, w.Status, w.Reason)
			case c.ObservedGeneration != rw.Generation:
				return fmt.Errorf("%s describes generation %d, object is at %d", typ, c.ObservedGeneration, rw.Generation)
			}
		}
		got = rw
		return nil
	})
	return got
}

// waitSkipped waits until the controller reports the RWExternal name under
// the skip policy: its Ready condition says so.
func (e *env) waitSkipped(name string) {
	e.t.Helper()
	want := fmt.Sprintf("reconcile policy %q", bosun.PolicySkip)
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		rw := &rwv1.RWExternal{}
		if err := e.c.Get(ctx, e.key(name), rw); err != nil {
			return err
		}
		if c := conditions.Find(rw.Status.Conditions, conditions.TypeReady); c == nil || !strings.HasPrefix(c.Message, want) {
			return fmt.Errorf("ready condition %v does not report the skip policy", c)
		}
		return nil
	})
}

// checkOutput checks that the Secret name exists, is marked as written for
// the RWExternal owner and holds the output derived from input.
func (e *env) checkOutput(ctx context.Context, name, owner string, input map[string]string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	if err := e.c.Get(ctx, e.key(name), s); err != nil {
		return nil, err
	}
	if got := s.Annotations[OwnerAnnotation]; got != owner {
		return nil, fmt.Errorf("output %s owner annotation %q, want %q", name, got, owner)
	}
	raw := map[string][]byte{}
	for k, v := range input {
		raw[k] = []byte(v)
	}
	want, err := Derive(raw)
	if err != nil {
		return nil, err
	}
	if diff := cmp.Diff(want, s.Data); diff != "" {
		return nil, fmt.Errorf("output %s data (-want +got):\n%s", name, diff)
	}
	return s, nil
}

// waitOutput waits until checkOutput succeeds and returns the Secret.
func (e *env) waitOutput(name, owner string, input map[string]string) *corev1.Secret {
	e.t.Helper()
	var s *corev1.Secret
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		var err error
		s, err = e.checkOutput(ctx, name, owner, input)
		return err
	})
	return s
}

// waitGone waits until obj's kind has no object with obj's key.
func (e *env) waitGone(obj client.Object) {
	e.t.Helper()
	bosuntest.Eventually(e.t, func(ctx context.Context) error {
		err := e.c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get %T %s: %w, want NotFound", obj, obj.GetName(), err)
	})
}

// missing reports whether the Secret name does not exist.
func (e *env) missing(name string) error {
	err := e.c.Get(e.t.Context(), e.key(name), &corev1.Secret{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return fmt.Errorf("get secret %s: %w, want NotFound", name, err)
}
