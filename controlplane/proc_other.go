//go:build !unix

package controlplane

import (
	"os"
	"syscall"
)

// sysProcAttr returns no special attributes where process groups are not
// available.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// terminate ends p; without signals there is no polite way to ask.
func terminate(p *os.Process) error { return p.Kill() }
