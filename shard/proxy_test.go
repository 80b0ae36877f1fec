package shard_test

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// partition is a TCP proxy on 127.0.0.1 in front of the API server that
// can cut one replica off from it and let it back: the replica's
// rest.Config goes through it (config), the others' do not.
type partition struct {
	t      *testing.T
	ln     net.Listener
	target string

	mu sync.Mutex
	// mode is what happens to a new connection.
	mode partitionMode
	// open are both ends of every connection being passed on.
	open map[net.Conn]struct{}
	// held are the connections accepted and never answered (hang).
	held map[net.Conn]struct{}
}

// partitionMode is what the proxy does with a connection.
type partitionMode int

const (
	// forward: connections reach the API server.
	forward partitionMode = iota
	// refuse: new connections are closed at once, as by a host that
	// resets them.
	refuse
	// hang: new connections are accepted and never answered, as across
	// a network that drops packets.
	hang
)

// newPartition starts a proxy to the API server of cfg; it stops with
// the test.
func newPartition(t *testing.T, cfg *rest.Config) *partition {
	t.Helper()
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &partition{t: t, ln: ln, target: u.Host, open: map[net.Conn]struct{}{}, held: map[net.Conn]struct{}{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.accept()
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		p.cut(forward)
	})
	return p
}

// config returns a copy of cfg that reaches the API server through the
// proxy.
func (p *partition) config(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Host = "https://" + p.ln.Addr().String()
	return c
}

// cut closes every connection open through the proxy, open watches
// included, and treats new ones as mode says from now on; cut(forward)
// heals the partition.
func (p *partition) cut(mode partitionMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode = mode
	for c := range p.open {
		_ = c.Close()
	}
	clear(p.open)
	if mode != hang {
		for c := range p.held {
			_ = c.Close()
		}
		clear(p.held)
	}
}

func (p *partition) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		mode := p.mode
		switch mode {
		case refuse:
			_ = c.Close()
		case hang:
			p.held[c] = struct{}{}
		}
		p.mu.Unlock()
		if mode == forward {
			go p.relay(c)
		}
	}
}

// relay passes c on to the API server until either side closes or the
// proxy cuts it.
func (p *partition) relay(c net.Conn) {
	s, err := net.DialTimeout("tcp", p.target, 10*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.mode != forward {
		p.mu.Unlock()
		_ = c.Close()
		_ = s.Close()
		return
	}
	p.open[c], p.open[s] = struct{}{}, struct{}{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	copyHalf := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src) // a cut connection ends here
		_ = dst.Close()
		_ = src.Close()
	}
	wg.Add(2)
	go copyHalf(s, c)
	go copyHalf(c, s)
	wg.Wait()
	p.mu.Lock()
	delete(p.open, c)
	delete(p.open, s)
	p.mu.Unlock()
}
