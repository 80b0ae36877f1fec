package managed

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/tuning"
)

// Sizes of BenchmarkConnectionSecretCache: a namespace of unrelated
// Secrets, each with secretBytes of data, and a few connection Secrets.
const (
	unrelatedSecrets  = 2000
	connectionSecrets = 20
	secretBytes       = 1024
)

// BenchmarkConnectionSecretCache measures the live heap of a manager's
// cache of Secrets over a namespace of 2,000 unrelated Secrets of 1 KiB
// and 20 connection Secrets: as the step's watch of connection Secrets
// makes it, every Secret, and limited by CacheConnectionSecretsOnly; both
// with tuning.LeanCache, as package operator makes caches. It reports each
// heap in MiB and the limited cache's as a share of the other's, measured
// in the same run.
func BenchmarkConnectionSecretCache(b *testing.B) {
	cp := shared.ControlPlane(b)
	ns := bosuntest.Namespace(b, cp.Client)
	fillSecrets(b, cp, ns)
	var all, limited float64
	for b.Loop() {
		all += cacheHeap(b, cp, ns, func(*cache.Options) {})
		limited += cacheHeap(b, cp, ns, CacheConnectionSecretsOnly)
	}
	n := float64(b.N)
	b.ReportMetric(all/n/(1<<20), "all-MiB")
	b.ReportMetric(limited/n/(1<<20), "limited-MiB")
	b.ReportMetric(limited/all, "limited/all")
}

// fillSecrets creates the Secrets of BenchmarkConnectionSecretCache in ns,
// eight at a time.
func fillSecrets(b *testing.B, cp *controlplane.ControlPlane, ns string) {
	b.Helper()
	data := make([]byte, secretBytes)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	work := make(chan int)
	errs := make(chan error, unrelatedSecrets+connectionSecrets)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range work {
				s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("unrelated-%d", i)}, Data: map[string][]byte{"data": data}}
				if i >= unrelatedSecrets {
					s.Name = fmt.Sprintf("conn-%d", i)
					s.Labels = map[string]string{LabelConnectionSecret: "true"}
				}
				if err := cp.Client.Create(b.Context(), s); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range unrelatedSecrets + connectionSecrets {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatalf("creating the Secrets: %v", err)
	}
}

// cacheHeap starts a cache of the Secrets of ns with the options limit
// leaves, waits until it has listed them, and returns by how much it grew
// the live heap.
func cacheHeap(b *testing.B, cp *controlplane.ControlPlane, ns string, limit func(*cache.Options)) float64 {
	b.Helper()
	hc, err := rest.HTTPClientFor(cp.Config)
	if err != nil {
		b.Fatal(err)
	}
	o := cache.Options{Scheme: cp.Scheme, HTTPClient: hc, DefaultNamespaces: map[string]cache.Config{ns: {}}}
	tuning.LeanCache(&o)
	limit(&o)
	before := liveHeap()
	c, err := cache.New(cp.Config, o)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.Start(ctx)
	}()
	if _, err := c.GetInformer(ctx, &corev1.Secret{}); err != nil {
		b.Fatal(err)
	}
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("the cache did not sync")
	}
	list := &corev1.SecretList{}
	if err := c.List(ctx, list); err != nil {
		b.Fatal(err)
	}
	grown := liveHeap() - before
	runtime.KeepAlive(c)
	cancel()
	<-done
	return grown
}

// liveHeap returns the bytes of the live heap, after a collection.
func liveHeap() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc)
}
