package pgserver

import "syscall"

// sysProcAttr runs a child as who (when set). With parentDeath the kernel
// sends the child SIGINT, a fast shutdown for postgres, when the thread that
// started it goes away, so a killed test binary does not leave servers
// behind.
func sysProcAttr(who *runAs, parentDeath bool) (*syscall.SysProcAttr, error) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if parentDeath {
		attr.Pdeathsig = syscall.SIGINT
	}
	if who != nil {
		attr.Credential = &syscall.Credential{Uid: who.uid, Gid: who.gid}
	}
	return attr, nil
}
