//go:build !unix

package pgserver

import (
	"errors"
	"syscall"
)

// sysProcAttr has nothing to set on systems without unix credentials; a
// different user cannot be requested there.
func sysProcAttr(who *runAs, _ bool) (*syscall.SysProcAttr, error) {
	if who != nil {
		return nil, errors.New("running postgres as another user is only supported on unix systems")
	}
	return nil, nil
}
