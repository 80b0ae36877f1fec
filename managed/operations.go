package managed

import (
	"context"
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/managed/changelog"
)

// poller is the stage that follows the long operations Create and Update
// start (see OperationPoller): it polls the one recorded on the object
// before the pass observes, and records one an Update started.
type poller[T client.Object] struct {
	calls  *caller[T]
	rec    *recorder[T]
	log    *changes[T]
	write  *writer[T]
	secret *secrets[T]
	// short is how soon a running operation is polled again.
	short time.Duration
	now   func() time.Time
}

// newPoller returns the poller of a step configured by cfg, made of its
// other stages.
func newPoller[T client.Object](cfg *config, calls *caller[T], rec *recorder[T], log *changes[T], write *writer[T], secret *secrets[T]) *poller[T] {
	return &poller[T]{calls: calls, rec: rec, log: log, write: write, secret: secret, short: cfg.short, now: cfg.now}
}

// poll polls the long operation recorded on the object, if any.
// wait reports that the pass ends here, with res and err: the operation
// is still running, the poll failed, or the operation failed. Otherwise
// there was none, or it is done and forgotten, and the pass goes on.
func (s *poller[T]) poll(ctx context.Context, req *bosun.Pass[T], cl ExternalClient[T]) (wait bool, res ctrl.Result, err error) {
	obj := req.Object
	keys := s.write.keys
	op, ok := operationOf(keys.view(obj))
	if !ok {
		return false, ctrl.Result{}, nil
	}
	name := keys.name(obj)
	p, ok := cl.(OperationPoller[T])
	if !ok || op.Token == "" || op.Kind != opCreate && op.Kind != opUpdate {
		req.Log.Info("cannot poll the recorded operation, observing instead", "operation", op.Kind, "externalName", name, "poller", ok)
		keys.mark(obj, map[string]string{annotationOperation: ""})
		return false, ctrl.Result{}, nil
	}
	st, perr := callExternal(ctx, s.calls, req, opPollOperation, obj, func(ctx context.Context) (OperationStatus, error) {
		return p.PollOperation(ctx, obj, op)
	})
	if perr != nil {
		return true, ctrl.Result{}, s.rec.fail(ReasonPollOperationFailed, fmt.Errorf("polling the %s operation of %s: %w", op.Kind, describe(name), perr))
	}
	if !st.Done {
		if op.Kind == opCreate {
			s.rec.unavailable(obj, ReasonCreating, "the external system is creating the resource")
			s.rec.setSynced(obj, "")
		} else {
			s.rec.unsynced(obj, ReasonUpdating,
				fmt.Sprintf("the external system is updating %s to the spec", describe(name)))
		}
		return true, ctrl.Result{RequeueAfter: s.short}, nil
	}
	forget := map[string]string{annotationOperation: ""}
	outcome := changelog.OutcomeSucceeded
	if st.Err != nil {
		outcome = changelog.OutcomeFailed
		if op.Kind == opCreate {
			// What the create left is not taken for the object's.
			forget[annotationCreateFailed] = formatTime(s.now())
		}
	}
	keys.mark(obj, forget)
	s.log.add(req, op.Kind, name, outcome, st.Err)
	if st.Err != nil {
		reason := ReasonCreateFailed
		if op.Kind == opUpdate {
			reason = ReasonUpdateFailed
		}
		return true, ctrl.Result{}, s.rec.fail(reason, fmt.Errorf("the %s operation of %s failed: %w", op.Kind, describe(name), st.Err))
	}
	req.Log.Info("external operation done", "operation", op.Kind, "externalName", name)
	if len(st.ConnectionDetails) > 0 {
		wctx, cancel := s.write.durable(ctx)
		defer cancel()
		if err := s.secret.publish(wctx, req, st.ConnectionDetails); err != nil {
			return true, ctrl.Result{}, err
		}
	}
	return false, ctrl.Result{}, nil
}

// start records the long operation an Update started, at once,
// so that a stop before the pass ends does not lose it.
func (s *poller[T]) start(ctx context.Context, req *bosun.Pass[T], op Operation) error {
	wctx, cancel := s.write.durable(ctx)
	defer cancel()
	if err := s.write.save(wctx, req, map[string]string{annotationOperation: operationValue(op)}); err != nil {
		return s.rec.fail(ReasonRecordCreateFailed, fmt.Errorf("recording the %s operation: %w", op.Kind, err))
	}
	return nil
}
