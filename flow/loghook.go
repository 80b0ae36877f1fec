package flow

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

type logHook struct{}

type logStartKey struct{}

// LogHook returns a Hook that logs every action with the logr.Logger of the context
// (logr.FromContextOrDiscard). At verbosity 1 it logs "action started" before and
// "action finished" after each action, with the keys action (the description),
// duration and requeueAfter, and exit=true when the action exited with ErrExit. A real
// error of a leaf action (one that is not a combinator of this package) is logged at
// error level as "action failed", with the same keys; a combinator passes its
// children's errors on, so its "action finished" line carries them under the key error
// instead of logging them a second time.
func LogHook() Hook { return logHook{} }

func (logHook) PreRun(ctx context.Context, a Action) context.Context {
	if log := logr.FromContextOrDiscard(ctx).V(1); log.Enabled() {
		log.Info("action started", "action", a.Description())
	}
	return context.WithValue(ctx, logStartKey{}, time.Now())
}

func (logHook) PostRun(ctx context.Context, a Action, res reconcile.Result, err error) {
	var d time.Duration
	if start, ok := ctx.Value(logStartKey{}).(time.Time); ok {
		d = time.Since(start)
	}
	log := logr.FromContextOrDiscard(ctx)
	real := stripExit(err)
	_, isComposite := a.(composite)
	if real != nil && !isComposite {
		log.Error(real, "action failed", "action", a.Description(), "duration", d, "requeueAfter", res.RequeueAfter)
		return
	}
	v := log.V(1)
	if !v.Enabled() {
		return
	}
	kv := []any{"action", a.Description(), "duration", d, "requeueAfter", res.RequeueAfter}
	if err != nil && real == nil {
		kv = append(kv, "exit", true)
	}
	if real != nil {
		kv = append(kv, "error", real)
	}
	v.Info("action finished", kv...)
}
