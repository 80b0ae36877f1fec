package controlplane

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"
)

// process is a program that a ControlPlane runs beside kube-apiserver and
// etcd (kube-controller-manager, kube-scheduler, kwok) until Stop.
type process struct {
	name string
	cmd  *exec.Cmd
	log  *outputLog
	// exited is closed once the process has exited; waitErr then says
	// how.
	exited  chan struct{}
	waitErr error
	// stopTimeout bounds how long it may take to stop after being asked.
	stopTimeout time.Duration
}

// startProcess runs the binary path with args, its output kept for error
// messages and copied to opts.Output.
func startProcess(name, path string, args []string, opts Options) (*process, error) {
	p := &process{
		name:        name,
		log:         &outputLog{max: 20},
		exited:      make(chan struct{}),
		stopTimeout: stopTimeoutOf(opts),
	}
	var out io.Writer = p.log
	if opts.Output != nil {
		out = io.MultiWriter(opts.Output, p.log)
	}
	p.cmd = exec.Command(path, args...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.SysProcAttr = sysProcAttr()
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s %s: %w", name, path, err)
	}
	go func() {
		err := p.cmd.Wait()
		if err == nil {
			err = errors.New("exit status 0")
		}
		p.waitErr = err
		close(p.exited)
	}()
	return p, nil
}

// exitErr returns an error if the process has exited, nil while it runs.
func (p *process) exitErr() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited: %w", p.name, p.waitErr)
	default:
		return nil
	}
}

// failed wraps err, a failure to get ready, with the last lines of the
// process's output and hint.
func (p *process) failed(err error, hint string) error {
	return fmt.Errorf("starting %s %s: %w\n\nlast lines of %s's output:\n%s\n\nhow to fix: %s",
		p.name, p.cmd.Path, err, p.name, p.log.tail(), hint)
}

// stop ends the process, politely first. It returns an error if the
// process had ended on its own before.
func (p *process) stop() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited while the control plane was running: %w\n\nlast lines of its output:\n%s",
			p.name, p.waitErr, p.log.tail())
	default:
	}
	_ = terminate(p.cmd.Process)
	select {
	case <-p.exited:
	case <-time.After(p.stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	return nil
}

// startHint tells what to do when a process of the control plane does not
// get ready.
func startHint(name string, startTimeout time.Duration) string {
	return fmt.Sprintf("the output above usually says what went wrong; if it was only slow (a busy machine), "+
		"raise Options.StartTimeout (now %s); Options.Output receives all of it. "+
		"A %s in the directory %s names is used instead of the one built into the cache; "+
		"remove it to go back to the built one.",
		startTimeout, name, assetsEnv)
}
