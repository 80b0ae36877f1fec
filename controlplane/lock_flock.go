//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package controlplane

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock on f without blocking. It reports false
// when another open file description holds the lock, in this process or
// another one.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
		return false, nil
	default:
		return false, err
	}
}

// unlockFile releases the lock taken by tryLock.
func unlockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
