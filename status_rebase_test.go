package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// typeExternalCheck is the condition type the second controller of
// TestAnotherControllersConditionsSurvive owns.
const typeExternalCheck = "ExternalCheck"

// externalChecker is a second controller that owns the condition
// ExternalCheck on the engine's Widgets. Its writes to one Widget are made
// one at a time, as a controller's work queue makes them, and numbered:
// each message says the write's number and the generation it observed,
// "write 7 of generation 3", which the condition's observedGeneration
// repeats. It reads the Widget from the API server before each write.
type externalChecker struct {
	c client.Client
	// naive writes the whole list of conditions with a merge patch and no
	// resourceVersion, as a controller that writes its status carelessly
	// does: it never meets a conflict, and may put back conditions of the
	// engine as they were when it read them. Otherwise each write is
	// guarded by the version it read and made again on a conflict.
	naive bool

	mu     sync.Mutex
	locks  map[string]*sync.Mutex
	writes map[string]int
}

// lock takes the lock of the Widget name's writes.
func (x *externalChecker) lock(name string) func() {
	x.mu.Lock()
	if x.locks == nil {
		x.locks, x.writes = map[string]*sync.Mutex{}, map[string]int{}
	}
	l := x.locks[name]
	if l == nil {
		l = &sync.Mutex{}
		x.locks[name] = l
	}
	x.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// written is the number of the last write to the Widget name.
func (x *externalChecker) written(name string) int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.writes[name]
}

// check writes the next ExternalCheck of the Widget key.
func (x *externalChecker) check(ctx context.Context, key client.ObjectKey) error {
	defer x.lock(key.Name)()
	x.mu.Lock()
	x.writes[key.Name]++
	n := x.writes[key.Name]
	x.mu.Unlock()
	for {
		w := &testapi.Widget{}
		if err := x.c.Get(ctx, key, w); err != nil {
			return err
		}
		patch := client.MergeFromWithOptions(w.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if x.naive {
			patch = client.MergeFrom(w.DeepCopy())
		}
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{
			Type: typeExternalCheck, Status: metav1.ConditionTrue, Reason: "Checked",
			Message: fmt.Sprintf("write %d of generation %d", n, w.Generation), ObservedGeneration: w.Generation,
		})
		if err := x.c.Status().Patch(ctx, w, patch); !apierrors.IsConflict(err) {
			return err
		}
	}
}

// parseCheck reads the write number and generation of an ExternalCheck.
func parseCheck(c *metav1.Condition) (n int, gen int64, err error) {
	if _, err := fmt.Sscanf(c.Message, "write %d of generation %d", &n, &gen); err != nil {
		return 0, 0, fmt.Errorf("ExternalCheck message %q: %w", c.Message, err)
	}
	return n, gen, nil
}

// versionLog watches the Widgets of a namespace and checks every version
// the API server stores: once a Widget has an ExternalCheck, every later
// version holds it, written by the checker (its observedGeneration is the
// one its message names) and never older than in the version before; and,
// when engineToo is set, the same of the engine's Ready.
type versionLog struct {
	engineToo bool

	mu       sync.Mutex
	versions int
	lastN    map[string]int
	ready    map[string]bool
	problems []string
	closed   bool
}

func (l *versionLog) watch(t *testing.T, c client.WithWatch, ns string) {
	t.Helper()
	l.lastN, l.ready = map[string]int{}, map[string]bool{}
	ctx, cancel := context.WithCancel(t.Context())
	w, err := c.Watch(ctx, &testapi.WidgetList{}, client.InNamespace(ns))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			l.note(ev)
		}
		l.mu.Lock()
		l.closed = ctx.Err() == nil
		l.mu.Unlock()
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func (l *versionLog) note(ev watch.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w, ok := ev.Object.(*testapi.Widget)
	if !ok {
		if ev.Type != watch.Bookmark {
			l.problems = append(l.problems, fmt.Sprintf("watch event %s: %v", ev.Type, ev.Object))
		}
		return
	}
	if ev.Type == watch.Deleted {
		return
	}
	l.versions++
	where := fmt.Sprintf("%s at version %s", w.Name, w.ResourceVersion)
	c := conditions.Find(w.Status.Conditions, typeExternalCheck)
	switch {
	case c == nil && l.lastN[w.Name] > 0:
		l.problems = append(l.problems, fmt.Sprintf("%s: ExternalCheck (write %d) lost", where, l.lastN[w.Name]))
	case c != nil:
		n, gen, err := parseCheck(c)
		switch {
		case err != nil:
			l.problems = append(l.problems, fmt.Sprintf("%s: %v", where, err))
		case c.ObservedGeneration != gen:
			l.problems = append(l.problems, fmt.Sprintf("%s: ExternalCheck %q changed: observedGeneration %d", where, c.Message, c.ObservedGeneration))
		case n < l.lastN[w.Name]:
			l.problems = append(l.problems, fmt.Sprintf("%s: ExternalCheck went back from write %d to write %d", where, l.lastN[w.Name], n))
		default:
			l.lastN[w.Name] = n
		}
	}
	if l.engineToo {
		has := conditions.Find(w.Status.Conditions, conditions.TypeReady) != nil
		if !has && l.ready[w.Name] {
			l.problems = append(l.problems, fmt.Sprintf("%s: Ready lost", where))
		}
		l.ready[w.Name] = l.ready[w.Name] || has
	}
}

// failed reports whether the watch found something wrong.
func (l *versionLog) failed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.problems) > 0
}

// check fails t with what the watch found wrong.
func (l *versionLog) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		t.Error("the watch of the Widgets ended early: versions may have been missed")
	}
	if l.versions == 0 {
		t.Error("the watch saw no version of a Widget")
	}
	for _, p := range l.problems {
		t.Error(p)
	}
	t.Logf("%d versions of the Widgets checked", l.versions)
}

// TestAnotherControllersConditionsSurvive: a second controller owns the
// condition ExternalCheck on the engine's Widgets and writes it while the
// engine reconciles them through spec changes. Once a round, before the
// engine's first status write of each Widget, the second controller writes
// first, so that the engine's write meets a real conflict (the checker's
// change came after the engine read the Widget); it also writes on its
// own, at the same time as the engine's passes.
//
// Every version the API server stores keeps the checker's condition as
// the checker wrote it (the engine does not stamp its generation), and at
// the end each Widget holds both controllers' conditions, correct. With a
// checker that writes as a careful controller does (guarded by the
// version), the engine's conflicts were all rebased: no pass ended in the
// conflict's requeue, and the engine's Ready was never lost either. With
// a naive checker (the whole list, unguarded) the engine still never
// drops the checker's condition.
func TestAnotherControllersConditionsSurvive(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		naive bool
		lean  bool
	}{
		{name: "a careful controller"},
		{name: "a careful controller, as package operator", lean: true},
		{name: "a naive controller", naive: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			watcher, err := client.NewWithWatch(f.cp.Config, client.Options{Scheme: f.cp.Scheme})
			if err != nil {
				t.Fatal(err)
			}
			versions := &versionLog{engineToo: !tc.naive}
			versions.watch(t, watcher, f.ns)

			checker := &externalChecker{c: f.c, naive: tc.naive}
			var patches, conflicts atomic.Int32
			// armed are the Widgets whose next status write of the engine
			// the checker's write goes before; once per round each.
			var armedMu sync.Mutex
			armed := map[string]bool{}
			arm := func(names ...string) {
				armedMu.Lock()
				defer armedMu.Unlock()
				for _, name := range names {
					armed[name] = true
				}
			}
			interject := func(ctx context.Context, obj client.Object) error {
				patches.Add(1)
				armedMu.Lock()
				first := armed[obj.GetName()]
				delete(armed, obj.GetName())
				armedMu.Unlock()
				if first {
					return checker.check(ctx, client.ObjectKeyFromObject(obj))
				}
				return nil
			}
			wrap := func(c client.Client) client.WithWatch {
				return interceptor.NewClient(seamWatchless{c}, interceptor.Funcs{
					SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
						if sub == "status" {
							if err := interject(ctx, obj); err != nil {
								return fmt.Errorf("the checker's write: %w", err)
							}
						}
						err := c.SubResource(sub).Patch(ctx, obj, patch, opts...)
						if apierrors.IsConflict(err) {
							conflicts.Add(1)
						}
						return err
					},
				})
			}
			logs := &bosuntest.LogRecorder{}
			ro := runOptions{client: wrap, logs: logs}
			if tc.lean {
				ro.configure = asOperator
			}
			f.run(newReconciler("checked", newJournal(), false), ro)

			names := []string{"w0", "w1", "w2"}
			arm(names...)
			for i, name := range names {
				f.create(name, int64(i+1), 1, nil)
			}
			// Three busy rounds: a spec change of every Widget and, at the
			// same time, two writes of the checker to each, besides the one
			// before the engine's first status write. That is at most four
			// writes of others to a Widget while the engine saves it, fewer
			// than the rebases a status write may make. Then a quiet round:
			// a spec change alone, whose pass must leave the checker's
			// condition as it is.
			const rounds = 4
			for round := 1; round <= rounds; round++ {
				busy := round < rounds
				if busy {
					arm(names...)
				}
				var wg sync.WaitGroup
				errs := make(chan error, len(names)*2)
				for i, name := range names {
					wg.Go(func() {
						errs <- f.setValue(t.Context(), name, int64(10*round+i))
						for range 2 {
							if !busy {
								return
							}
							if err := checker.check(t.Context(), client.ObjectKey{Namespace: f.ns, Name: name}); err != nil {
								errs <- err
								return
							}
						}
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						t.Fatal(err)
					}
				}
				for _, name := range names {
					f.waitBothConditions(checker, versions, name)
				}
			}

			if conflicts.Load() == 0 {
				t.Fatal("no status write of the engine met a conflict: nothing was tested")
			}
			t.Logf("%d status writes of the engine, %d conflicts", patches.Load(), conflicts.Load())
			versions.check(t)
			requeues := 0
			var told []string
			for _, e := range logs.Entries() {
				switch e.Message {
				case "conflict, requeueing":
					requeues++
					told = append(told, e.String())
				case "status not rebased", "status not rebased: reading the object failed":
					told = append(told, e.String())
				}
			}
			for _, e := range logs.Errors() {
				if line := strings.ReplaceAll(e.String(), f.ns, "<namespace>"); apierrors.IsConflict(e.Err) || strings.Contains(strings.ToLower(line), "conflict") {
					t.Errorf("error log mentions a conflict: %s", e)
				}
			}
			if !tc.naive && requeues > 0 {
				t.Errorf("%d passes ended in a conflict's requeue, want 0: the other controller's writes threw the engine's passes away:\n%s", requeues, strings.Join(told, "\n"))
			}
		})
	}
}

// setValue sets the spec.value of the Widget name.
func (f *fixture) setValue(ctx context.Context, name string, value int64) error {
	w, err := f.get(ctx, name)
	if err != nil {
		return err
	}
	patch := client.MergeFrom(w.DeepCopy())
	w.Spec.Value = value
	return f.c.Patch(ctx, w, patch)
}

// waitBothConditions waits until the Widget name holds the engine's
// conditions for its generation (Ready True, Computed True, the result)
// and the checker's last ExternalCheck, or the watch of its versions found
// something wrong, which versionLog.check reports.
func (f *fixture) waitBothConditions(checker *externalChecker, versions *versionLog, name string) {
	f.t.Helper()
	bosuntest.Eventually(f.t, func(ctx context.Context) error {
		if versions.failed() {
			return nil
		}
		w, err := f.get(ctx, name)
		if err != nil {
			return err
		}
		var problems []error
		for _, typ := range []string{conditions.TypeReady, "Computed"} {
			c := conditions.Find(w.Status.Conditions, typ)
			if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != w.Generation {
				problems = append(problems, fmt.Errorf("%s is %+v, want True for generation %d", typ, c, w.Generation))
			}
		}
		if w.Status.Result != w.Spec.Value/w.Spec.Divisor {
			problems = append(problems, fmt.Errorf("result %d, want %d", w.Status.Result, w.Spec.Value/w.Spec.Divisor))
		}
		c := conditions.Find(w.Status.Conditions, typeExternalCheck)
		if c == nil {
			return errors.Join(append(problems, errors.New("no ExternalCheck"))...)
		}
		n, gen, err := parseCheck(c)
		switch {
		case err != nil:
			problems = append(problems, err)
		case n != checker.written(name) || c.ObservedGeneration != gen:
			problems = append(problems, fmt.Errorf("ExternalCheck %q observing generation %d, want write %d", c.Message, c.ObservedGeneration, checker.written(name)))
		}
		return errors.Join(problems...)
	})
}

// TestReloadKeepsAnotherControllersConditions: a step's Commit is refused
// because a second controller wrote its condition meanwhile; after
// Pass.Reload the pass's object holds that condition and the status the
// step computed, and the pass's status write keeps both.
func TestReloadKeepsAnotherControllersConditions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	checker := &externalChecker{c: f.c}
	var interfered atomic.Bool
	mark := bosun.NewStep("mark", func(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		if req.Object.Annotations[markAnnotation] != "" {
			return ctrl.Result{}, nil
		}
		req.Object.Status.Result = 42
		if !interfered.Swap(true) {
			if err := checker.check(ctx, client.ObjectKeyFromObject(req.Object)); err != nil {
				return ctrl.Result{}, err
			}
			metav1.SetMetaDataAnnotation(&req.Object.ObjectMeta, markAnnotation, "set")
			if err := req.Commit(ctx); !apierrors.IsConflict(err) {
				return ctrl.Result{}, fmt.Errorf("commit over a newer version = %w, want a conflict", err)
			}
			if err := req.Reload(ctx); err != nil {
				return ctrl.Result{}, err
			}
			if conditions.Find(req.Object.Status.Conditions, typeExternalCheck) == nil || req.Object.Status.Result != 42 {
				return ctrl.Result{}, fmt.Errorf("after Reload: conditions %v, result %d; want the other controller's ExternalCheck and this pass's result",
					req.Object.Status.Conditions, req.Object.Status.Result)
			}
		}
		metav1.SetMetaDataAnnotation(&req.Object.ObjectMeta, markAnnotation, "set")
		return ctrl.Result{}, req.Commit(ctx)
	})
	f.run(&bosun.Reconciler[*testapi.Widget]{Name: "reload", Steps: []bosun.Step[*testapi.Widget]{mark}}, runOptions{})
	f.create("w", 1, 1, nil)
	w := f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	if c := conditions.Find(w.Status.Conditions, typeExternalCheck); c == nil || w.Status.Result != 42 || w.Annotations[markAnnotation] != "set" {
		t.Errorf("ExternalCheck %v, result %d, annotations %v; want the other controller's condition, 42 and the mark", c, w.Status.Result, w.Annotations)
	}
	if !interfered.Load() {
		t.Error("the Widget was never interfered with")
	}
}
