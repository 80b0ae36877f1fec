package plumbing

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
)

// LazyNamespaces wraps newInformer so that the informers it makes build
// their namespace index only once they hold objects of more than one
// namespace and are asked for one of them (see lazyNamespaceIndex).
func LazyNamespaces(newInformer func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer) func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
	if newInformer == nil {
		newInformer = toolscache.NewSharedIndexInformer
	}
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		fn, ok := indexers[toolscache.NamespaceIndex]
		if !ok {
			return newInformer(lw, obj, resync, indexers)
		}
		rest := make(toolscache.Indexers, len(indexers)-1)
		for name, f := range indexers {
			if name != toolscache.NamespaceIndex {
				rest[name] = f
			}
		}
		inf := newInformer(lw, obj, resync, rest)
		return &lazyNamespaceInformer{SharedIndexInformer: inf, index: &lazyNamespaceIndex{Indexer: inf.GetIndexer(), fn: fn}}
	}
}

// lazyNamespaceInformer is an informer whose indexer is a
// lazyNamespaceIndex.
type lazyNamespaceInformer struct {
	toolscache.SharedIndexInformer
	index *lazyNamespaceIndex
}

// GetIndexer returns the informer's store, with its lazy namespace index.
func (i *lazyNamespaceInformer) GetIndexer() toolscache.Indexer { return i.index }

// lazyNamespaceIndex is a store that answers for the namespace index
// (toolscache.NamespaceIndex, which controller-runtime's cache reads to
// list the objects of a namespace) without keeping one, as long as every
// object it holds is in the namespace asked for: the informers of a cache
// over given namespaces (cache.Options.DefaultNamespaces) each watch one
// namespace, and the index would hold a second entry for each of their
// objects (some 40 bytes of a small custom resource's 770 in a lean cache).
// The first question that finds an object of another namespace builds the
// index, over the objects held, and the store answers from it from then on,
// as a cluster-wide informer's does.
type lazyNamespaceIndex struct {
	toolscache.Indexer
	fn toolscache.IndexFunc

	mu    sync.Mutex
	built atomic.Bool
}

// build adds the namespace index to the store, once.
func (x *lazyNamespaceIndex) build() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.built.Load() {
		return
	}
	// An error means the store has one already (added by its informer's
	// AddIndexers): it answers from that.
	_ = x.Indexer.AddIndexers(toolscache.Indexers{toolscache.NamespaceIndex: x.fn})
	x.built.Store(true)
}

// inNamespace returns every object the store holds when they are all in
// namespace, and false when one is not (or its namespace cannot be read).
func (x *lazyNamespaceIndex) inNamespace(namespace string) ([]any, bool) {
	items := x.List()
	for _, item := range items {
		o, err := meta.Accessor(item)
		if err != nil || o.GetNamespace() != namespace {
			return nil, false
		}
	}
	return items, true
}

// ByIndex implements toolscache.Indexer.
func (x *lazyNamespaceIndex) ByIndex(name, value string) ([]any, error) {
	if name == toolscache.NamespaceIndex && !x.built.Load() {
		if items, ok := x.inNamespace(value); ok {
			return items, nil
		}
		x.build()
	}
	return x.Indexer.ByIndex(name, value)
}

// Index implements toolscache.Indexer.
func (x *lazyNamespaceIndex) Index(name string, obj any) ([]any, error) {
	if name == toolscache.NamespaceIndex && !x.built.Load() {
		o, err := meta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("reading the namespace of the object to index: %w", err)
		}
		return x.ByIndex(name, o.GetNamespace())
	}
	return x.Indexer.Index(name, obj)
}

// IndexKeys implements toolscache.Indexer.
func (x *lazyNamespaceIndex) IndexKeys(name, value string) ([]string, error) {
	if name == toolscache.NamespaceIndex {
		x.build()
	}
	return x.Indexer.IndexKeys(name, value)
}

// ListIndexFuncValues implements toolscache.Indexer.
func (x *lazyNamespaceIndex) ListIndexFuncValues(name string) []string {
	if name == toolscache.NamespaceIndex {
		x.build()
	}
	return x.Indexer.ListIndexFuncValues(name)
}

// GetIndexers implements toolscache.Indexer: the namespace index is one,
// built or not.
func (x *lazyNamespaceIndex) GetIndexers() toolscache.Indexers {
	out := toolscache.Indexers{toolscache.NamespaceIndex: x.fn}
	for name, fn := range x.Indexer.GetIndexers() {
		out[name] = fn
	}
	return out
}

// AddIndexers implements toolscache.Indexer.
func (x *lazyNamespaceIndex) AddIndexers(indexers toolscache.Indexers) error {
	if _, ok := indexers[toolscache.NamespaceIndex]; ok {
		return fmt.Errorf("indexer conflict: %s", toolscache.NamespaceIndex)
	}
	return x.Indexer.AddIndexers(indexers)
}
