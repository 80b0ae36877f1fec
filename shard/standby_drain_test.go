package shard

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/internal/testapi"
)

// fakeManager is a manager whose API reader, client and cache are one
// fake client: enough for standby.takeOver, drainer.letGo and the gate's
// reads of the cache and the API server.
type fakeManager struct {
	manager.Manager
	c client.WithWatch
}

func (r fakeManager) GetAPIReader() client.Reader { return r.c }
func (r fakeManager) GetClient() client.Client    { return r.c }
func (r fakeManager) GetCache() cache.Cache       { return fakeCache{c: r.c} }
func (r fakeManager) GetLogger() logr.Logger      { return logr.Discard() }

type fakeCache struct {
	cache.Cache
	c client.Reader
}

func (r fakeCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return r.c.Get(ctx, key, obj, opts...)
}

// TestTakeoverListedBeforeADrain: member a is the standby of w,
// labelled for c, whose tenure the sharder has just closed. a lists c's
// objects from the API server (a page of a long list); before it takes
// them over in its gate, the sharder labels w for a (its standby), the
// ring (b joined) wants w on b, so the sharder drains it, a lets it go
// (drainer.letGo: the drain mark, the labels removed), and the sharder
// labels it for b, live. Then a's takeover, built on the list taken
// before the drain, clears the mark of that drain and counts w as a's:
// the takeover's request would run a pass on a while b owns w. The
// takeover takes nothing that a let go since its list began.
func TestTakeoverListedBeforeADrain(t *testing.T) {
	const (
		ring   = "w"
		closed = "2026-11-26T10:00:00Z"
	)
	m, err := New(Options{Ring: ring, Identity: "a", Namespace: "ns", Object: &testapi.Widget{}, Standby: true})
	if err != nil {
		t.Fatal(err)
	}
	m.gvk = testapi.GroupVersion.WithKind("Widget")
	key := types.NamespacedName{Namespace: "ns", Name: "w"}

	scheme := runtime.NewScheme()
	if err := testapi.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{
		Namespace: key.Namespace, Name: key.Name,
		Labels: map[string]string{
			m.shardLabel: "c", m.standbyLabel: "a",
			presenceKey(ring, "c"): presenceValue, presenceKey(ring, "a"): presenceValue,
		},
		Annotations: map[string]string{m.tenureKey: "2026-11-26T09:00:00Z"},
	}}

	var inner client.WithWatch
	var raced bool
	// relabel stands for the sharder: it patches w's labels, guarded by
	// its current resourceVersion.
	relabel := func(ctx context.Context, set map[string]string) {
		t.Helper()
		cur := &testapi.Widget{}
		if err := inner.Get(ctx, key, cur); err != nil {
			t.Fatal(err)
		}
		if err := m.patchLabels(ctx, key, cur.ResourceVersion, set, nil); err != nil {
			t.Fatal(err)
		}
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(w).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := cl.List(ctx, list, opts...); err != nil {
				return err
			}
			if raced {
				return nil
			}
			raced = true
			// The list has left the API server, w labelled for c in it.
			// Meanwhile: the sharder gives w to its standby a...
			relabel(ctx, map[string]string{m.shardLabel: "a", m.standbyLabel: "b", presenceKey(ring, "c"): "", presenceKey(ring, "b"): presenceValue})
			// ...then drains it to b, which joined the ring...
			relabel(ctx, map[string]string{m.drainLabel: "1764151200"})
			// ...a lets it go, no pass of it running...
			if err := (&drainer{m: m}).letGo(ctx, key); err != nil {
				t.Fatalf("letGo: %v", err)
			}
			// ...and the sharder labels it for b, with a standby d.
			relabel(ctx, map[string]string{m.shardLabel: "b", m.standbyLabel: "d", presenceKey(ring, "b"): presenceValue, presenceKey(ring, "d"): presenceValue})
			return nil
		},
	}).Build()
	inner = c
	m.mgr = fakeManager{c: c}

	m.gate.resume(time.Now(), nil, "2026-11-26T11:00:00Z")
	right := m.gate.currentRight()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	m.standby.queues = append(m.standby.queues, q)

	n, err := m.standby.takeOver(context.Background(), right, "c", closed)
	if err != nil {
		t.Fatal(err)
	}
	if !raced {
		t.Fatal("the list was not taken")
	}

	now := &testapi.Widget{}
	if err := c.Get(context.Background(), key, now); err != nil {
		t.Fatal(err)
	}
	t.Logf("took over %d objects; w on the API server now: member %q, standby %q", n, now.Labels[m.shardLabel], now.Labels[m.standbyLabel])
	if q.Len() == 0 {
		return
	}
	req, _ := q.Get()
	if v, _ := m.gate.begin(req.NamespacedName); v == admit {
		m.gate.end(req.NamespacedName)
		t.Errorf("member a runs a pass of %s, which it let go and which live member %q owns on the API server: "+
			"the takeover, listed before the drain, cleared the drain's mark (two members reconcile the object)", key, now.Labels[m.shardLabel])
	}
	// A later request of w (a watch of another kind, a requeue) is
	// admitted too for as long as a's right lasts.
	if v, _ := m.gate.begin(key); v == admit {
		m.gate.end(key)
		t.Errorf("a later request of %s is admitted on member a while %q owns it", key, now.Labels[m.shardLabel])
	}
}
