package fairqueue_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/fairqueue"
)

// A busy namespace and a quiet one take turns.
func Example() {
	q := fairqueue.New("shops", fairqueue.Options[reconcile.Request]{Key: fairqueue.ByNamespace, Metrics: nopMetrics{}})
	defer q.ShutDown()
	for _, name := range []string{"a", "b", "c", "d"} {
		q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "busy", Name: name}})
	}
	q.Add(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "quiet", Name: "x"}})
	for q.Len() > 0 {
		req, _ := q.Get()
		fmt.Println(req)
		q.Done(req)
	}
	// Output:
	// busy/a
	// quiet/x
	// busy/b
	// busy/c
	// busy/d
}
