package faults

import (
	"context"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"
)

// errPartitioned is (wrapped in) the error of a request a partitioned
// process makes, and of a watch that hung through a partition: what a
// connection to an API server that cannot be reached gives. It wraps
// syscall.ECONNREFUSED.
var errPartitioned = fmt.Errorf("faults: the API server cannot be reached: %w", syscall.ECONNREFUSED)

// partitionConnectTimeout is how long a request of a partitioned process
// waits for the partition to heal before it fails, as a connection attempt
// to a host that does not answer times out.
const partitionConnectTimeout = time.Second

// network is a process's link to the API server, which Partition cuts and
// Heal restores.
type network struct {
	mu    sync.Mutex
	cut   bool
	epoch int           // partitions begun so far
	heal  chan struct{} // closed when the current partition heals
	n     int
	hung  int // watch reads whose data a partition lost
}

// begin cuts the link, unless it is cut already.
func (n *network) begin() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cut {
		return
	}
	n.cut = true
	n.epoch++
	n.n++
	n.heal = make(chan struct{})
}

// end restores the link, unless it is whole.
func (n *network) end() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.cut {
		return
	}
	n.cut = false
	close(n.heal)
}

// state returns whether the link is cut, the partitions begun so far and
// the channel closed when the current partition heals.
func (n *network) state() (bool, int, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cut, n.epoch, n.heal
}

// partitions returns how many partitions have begun.
func (n *network) partitions() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.n
}

// connect waits while the link is cut: until it heals (nil), for at most
// partitionConnectTimeout (errPartitioned), until ctx ends, or until dead
// is closed (ErrCrashed).
func (n *network) connect(ctx context.Context, dead <-chan struct{}) error {
	cut, _, heal := n.state()
	if !cut {
		return nil
	}
	timer := time.NewTimer(partitionConnectTimeout)
	defer timer.Stop()
	select {
	case <-heal:
		return nil
	case <-timer.C:
		return errPartitioned
	case <-ctx.Done():
		return ctx.Err()
	case <-dead:
		return ErrCrashed
	}
}

// hangIfCut makes a watch read that began in partition epoch (or met a
// partition since) hang until the partition heals or dead is closed (the
// process died), then fail: the connection broke while it was cut. It
// returns nil while no partition has begun since epoch.
func (n *network) hangIfCut(epoch int, dead <-chan struct{}) error {
	cut, now, heal := n.state()
	if now == epoch {
		return nil
	}
	n.mu.Lock()
	n.hung++
	n.mu.Unlock()
	if cut {
		select {
		case <-heal:
		case <-dead:
			return ErrCrashed
		}
	}
	return fmt.Errorf("faults: a watch hung through a partition: %w: %w", errPartitioned, io.ErrUnexpectedEOF)
}

// hungReads returns how many watch reads a partition broke.
func (n *network) hungReads() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hung
}
