//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package controlplane

import (
	"os"
	"sync"
)

// lockedFiles holds the lock files taken in this process. Platforms without
// flock get a lock that only works between goroutines of one process.
var lockedFiles sync.Map

// tryLock takes the in-process lock named by f's path without blocking.
func tryLock(f *os.File) (bool, error) {
	_, taken := lockedFiles.LoadOrStore(f.Name(), f)
	return !taken, nil
}

// unlockFile releases the lock taken by tryLock.
func unlockFile(f *os.File) error {
	lockedFiles.Delete(f.Name())
	return nil
}
