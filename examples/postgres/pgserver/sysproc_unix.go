//go:build unix && !linux

package pgserver

import "syscall"

// sysProcAttr runs a child as who (when set). Only Linux can tie the
// child's life to this process, so parentDeath is ignored here.
func sysProcAttr(who *runAs, _ bool) (*syscall.SysProcAttr, error) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if who != nil {
		attr.Credential = &syscall.Credential{Uid: who.uid, Gid: who.gid}
	}
	return attr, nil
}
