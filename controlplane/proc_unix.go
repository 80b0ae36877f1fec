//go:build unix

package controlplane

import (
	"os"
	"syscall"
)

// sysProcAttr puts kube-controller-manager into a process group of its own,
// as envtest does for kube-apiserver and etcd, so that a Ctrl-C meant for the
// tests does not reach it before Stop does.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// terminate asks p to exit.
func terminate(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
