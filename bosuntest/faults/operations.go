package faults

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/operator"
)

// engineOptions returns the engine options of the cell's feature and
// fault, or nil when they are the engine's defaults.
func (c *cell) engineOptions() func(*bosun.Options) {
	if c.f != kstatusOn && c.x != blockedCleanup {
		return nil
	}
	return func(o *bosun.Options) {
		if c.f == kstatusOn {
			o.KStatus = true
		}
		if c.x == blockedCleanup {
			o.DeletionDeadline = c.sizes.Deadline
		}
	}
}

// configured reports whether a process's Setup passed its reconcilers'
// options to Process.Configure.
func (c *cell) configured() bool {
	for _, p := range c.procs {
		if p.configured.Load() {
			return true
		}
	}
	return false
}

// kinds returns the kinds of the operator's objects: those of
// Operator.Lists, or the kind of its first object.
func (b *battery) kinds(ns string) ([]schema.GroupVersionKind, error) {
	var out []schema.GroupVersionKind
	for _, l := range b.op.Lists {
		gvk, err := apiutil.GVKForObject(l, b.cp.Scheme)
		if err != nil {
			return nil, err
		}
		out = append(out, gvk.GroupVersion().WithKind(strings.TrimSuffix(gvk.Kind, "List")))
	}
	if len(out) > 0 {
		return out, nil
	}
	gvk, err := apiutil.GVKForObject(b.op.Object(ns, 0), b.cp.Scheme)
	if err != nil {
		return nil, err
	}
	return []schema.GroupVersionKind{gvk}, nil
}

// kstatusWatch judges, with cli-utils' kstatus, every version of the
// operator's objects the API server stores while the cell runs.
type kstatusWatch struct {
	mu       sync.Mutex
	versions int
	bad      []string
	stops    []func()
}

// watchKStatus starts judging every version of the cell's objects.
func (c *cell) watchKStatus() *kstatusWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &kstatusWatch{stops: []func(){cancel}}
	c.t.Cleanup(w.stop)
	wc, err := client.NewWithWatch(c.b.cp.Config, client.Options{Scheme: c.b.cp.Scheme})
	if err != nil {
		c.t.Fatal(err)
	}
	kinds, err := c.b.kinds(c.ns)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, gvk := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		wi, err := wc.Watch(ctx, list, client.InNamespace(c.ns))
		if err != nil {
			c.t.Fatalf("watching %s: %v", gvk.Kind, err)
		}
		w.stops = append(w.stops, wi.Stop)
		go w.judge(wi.ResultChan())
	}
	return w
}

// judge reads one watch to its end.
func (w *kstatusWatch) judge(events <-chan watch.Event) {
	for ev := range events {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
			continue
		}
		if err := judgeKStatus(u); err != nil {
			w.mu.Lock()
			w.bad = append(w.bad, fmt.Sprintf("%s at version %s: %v", u.GetName(), u.GetResourceVersion(), err))
			w.mu.Unlock()
		}
		w.mu.Lock()
		w.versions++
		w.mu.Unlock()
	}
}

// judgeKStatus checks one version of an object: kstatus must not call it
// Current unless Ready is True for its generation, and never Failed (the
// matrix's faults are all transient). A version the operator has not
// written a Ready condition to yet is not judged: kstatus calls an object
// without status Current whoever reconciles it.
func judgeKStatus(u *unstructured.Unstructured) error {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	hasReady := false
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == conditions.TypeReady {
			hasReady = true
		}
	}
	if !hasReady || u.GetDeletionTimestamp() != nil {
		return nil
	}
	res, err := status.Compute(u)
	if err != nil {
		return fmt.Errorf("kstatus: %w", err)
	}
	switch res.Status {
	case status.FailedStatus:
		return fmt.Errorf("kstatus says Failed (%s) under transient faults", res.Message)
	case status.CurrentStatus:
		if err := oracle.CheckReady(u); err != nil {
			return fmt.Errorf("kstatus says Current, but %w", err)
		}
	}
	return nil
}

// current checks that kstatus calls every object Current now.
func (c *cell) kstatusCurrent(ctx context.Context, objs []client.Object) error {
	var errs []error
	for _, o := range objs {
		gvk, err := apiutil.GVKForObject(o, c.b.cp.Scheme)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := c.b.cp.Client.Get(ctx, client.ObjectKeyFromObject(o), u); err != nil {
			return err
		}
		res, err := status.Compute(u)
		if err != nil {
			return err
		}
		if res.Status != status.CurrentStatus {
			errs = append(errs, fmt.Errorf("%s: kstatus %s (%s)", o.GetName(), res.Status, res.Message))
		}
	}
	return errors.Join(errs...)
}

// stop ends the watches.
func (w *kstatusWatch) stop() {
	for _, s := range w.stops {
		s()
	}
}

// check reports the versions kstatus judged wrong.
func (w *kstatusWatch) check() (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.bad) > 0 {
		return w.versions, fmt.Errorf("kstatus wrong on %d of %d versions: %s", len(w.bad), w.versions, strings.Join(w.bad, "; "))
	}
	if w.versions == 0 {
		return 0, errors.New("kstatus: no version of the objects was seen")
	}
	return w.versions, nil
}

// blockedDelete deletes the objects while every delete of the operator
// fails, and checks the deletion deadline's promises: each object that a
// finalizer holds shows DeletionBlocked by the deadline (with a margin for
// a busy machine), is not written again while nothing changes, and, once
// the deletes go through again, is cleaned up: half of them released by
// the annotation bosun.dev/release-finalizer "true", whose one more
// cleanup must delete what the object had, the others by the retried
// cleanup.
func (c *cell) blockedDelete(objs []client.Object) {
	t := c.t
	ctx := t.Context()
	for _, p := range c.alive() {
		p.FailDeletes(true)
	}
	if err := deleteAll(ctx, c.b.cp.Client, objs); err != nil {
		t.Fatal(err)
	}
	deadline := c.sizes.Deadline
	bound := deadline + c.b.bound()
	var held []client.Object
	err := poll(ctx, bound, func(ctx context.Context) error {
		held = held[:0]
		var waiting []string
		for _, o := range objs {
			cur, _ := o.DeepCopyObject().(client.Object)
			err := c.b.cp.Client.Get(ctx, client.ObjectKeyFromObject(o), cur)
			if err != nil {
				if client.IgnoreNotFound(err) != nil {
					return err
				}
				continue
			}
			held = append(held, cur)
			if blocked(cur) == nil {
				waiting = append(waiting, o.GetName())
			}
		}
		if len(waiting) > 0 {
			return fmt.Errorf("not reported blocked: %v", waiting)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("DeletionBlocked not shown within %s of a deadline of %s: %v", bound, deadline, err)
	}
	c.result.oracles++
	late := time.Duration(0)
	for _, o := range held {
		cond := blocked(o)
		after := cond.LastTransitionTime.Sub(o.GetDeletionTimestamp().Time)
		late = max(late, after)
		// Both times are stored to the second.
		if after > deadline+c.sizes.Margin {
			t.Errorf("%s: DeletionBlocked shown %s after the deletion, deadline %s", o.GetName(), after, deadline)
		}
		if !strings.Contains(cond.Message, "within") {
			t.Errorf("%s: DeletionBlocked says %q, which does not name the deadline", o.GetName(), cond.Message)
		}
	}
	c.result.extra = append(c.result.extra,
		"objects held by a finalizer", fmt.Sprintf("%d/%d", len(held), len(objs)), "",
		"DeletionBlocked shown after the deletion", late.String(), fmt.Sprintf("deadline %s", deadline))
	if len(held) == 0 {
		// Nothing held them: their children go with the garbage collector.
		c.waitCleaned(objs)
		return
	}
	c.result.oracles++

	// Blocked and unchanged: not written. Failing deletes do not count,
	// as they change nothing.
	before := c.counts()
	timer := time.NewTimer(c.sizes.Quiet)
	select {
	case <-ctx.Done():
		timer.Stop()
		t.Fatal(ctx.Err())
	case <-timer.C:
	}
	if w := c.counts().minus(before); w != (Cost{}) {
		t.Errorf("blocked deletions written while nothing changed: %s in %s", w, c.sizes.Quiet)
	}
	c.result.extra = append(c.result.extra, "writes while blocked", c.counts().minus(before).String(), Cost{}.String())
	c.result.oracles++

	// The deletes go through again; half the objects are released by
	// the annotation, whose one more cleanup must still delete.
	for _, p := range c.alive() {
		p.FailDeletes(false)
	}
	released := 0
	for i, o := range held {
		if i%2 == 1 {
			continue
		}
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"true"}}}`, bosun.AnnotationReleaseFinalizer)
		if err := c.b.cp.Client.Patch(ctx, o, client.RawPatch("application/merge-patch+json", patch)); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		released++
	}
	c.result.extra = append(c.result.extra, "released by the annotation", fmt.Sprintf("%d/%d", released, len(held)), "")
	c.waitCleaned(objs)
}

// blocked returns the object's DeletionBlocked condition when it is True.
func blocked(o client.Object) *metav1.Condition {
	co, ok := o.(conditions.Object)
	if !ok {
		return nil
	}
	c := meta.FindStatusCondition(co.GetConditions(), conditions.TypeDeletionBlocked)
	if c == nil || c.Status != metav1.ConditionTrue {
		return nil
	}
	return c
}

// waitCleaned waits until nothing of the deleted objects is left.
func (c *cell) waitCleaned(objs []client.Object) {
	ctx := c.t.Context()
	bound := c.b.bound() + time.Duration(len(objs))*250*time.Millisecond
	if err := poll(ctx, bound, func(ctx context.Context) error { return c.b.cleaned(ctx, c.b.cp.Client, c.ns, objs) }); err != nil {
		c.t.Fatalf("not cleaned up within %s: %v", bound, err)
	}
	c.result.oracles++
}

// planChange stops the cell's processes, changes the objects' specs and
// runs the operator under --plan (package operator, as its command runs
// it) beside what the stopped members left (their shard labels): the plan
// must cover every object of the operator's kinds, foretell a change of
// each changed object, make no real write to the API server or the
// external system, and leave every object of the namespace as it was.
// Then it starts the processes again.
func (c *cell) planChange(objs []client.Object) {
	t := c.t
	ctx := t.Context()
	for _, p := range c.alive() {
		p.Stop()
	}
	if err := c.b.change(ctx, objs); err != nil {
		t.Fatal(err)
	}
	before, err := c.snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := t.TempDir() + "/kubeconfig"
	if err := c.b.cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	planner := &Process{name: "plan", now: time.Now, deadCh: make(chan struct{}), done: make(chan struct{})}
	scheme := c.b.cp.Scheme
	flags := operator.DefaultFlags()
	flags.Plan = true
	flags.Zap.DestWriter = io.Discard
	var out strings.Builder
	err = operator.Run(ctx, operator.Options{
		Name: "faults-plan",
		AddToScheme: func(s *runtime.Scheme) error {
			for gvk, typ := range scheme.AllKnownTypes() {
				if !s.Recognizes(gvk) {
					s.AddKnownTypeWithName(gvk, reflect.New(typ).Interface().(runtime.Object))
				}
			}
			return nil
		},
		Manager: func(o *ctrl.Options) {
			o.Cache.DefaultNamespaces = map[string]cache.Config{c.ns: {}}
			o.Controller.SkipNameValidation = ptr.To(true)
		},
		Setup: func(mgr ctrl.Manager) error { return c.b.op.Setup(mgr, planner) },
	}, flags, &out)
	report := out.String()
	if err != nil {
		t.Fatalf("--plan: %v\n%s", err, report)
	}
	c.result.oracles++
	for _, o := range objs {
		if err := plannedChange(report, c.ns, o.GetName()); err != nil {
			t.Errorf("--plan: %v\n%s", err, report)
		}
	}
	c.result.oracles++
	after, err := c.snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("--plan changed objects on the server (-before +after):\n%s", diff)
	}
	for _, call := range planner.Calls() {
		if call.TookEffect() {
			t.Errorf("--plan made a real external change: %s", call)
		}
	}
	c.result.oracles++
	summary, _, _ := strings.Cut(report, "\n")
	if len(before) < len(objs) {
		t.Errorf("--plan: the snapshot of the namespace holds %d objects, fewer than the %d made", len(before), len(objs))
	}
	c.result.extra = append(c.result.extra,
		"plan of the change", summary, fmt.Sprintf("every one of %d objects would change", len(objs)),
		"objects of the namespace unchanged by the plan", fmt.Sprintf("%d/%d", unchanged(before, after), len(before)), "all")
	c.startReplicas()
}

// planned checks the plan's section of the object called name: it had a
// pass that succeeded and would change something.
func plannedChange(report, ns, name string) error {
	lines := strings.Split(report, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, " ") || !strings.Contains(l, " "+ns+"/"+name+" (controller ") {
			continue
		}
		var body []string
		for _, b := range lines[i+1:] {
			if !strings.HasPrefix(b, " ") {
				break
			}
			body = append(body, strings.TrimSpace(b))
		}
		switch {
		case len(body) == 0:
			return fmt.Errorf("%s: an empty section", name)
		case body[0] == "no change":
			return fmt.Errorf("%s: no change foretold, but its spec changed", name)
		case strings.HasPrefix(body[0], "no pass ran"), strings.HasPrefix(body[0], "the pass failed"):
			return fmt.Errorf("%s: %s", name, body[0])
		}
		return nil
	}
	return fmt.Errorf("%s is not in the plan", name)
}

// snapshot returns the resourceVersion of every object in the cell's
// namespace, of every kind the API server lists there, Events aside.
func (c *cell) snapshot(ctx context.Context) (map[string]string, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(c.b.cp.Config)
	if err != nil {
		return nil, err
	}
	lists, err := dc.ServerPreferredNamespacedResources()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range l.APIResources {
			if r.Name == "events" || !slices.Contains(r.Verbs, "list") || strings.Contains(r.Name, "/") {
				continue
			}
			list := &metav1.PartialObjectMetadataList{}
			list.SetGroupVersionKind(gv.WithKind(r.Kind + "List"))
			if err := c.b.cp.Client.List(ctx, list, client.InNamespace(c.ns)); err != nil {
				return nil, fmt.Errorf("listing %s: %w", r.Name, err)
			}
			for _, o := range list.Items {
				out[r.Kind+" "+o.Name] = o.ResourceVersion
			}
		}
	}
	return out, nil
}

// unchanged counts the objects of before that after holds at the same
// version.
func unchanged(before, after map[string]string) int {
	n := 0
	for k, v := range before {
		if after[k] == v {
			n++
		}
	}
	return n
}
