// Package fairqueue is a controller work queue that is fair across groups
// of objects, by default their namespaces: a namespace with ten thousand
// objects to reconcile does not make the objects of another wait for all
// of them. Among the ready items of the highest priority, Get takes one
// item of each group in turn. Failing objects wait out their backoff
// apart, taking no worker until they are due.
//
// It has the semantics of controller-runtime's priority queue
// (priorityqueue.PriorityQueue): each item is queued once, at the highest
// priority and the soonest time it was added with, and is never handed to
// two workers at once. bosun's Builder uses it by default
// (Builder.WithFairQueue changes the grouping); a plain controller-runtime
// controller uses it through controller.Options.NewQueue:
//
//	ctrl.NewControllerManagedBy(mgr).For(&v1.Shop{}).
//		WithOptions(controller.Options{NewQueue: fairqueue.NewQueue(nil)}).
//		Complete(r)
//
// Its metrics are controller-runtime's workqueue metrics (see
// ControllerRuntimeMetrics).
//
// # Prior art
//
// The design follows the proposal for fair queueing in controller-runtime's
// priority queue (kubernetes-sigs/controller-runtime pull request 3261):
// fairness among the items of one priority only, across the keys that a
// function of the item gives, such as its namespace. The queue keeps the interface of
// priorityqueue.PriorityQueue, so that a controller can drop it for
// controller-runtime's own once that queue is fair, without other changes.
//
// Maturity: experimental. It stands in until controller-runtime's priority queue is fair.
package fairqueue
