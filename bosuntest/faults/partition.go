package faults

import (
	"context"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"
)

// ErrPartitioned is (wrapped in) the error of a request a partitioned
// process makes, and of a watch that hung through a partition: what a
// connection to an API server that cannot be reached gives. It wraps
// syscall.ECONNREFUSED.
var ErrPartitioned = fmt.Errorf("faults: the API server cannot be reached: %w", syscall.ECONNREFUSED)

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

// Partition cuts the process off from the API server, as a network
// partition would, until Heal: its requests fail with ErrPartitioned after
// a second (those that are still waiting when Heal comes go through), and
// its open watches hang, delivering nothing, until the partition heals,
// when they break (an event that arrived meanwhile is lost with them, so
// the watcher must relist or resume). Leader election and shard Leases
// cannot be renewed meanwhile. External calls are not cut.
func (p *Process) Partition() {
	n := &p.net
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

// Heal ends the partition Partition began.
func (p *Process) Heal() {
	n := &p.net
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
// partitionConnectTimeout (ErrPartitioned), or until ctx ends.
func (p *Process) connect(ctx context.Context) error {
	cut, _, heal := p.net.state()
	if !cut {
		return nil
	}
	timer := time.NewTimer(partitionConnectTimeout)
	defer timer.Stop()
	select {
	case <-heal:
		return nil
	case <-timer.C:
		return ErrPartitioned
	case <-ctx.Done():
		return ctx.Err()
	case <-p.deadCh:
		return ErrCrashed
	}
}

// hangIfCut makes a watch read that began in partition epoch (or met a
// partition since) hang until the partition heals or the process dies,
// then fail: the connection broke while it was cut. It returns nil while
// no partition has begun since epoch.
func (p *Process) hangIfCut(epoch int) error {
	cut, now, heal := p.net.state()
	if now == epoch {
		return nil
	}
	p.net.mu.Lock()
	p.net.hung++
	p.net.mu.Unlock()
	if cut {
		select {
		case <-heal:
		case <-p.deadCh:
			return ErrCrashed
		}
	}
	return fmt.Errorf("faults: a watch hung through a partition: %w: %w", ErrPartitioned, io.ErrUnexpectedEOF)
}

// hungReads returns how many watch reads a partition broke.
func (n *network) hungReads() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hung
}
