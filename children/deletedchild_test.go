package children

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
)

// countedReader counts the reads of ConfigMaps through the Reader it wraps:
// the step's reads of the API server, when it is the reconciler's
// APIReader.
type countedReader struct {
	client.Reader
	gets *atomic.Int64
}

// Get counts a read of a ConfigMap and makes it.
func (r countedReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.ConfigMap); ok {
		r.gets.Add(1)
	}
	return r.Reader.Get(ctx, key, obj, opts...)
}

// observedPass is what deleteAfterUpdate saw of one pass of the Widget that
// began after it deleted the child.
type observedPass struct {
	// configMapReady and ready are the Widget's conditions at the end of
	// the pass, as the engine saves them or leaves them saved.
	configMapReady, ready *metav1.Condition
	// present tells that the child was on the API server once the pass
	// had ended.
	present bool
	// gets and applies are the step's reads of ConfigMaps from the API
	// server and its applies of ConfigMaps during the pass.
	gets, applies int64
}

// deleteAfterUpdate deletes the ConfigMap cm-0 of a Widget as a user
// would, right after the pass in which the children step updated it, and
// then records each pass of the Widget. Its Apply interceptor, on the
// step's client, tells the pass of the update; as a PassObserver, told on
// the reconciler's worker at the end of each pass, it deletes the child
// at the end of that pass with the test's own client and waits until the
// manager's cache shows it gone before it returns, so the next pass
// surely starts on a cache that shows the delete.
type deleteAfterUpdate struct {
	gets, applies atomic.Int64

	mu sync.Mutex
	// c is the test's client; cache the manager's cache; key the Widget's.
	c     client.Client
	cache client.Reader
	key   client.ObjectKey
	// armed is set once the Widget converged before the change.
	armed bool
	// updated is set by the apply of cm-0 that follows arming; deleted
	// once the observer deleted cm-0 after that pass.
	updated, deleted bool
	passes           []observedPass
	err              error
}

// arm starts watching for the update of cm-0 in key's namespace.
func (d *deleteAfterUpdate) arm(c client.Client, cache client.Reader, key client.ObjectKey) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.c, d.cache, d.key, d.armed = c, cache, key, true
}

// wrap is the interceptor on the step's client: it counts the step's
// applies of ConfigMaps and notes the one of cm-0 once armed.
func (d *deleteAfterUpdate) wrap(c client.Client) client.Client {
	return interceptor.NewClient(c.(client.WithWatch), interceptor.Funcs{
		Apply: func(ctx context.Context, cl client.WithWatch, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			if err := cl.Apply(ctx, obj, opts...); err != nil {
				return err
			}
			u, ok := obj.(interface {
				GetKind() string
				GetName() string
			})
			if !ok || u.GetKind() != "ConfigMap" {
				return nil
			}
			d.applies.Add(1)
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.armed && u.GetName() == "cm-0" {
				d.updated = true
			}
			return nil
		},
	})
}

// ObservePass deletes cm-0 at the end of the pass that updated it, and
// records the passes after.
func (d *deleteAfterUpdate) ObservePass(ctx context.Context, r bosun.PassReport) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.armed || !d.updated || r.Object != d.key || d.err != nil {
		return
	}
	child := client.ObjectKey{Namespace: d.key.Namespace, Name: "cm-0"}
	if !d.deleted {
		d.deleted = true
		if err := d.c.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: child.Namespace, Name: child.Name}}); err != nil {
			d.err = fmt.Errorf("deleting cm-0: %w", err)
			return
		}
		d.err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			err := d.cache.Get(ctx, child, &corev1.ConfigMap{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
		d.gets.Store(0)
		d.applies.Store(0)
		return
	}
	if len(r.Steps) == 0 {
		// A pass that ran no step (it waited for the cache to show the
		// engine's own write) applied nothing and judged nothing: its
		// conditions are the stored ones, of the pass before.
		return
	}
	p := observedPass{
		configMapReady: conditions.Find(r.Conditions, "ConfigMapReady"),
		ready:          conditions.Find(r.Conditions, conditions.TypeReady),
		gets:           d.gets.Swap(0),
		applies:        d.applies.Swap(0),
	}
	err := d.c.Get(ctx, child, &corev1.ConfigMap{})
	switch {
	case err == nil:
		p.present = true
	case !apierrors.IsNotFound(err):
		d.err = fmt.Errorf("reading cm-0: %w", err)
	}
	d.passes = append(d.passes, p)
}

// result returns the passes recorded after the delete, or why the
// observer failed.
func (d *deleteAfterUpdate) result() ([]observedPass, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]observedPass(nil), d.passes...), d.err
}

// TestChildDeletedAfterItsUpdateComesBack changes a Widget's spec, which
// makes the children step update its ConfigMap cm-0 (and create cm-1),
// and deletes cm-0 as a user would at the end of that pass, well within
// the step's cache grace, once the manager's cache shows the delete (or,
// in the second case, with the step's reads showing the ConfigMaps as
// they were before the change, as a cache that missed the watch events
// does until its next relist). The first pass after the delete that runs
// the steps (not one that only waits for the cache to show the engine's
// own write) creates cm-0 again, with one read of the API server and one
// apply, and no such pass ends with ConfigMapReady or Ready True while
// cm-0 is gone. Before the
// fix the passes of the next 5 s judged cm-0 from the answer of the
// update and said Ready, with cm-0 gone, until the grace was over.
//
// The budget: one read of the API server per child the cache shows
// missing or behind the step's apply of it, within the grace; none in a
// pass over a converged Widget.
func TestChildDeletedAfterItsUpdateComesBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		// frozen shows the ConfigMaps to the step as they were before
		// the change.
		frozen bool
	}{
		{name: "cache shows it gone"},
		{name: "cache shows it as before the update", frozen: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp := shared.ControlPlane(t)
			d := &deleteAfterUpdate{}
			step := NewStep("web", webApp, []Kind{Of(&corev1.ConfigMap{})})
			r := reconciler(step)
			r.APIReader = countedReader{Reader: cp.Client, gets: &d.gets}
			r.Options.Observers = []bosun.PassObserver{d}
			f := &frozen{}
			wraps := []func(client.Client) client.Client{d.wrap}
			if tc.frozen {
				wraps = append(wraps, f.wrap)
			}
			e := start(t, r, wraps...)
			e.create("gone", 1, 0)
			e.waitConfigMaps(e.ns, map[string]string{"cm-0": "1"})
			e.waitConditions("gone", map[string]cond{conditions.TypeReady: {metav1.ConditionTrue, conditions.ReasonSucceeded}})

			// Converged: passes that have nothing to do read nothing
			// from the API server and write nothing.
			e.touch("gone", "settled")
			e.writes.Reset()
			d.gets.Store(0)
			for i := range 3 {
				e.touch("gone", fmt.Sprint(i))
			}
			if n := d.gets.Load(); n != 0 {
				t.Errorf("%d reads of ConfigMaps from the API server by passes over a converged Widget, want 0", n)
			}
			if n := e.writes.Total(); n != 0 {
				t.Errorf("%d writes by passes over a converged Widget, want 0: %v", n, e.writes.Writes())
			}

			key := client.ObjectKey{Namespace: e.ns, Name: "gone"}
			d.arm(cp.Client, e.mgr.GetCache(), key)
			if tc.frozen {
				// Long enough to outlast the passes the test counts.
				f.freeze(t, e.c, e.ns, time.Minute)
			}
			e.setSpec("gone", 2, 0)
			bosuntest.Eventually(t, func(context.Context) error {
				passes, err := d.result()
				switch {
				case err != nil:
					return err
				case len(passes) == 0:
					return fmt.Errorf("no pass after cm-0 was deleted yet")
				}
				return nil
			}, bosuntest.Timeout(30*time.Second))
			// Every pass the update and the delete brought has ended.
			e.touch("gone", "after-delete")

			passes, err := d.result()
			if err != nil {
				t.Fatal(err)
			}
			first := passes[0]
			if !first.present || first.applies != 1 {
				t.Errorf("the first pass after cm-0 was deleted made %d applies and left cm-0 present=%t, want it created again (1 apply)", first.applies, first.present)
			}
			if first.gets != 1 {
				t.Errorf("the first pass after cm-0 was deleted read %d ConfigMaps from the API server, want 1 (cm-0, which the cache does not show as applied; not cm-1)", first.gets)
			}
			var applies int64
			for i, p := range passes {
				applies += p.applies
				if p.gets > 1 {
					t.Errorf("pass %d after the delete read %d ConfigMaps from the API server, want at most 1 (cm-0)", i+1, p.gets)
				}
				if p.present {
					continue
				}
				for _, c := range []*metav1.Condition{p.configMapReady, p.ready} {
					if c != nil && c.Status == metav1.ConditionTrue {
						t.Errorf("pass %d after the delete: the Widget says %s True for generation %d while its ConfigMap cm-0 is gone", i+1, c.Type, c.ObservedGeneration)
					}
				}
			}
			if applies != 1 {
				t.Errorf("%d applies of ConfigMaps in %d passes after the delete, want 1 (cm-0 created again)", applies, len(passes))
			}
			e.waitConfigMaps(e.ns, map[string]string{"cm-0": "2", "cm-1": "2"})
		})
	}
}
