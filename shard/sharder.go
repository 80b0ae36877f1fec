package shard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// patchLabels sets (or, for an empty value, removes) labels of the object
// key of the ring's kind, guarded by resourceVersion rv.
func (m *Member) patchLabels(ctx context.Context, key types.NamespacedName, rv string, set map[string]string) error {
	lbls := map[string]any{}
	for k, v := range set {
		if v == "" {
			lbls[k] = nil
		} else {
			lbls[k] = v
		}
	}
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": rv, "labels": lbls}})
	if err != nil {
		return err
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(m.gvk)
	obj.Namespace, obj.Name = key.Namespace, key.Name
	return m.mgr.GetClient().Patch(ctx, obj, client.RawPatch(types.MergePatchType, body))
}

// drainer lets go of the objects this member is asked to: once no pass of
// one runs, it removes the shard and drain labels, which hands the object
// back to the sharder.
type drainer struct{ m *Member }

func (d *drainer) NeedLeaderElection() bool { return false }

func (d *drainer) Start(ctx context.Context) error {
	m := d.m
	q := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](10*time.Millisecond, time.Second))
	defer q.ShutDown()
	inf, err := m.mgr.GetCache().GetInformer(ctx, m.opts.Object)
	if err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	see := func(obj any) {
		o, ok := obj.(client.Object)
		if !ok {
			return
		}
		key := client.ObjectKeyFromObject(o)
		if m.isDrain(o) {
			q.Add(key)
			return
		}
		m.undrain(key)
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    see,
		UpdateFunc: func(_, obj any) { see(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if o, ok := obj.(client.Object); ok {
				m.undrain(client.ObjectKeyFromObject(o))
			}
		},
	})
	if err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	go func() {
		<-ctx.Done()
		q.ShutDown()
	}()
	log := m.mgr.GetLogger().WithValues("ring", m.opts.Ring, "member", m.opts.Identity)
	for {
		key, shutdown := q.Get()
		if shutdown {
			return nil
		}
		if err := d.letGo(ctx, key); err != nil {
			if !apierrors.IsConflict(err) && !errors.Is(err, errBusy) {
				log.Error(err, "letting an object go", "object", key)
			}
			q.AddRateLimited(key)
		} else {
			q.Forget(key)
		}
		q.Done(key)
	}
}

var errBusy = errors.New("a pass is running")

// letGo removes the labels of key once no pass of it runs.
func (d *drainer) letGo(ctx context.Context, key types.NamespacedName) error {
	m := d.m
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(m.gvk)
	if err := m.mgr.GetCache().Get(ctx, key, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !m.isDrain(obj) {
		return nil
	}
	if !m.drain(key) {
		return errBusy
	}
	return m.patchLabels(ctx, key, obj.ResourceVersion, map[string]string{m.shardLabel: "", m.drainLabel: ""})
}

// sharder labels every object of the ring's kind with its member, moving
// objects between live members through a drain. It runs in the leader.
type sharder struct {
	m       *Member
	c       cache.Cache
	q       workqueue.TypedRateLimitingInterface[types.NamespacedName]
	members []string
	ring    Ring
}

func (s *sharder) NeedLeaderElection() bool { return true }

func (s *sharder) Start(ctx context.Context) error {
	m := s.m
	ringSel := labels.SelectorFromSet(labels.Set{LabelRing: m.opts.Ring})
	opts := cache.Options{
		Scheme: m.mgr.GetScheme(),
		Mapper: m.mgr.GetRESTMapper(),
		ByObject: map[client.Object]cache.ByObject{
			&coordinationv1.Lease{}: {Namespaces: map[string]cache.Config{m.opts.Namespace: {}}, Label: ringSel},
		},
	}
	if len(m.opts.ObjectNamespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range m.opts.ObjectNamespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	c, err := cache.New(m.mgr.GetConfig(), opts)
	if err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	s.c = c
	s.q = workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](10*time.Millisecond, 5*time.Second))
	defer s.q.ShutDown()
	objects := &metav1.PartialObjectMetadata{}
	objects.SetGroupVersionKind(m.gvk)
	inf, err := c.GetInformer(ctx, objects)
	if err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	enqueue := func(obj any) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if o, ok := obj.(client.Object); ok {
			s.q.Add(client.ObjectKeyFromObject(o))
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	leases, err := c.GetInformer(ctx, &coordinationv1.Lease{})
	if err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := leases.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: poke, UpdateFunc: func(_, o any) { poke(o) }, DeleteFunc: poke,
	}); err != nil {
		return fmt.Errorf("shard: %w", err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil
	}
	log := m.mgr.GetLogger().WithValues("ring", m.opts.Ring, "sharder", m.opts.Identity)
	for range 2 {
		go func() {
			for {
				key, shutdown := s.q.Get()
				if shutdown {
					return
				}
				if err := s.assign(ctx, key); err != nil {
					if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
						log.Error(err, "assigning an object", "object", key)
					}
					s.q.AddRateLimited(key)
				} else {
					s.q.Forget(key)
				}
				s.q.Done(key)
			}
		}()
	}
	tick := time.NewTicker(m.opts.RenewPeriod / 2)
	defer tick.Stop()
	for {
		if err := s.refresh(ctx); err != nil && ctx.Err() == nil {
			log.Error(err, "reading the ring's members")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-tick.C:
		}
	}
}

// refresh reads the live members and, when they changed, reassigns every
// object.
func (s *sharder) refresh(ctx context.Context) error {
	var list coordinationv1.LeaseList
	if err := s.c.List(ctx, &list, client.InNamespace(s.m.opts.Namespace)); err != nil {
		return err
	}
	now := time.Now()
	var members []string
	for i := range list.Items {
		if l := &list.Items[i]; alive(l, now) {
			members = append(members, *l.Spec.HolderIdentity)
		}
	}
	slices.Sort(members)
	members = slices.Compact(members)
	s.m.mu.Lock()
	same := slices.Equal(members, s.members)
	if !same {
		s.members = members
		s.ring = NewRing(members, s.m.opts.Tokens)
	}
	s.m.mu.Unlock()
	if same {
		return nil
	}
	s.m.mgr.GetLogger().Info("ring members changed", "ring", s.m.opts.Ring, "members", members)
	objects := &metav1.PartialObjectMetadataList{}
	objects.SetGroupVersionKind(s.m.gvk.GroupVersion().WithKind(s.m.gvk.Kind + "List"))
	if err := s.c.List(ctx, objects); err != nil {
		return err
	}
	for i := range objects.Items {
		s.q.Add(client.ObjectKeyFromObject(&objects.Items[i]))
	}
	return nil
}

// assign brings the object key one step closer to its member: a label
// for an object that has none or whose member is gone, a drain for one
// whose live member must let it go.
func (s *sharder) assign(ctx context.Context, key types.NamespacedName) error {
	m := s.m
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(m.gvk)
	if err := s.c.Get(ctx, key, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	m.mu.Lock()
	want := s.ring.Owner(m.opts.Key(key.Namespace, key.Name))
	live := slices.Contains(s.members, obj.Labels[m.shardLabel])
	m.mu.Unlock()
	if want == "" {
		return nil
	}
	have, draining := obj.Labels[m.shardLabel], obj.Labels[m.drainLabel] != ""
	switch {
	case have == want && !draining:
		return nil
	case have == want:
		return m.patchLabels(ctx, key, obj.ResourceVersion, map[string]string{m.drainLabel: ""})
	case have == "" || !live:
		return m.patchLabels(ctx, key, obj.ResourceVersion, map[string]string{m.shardLabel: want, m.drainLabel: ""})
	case !draining:
		return m.patchLabels(ctx, key, obj.ResourceVersion, map[string]string{m.drainLabel: "true"})
	default:
		// The live member lets it go when its pass ends; the removal of
		// its labels brings the object back here.
		return nil
	}
}
