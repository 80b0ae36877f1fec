// Package panics recovers the panics of user code (a step, a desired-state
// function, an external call, a handler) into *conditions.PanicError, the
// one form in which bosun reports them.
package panics

import (
	"runtime/debug"

	"github.com/bosunkit/bosun/conditions"
)

// Catch calls fn and returns nil when it returns. When fn panics, Catch
// recovers and returns a *conditions.PanicError naming what, with the
// panic value and the stack of the panicking goroutine. A fn that has
// results assigns them to variables of its caller, which stay as they were
// when it panics.
func Catch(what string, fn func()) (pe *conditions.PanicError) {
	defer func() {
		if v := recover(); v != nil {
			pe = &conditions.PanicError{Step: what, Value: v, Stack: debug.Stack()}
		}
	}()
	fn()
	return nil
}
