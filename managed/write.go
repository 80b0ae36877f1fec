package managed

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
)

// writer is the stage that writes the step's marks on the object in the
// middle of a pass: the pending create, the delete fence, the outcome of
// a create, a long operation started.
type writer[T client.Object] struct {
	// attempts and backoff are how often, and after how long a first
	// wait, save tries (WithOutcomeRetry); timeout bounds the writes
	// that survive a stop of the manager (Timing.Record).
	attempts int
	backoff  time.Duration
	timeout  time.Duration
	// keys are where the step keeps its annotations: the marks are given
	// by their default keys and written there.
	keys recordKeys
}

// newWriter returns the writer of a step configured by cfg.
func newWriter[T client.Object](cfg *config) *writer[T] {
	return &writer[T]{attempts: cfg.outcomeAttempts, backoff: cfg.outcomeBackoff, timeout: cfg.recordTimeout, keys: cfg.keys}
}

// save writes the outcome of a create (or another mark that must not be
// lost), retrying with backoff (WithOutcomeRetry). A conflict means the
// object changed meanwhile; it is read again and the write repeated on the
// new version.
func (w *writer[T]) save(ctx context.Context, req *bosun.Pass[T], outcome map[string]string) error {
	var err error
	b := wait.Backoff{Duration: w.backoff, Factor: 2, Steps: w.attempts}
	werr := wait.ExponentialBackoffWithContext(ctx, b, func(ctx context.Context) (bool, error) {
		if err = w.commit(ctx, req, outcome); err == nil {
			return true, nil
		}
		if apierrors.IsConflict(err) {
			if rerr := w.reload(ctx, req); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		return false, nil
	})
	switch {
	case werr == nil:
		return nil
	case err == nil || ctx.Err() != nil && errors.Is(werr, ctx.Err()):
		// The context ended before a try, or between two.
		return errors.Join(err, werr)
	}
	return err
}

// reload reads the object from the API server into req (see
// bosun.Pass.Reload), keeping the external name the pass has set.
func (w *writer[T]) reload(ctx context.Context, req *bosun.Pass[T]) error {
	n := w.keys.name(req.Object)
	if err := req.Reload(ctx); err != nil {
		return err
	}
	if n != "" && w.keys.name(req.Object) == "" {
		w.keys.setName(req.Object, n)
	}
	return nil
}

// commit writes the given annotation changes (an empty value deletes) to
// the object at once, with the changes of metadata and spec the pass has
// made so far, guarded by the resourceVersion the pass knows (see
// bosun.Pass.Commit), so that the engine's final save builds on the new
// version.
// The guard fails with Conflict when the object changed since the pass
// read it, and so also when it was deleted and made again under the same
// name (the new object has another resourceVersion); with NotFound when it
// is gone.
func (w *writer[T]) commit(ctx context.Context, req *bosun.Pass[T], set map[string]string) error {
	w.keys.mark(req.Object, set)
	return req.Commit(ctx)
}

// durable returns a context for the writes that must not be lost to a stop
// of the manager (the outcome of a Create, the credentials it returned): it
// keeps ctx's values, not its cancellation, and ends after the record
// timeout.
func (w *writer[T]) durable(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), w.timeout)
}
