package explain_test

import (
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/cmd/bosun/internal/explain"
)

// A Report, as Gather reads it from a cluster, written for people.
func ExampleReport_Write() {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	r := &explain.Report{
		Kind: "Memcached", Resource: "memcacheds.cache.example.bosun.dev", Namespace: "shop", Name: "cache",
		Generation: 1, ObservedGeneration: 1,
		Ready: &metav1.Condition{
			Type: "Ready", Status: metav1.ConditionFalse, Reason: "NotReady",
			Message: "waiting for 2 of 2 pods to be ready", LastTransitionTime: metav1.NewTime(now.Add(-time.Minute)),
		},
		Policy: explain.Policy{Value: "manage", Source: explain.PolicyFromDefault, Namespace: "shop"},
		Children: explain.Children{Found: 2, NotReady: []explain.Child{{
			Kind: "Deployment", Namespace: "shop", Name: "cache", Status: "0/2 replicas ready",
			Pods: "pods: 2 Pending; cache-7d9f-x2x: not scheduled yet",
		}}},
	}
	if err := r.Write(os.Stdout, now); err != nil {
		panic(err)
	}
	// Output:
	// Memcached shop/cache: not Ready
	//   Ready: False (NotReady) for 60s: waiting for 2 of 2 pods to be ready
	//   Generation 1: the status describes it.
	// Reconcile policy: manage, the default (no bosun.dev/reconcile-policy on the object or on namespace shop).
	// Children not ready (1 of 2):
	//   Deployment cache: 0/2 replicas ready
	//     pods: 2 Pending; cache-7d9f-x2x: not scheduled yet
}
