package fairqueue_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/fairqueue"
)

// BenchmarkQueue adds 1,000 requests of 10 namespaces and takes them out
// again, through the fair queue and through controller-runtime's priority
// queue, in the same run.
func BenchmarkQueue(b *testing.B) {
	reqs := make([]reconcile.Request, 1000)
	for i := range reqs {
		reqs[i] = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: fmt.Sprintf("ns%d", i%10), Name: fmt.Sprintf("o%d", i)}}
	}
	run := func(b *testing.B, q priorityqueue.PriorityQueue[reconcile.Request]) {
		defer q.ShutDown()
		for b.Loop() {
			for _, r := range reqs {
				q.Add(r)
			}
			for range reqs {
				r, _ := q.Get()
				q.Done(r)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(reqs)), "ns/item")
	}
	b.Run("fair", func(b *testing.B) {
		run(b, fairqueue.New("bench", fairqueue.Options[reconcile.Request]{Key: fairqueue.ByNamespace, Metrics: nopMetrics{}}))
	})
	b.Run("controller-runtime", func(b *testing.B) {
		run(b, priorityqueue.New[reconcile.Request]("bench"))
	})
}
