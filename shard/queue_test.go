package shard

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// queueManager is a manager that only has controller options.
type queueManager struct {
	ctrl.Manager
	opts config.Controller
}

func (m queueManager) GetControllerOptions() config.Controller { return m.opts }

// TestControllerOptionsQueueFollowsUpstream: without a NewQueue of its
// own, the gated queue of ControllerOptions wraps the queue
// controller-runtime would make: the controller's UsePriorityQueue when
// set, else the manager's, else its priority queue.
func TestControllerOptionsQueueFollowsUpstream(t *testing.T) {
	for _, tc := range []struct {
		mgr, ctl *bool
		noMgr    bool
		want     bool // a priority queue
	}{
		{want: true},
		{noMgr: true, want: true},
		{mgr: ptr.To(false), want: false},
		{mgr: ptr.To(true), want: true},
		{mgr: ptr.To(false), ctl: ptr.To(true), want: true},
		{mgr: ptr.To(true), ctl: ptr.To(false), want: false},
		{noMgr: true, ctl: ptr.To(false), want: false},
	} {
		t.Run(fmt.Sprintf("manager %v controller %v no manager %v", ptr.Deref(tc.mgr, true), ptr.Deref(tc.ctl, true), tc.noMgr), func(t *testing.T) {
			m := &Member{gate: newGate(2 * time.Second), opts: Options{RenewPeriod: time.Second}}
			if !tc.noMgr {
				m.mgr = queueManager{opts: config.Controller{UsePriorityQueue: tc.mgr}}
			}
			opts := m.ControllerOptions(controller.Options{UsePriorityQueue: tc.ctl})
			q := opts.NewQueue("test", workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			_, priority := q.(*gatedPriorityQueue)
			if priority != tc.want {
				t.Errorf("queue %T, want a priority queue: %v", q, tc.want)
			}
		})
	}
}
