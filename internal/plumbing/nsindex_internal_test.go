package plumbing

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/bosunkit/bosun/internal/testapi"
)

// names returns the sorted namespace/name keys of objs.
func names(t *testing.T, objs []any) []string {
	t.Helper()
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		k, err := toolscache.MetaNamespaceKeyFunc(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func widget(namespace, name string) *testapi.Widget {
	return &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}

// TestLazyNamespaceIndex checks that a store with a lazy namespace index
// answers every question for the namespace index as a store that keeps
// one does, and builds the index only when it holds an object outside the
// namespace asked for.
func TestLazyNamespaceIndex(t *testing.T) {
	tests := []struct {
		name    string
		objects []*testapi.Widget
		ask     string
		// later is added after the first question.
		later     []*testapi.Widget
		wantBuilt bool
	}{
		{name: "empty", ask: "a"},
		{name: "one namespace", objects: []*testapi.Widget{widget("a", "1"), widget("a", "2")}, ask: "a"},
		{name: "one namespace, another asked", objects: []*testapi.Widget{widget("a", "1")}, ask: "b", wantBuilt: true},
		{name: "two namespaces", objects: []*testapi.Widget{widget("a", "1"), widget("b", "2"), widget("a", "3")}, ask: "a", wantBuilt: true},
		{
			name: "a second namespace after the first question", objects: []*testapi.Widget{widget("a", "1")}, ask: "a",
			later: []*testapi.Widget{widget("b", "2"), widget("a", "3")}, wantBuilt: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
			lazy := &lazyNamespaceIndex{Indexer: toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{}), fn: toolscache.MetaNamespaceIndexFunc}
			add := func(objs []*testapi.Widget) {
				for _, o := range objs {
					if err := ref.Add(o); err != nil {
						t.Fatal(err)
					}
					if err := lazy.Add(o); err != nil {
						t.Fatal(err)
					}
				}
			}
			same := func() {
				t.Helper()
				want, err := ref.ByIndex(toolscache.NamespaceIndex, tt.ask)
				if err != nil {
					t.Fatal(err)
				}
				got, err := lazy.ByIndex(toolscache.NamespaceIndex, tt.ask)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(names(t, want), names(t, got)); diff != "" {
					t.Errorf("ByIndex(%q) (-want +got):\n%s", tt.ask, diff)
				}
				got, err = lazy.Index(toolscache.NamespaceIndex, widget(tt.ask, "x"))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(names(t, want), names(t, got)); diff != "" {
					t.Errorf("Index(%q) (-want +got):\n%s", tt.ask, diff)
				}
			}
			add(tt.objects)
			same()
			add(tt.later)
			same()
			if got := lazy.built.Load(); got != tt.wantBuilt {
				t.Errorf("built = %v, want %v", got, tt.wantBuilt)
			}
			if _, ok := lazy.GetIndexers()[toolscache.NamespaceIndex]; !ok {
				t.Error("GetIndexers has no namespace index")
			}
			// The questions that need the index build it.
			wantKeys, _ := ref.IndexKeys(toolscache.NamespaceIndex, tt.ask)
			gotKeys, err := lazy.IndexKeys(toolscache.NamespaceIndex, tt.ask)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(wantKeys)
			slices.Sort(gotKeys)
			if diff := cmp.Diff(wantKeys, gotKeys, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("IndexKeys(%q) (-want +got):\n%s", tt.ask, diff)
			}
			wantValues, gotValues := ref.ListIndexFuncValues(toolscache.NamespaceIndex), lazy.ListIndexFuncValues(toolscache.NamespaceIndex)
			slices.Sort(wantValues)
			slices.Sort(gotValues)
			if diff := cmp.Diff(wantValues, gotValues, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ListIndexFuncValues (-want +got):\n%s", diff)
			}
			if !lazy.built.Load() {
				t.Error("IndexKeys did not build the index")
			}
			// Built, the index follows the store.
			add([]*testapi.Widget{widget(tt.ask, "late")})
			same()
		})
	}
}

// TestLazyNamespaceIndexers checks that the store keeps the other
// indexers and refuses a second namespace index.
func TestLazyNamespaceIndexers(t *testing.T) {
	lazy := &lazyNamespaceIndex{Indexer: toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{}), fn: toolscache.MetaNamespaceIndexFunc}
	if err := lazy.AddIndexers(toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc}); err == nil {
		t.Error("AddIndexers accepted a second namespace index")
	}
	byName := func(o any) ([]string, error) { return []string{o.(*testapi.Widget).Name}, nil }
	if err := lazy.AddIndexers(toolscache.Indexers{"name": byName}); err != nil {
		t.Fatal(err)
	}
	if err := lazy.Add(widget("a", "1")); err != nil {
		t.Fatal(err)
	}
	got, err := lazy.ByIndex("name", "1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a/1"}, names(t, got)); diff != "" {
		t.Errorf("ByIndex(name) (-want +got):\n%s", diff)
	}
	if lazy.built.Load() {
		t.Error("another index built the namespace index")
	}
}
