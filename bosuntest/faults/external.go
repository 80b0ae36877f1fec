package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/bosunkit/bosun/managed"
)

// externalHook is the managed.CallHook of a process.
type externalHook struct{ p *Process }

// BeforeCall implements managed.CallHook.
func (h externalHook) BeforeCall(ctx context.Context, c managed.ExternalCall) error {
	if h.p.dead() {
		return ErrCrashed
	}
	if c.Op == "delete" && h.p.failDeletes.Load() {
		// Recorded here: a call BeforeCall refuses never reaches
		// AfterCall.
		h.p.record(Call{External: true, Verb: c.Op, Resource: c.Step, Namespace: c.Namespace, Name: c.Name, UID: c.UID,
			ExternalName: c.ExternalName, Err: ErrDeleteRefused.Error()})
		return ErrDeleteRefused
	}
	if d := h.p.plan.SlowExternal; d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return fmt.Errorf("faults: a slow external call: %w", ctx.Err())
		}
		if h.p.dead() {
			return ErrCrashed
		}
	}
	return nil
}

// AfterCall implements managed.CallHook.
func (h externalHook) AfterCall(_ context.Context, c managed.ExternalCall, err error) error {
	p := h.p
	call := Call{External: true, Verb: c.Op, Resource: c.Step, Namespace: c.Namespace, Name: c.Name, UID: c.UID, ExternalName: c.ExternalName}
	if err != nil {
		call.Err = err.Error()
	}
	if p.dead() {
		if c.Mutating() {
			call.AfterCrash = true
			p.record(call)
		}
		return ErrCrashed
	}
	if !c.Mutating() {
		p.reads.Add(1)
		return err
	}
	if p.record(call) {
		p.Crash()
		if p.plan.Crash.During {
			return fmt.Errorf("%w: %w", managed.ErrOutcomeUnknown, errResponseLost)
		}
	}
	return err
}
