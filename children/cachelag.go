package children

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
)

// cacheGrace is how long after the step applied or deleted a child it
// takes a cache that does not show the change yet for one lagging behind:
// the pass waits for it (looking again after cacheRetry) instead of writing
// the same thing again. A child it shows missing or behind an apply is
// read from the API server first, all the same, so that one deleted since
// is made again at once and never reported ready (see observeMember and
// confirmRecalled). After cacheGrace the cache is believed, except
// that a child it shows differing from what the step applied is first read
// from the API server (see applyMemory).
const cacheGrace = 5 * time.Second

// cacheRetry is how soon a pass that waits for the cache looks again.
const cacheRetry = time.Second

// applyMemory is how long the step remembers the hash of a child it
// applied, past cacheGrace: while the cache still shows the child
// differing from it, the step reads the child from the API server before
// it applies it again (see confirmLive), so that a cache that missed the
// apply's watch event, until its next relist, does not make the step
// write the same thing again.
const applyMemory = 10 * time.Minute

// write is what memory holds of a child the step applied lately.
type write struct {
	hash string
	at   time.Time
	live client.Object // the child as the apply returned it; dropped after cacheGrace
}

// confirmRecalled reads from the API server each desired child of p that
// the pass judges from the remembered answer of the step's apply (see
// recallApplied): the cache shows it as it was before that apply, less
// than cacheGrace ago. A cache behind the apply is behind any later
// change too, and one that missed watch events shows none of them until
// its next relist, so what the API server says is what the pass goes by:
// a child gone is created again in this pass, one changed since (or made
// again by someone else) is applied again or blocks the pass as any
// other, and one as applied is judged from what the API server returned
// rather than from the older answer. A child the cache shows missing was
// read from the API server already (see observeMember) and is not
// recalled when it is gone there too.
//
// It costs one read per child the cache shows behind the step's apply of
// it, and nothing when the cache shows the children as applied. Without
// an APIReader the remembered answer is believed.
func confirmRecalled[T client.Object](ctx context.Context, s *Step[T], req *bosun.Pass[T], p *pass) error {
	if req.APIReader == nil {
		return nil
	}
	for _, c := range p.children {
		if c.change || c.live == nil || !s.mem.answered(req.Object, c.id, c.live) {
			continue
		}
		live := c.kind.newObject()
		err := req.APIReader.Get(ctx, client.ObjectKey{Namespace: c.ref.Namespace, Name: c.ref.Name}, live)
		if apierrors.IsNotFound(err) {
			req.Log.V(1).Info("child deleted since the step applied it, creating it again", "child", c.ref.String())
			s.mem.forgetApply(req.Object, c.id)
			c.live, c.change = nil, true
			p.plan.Create = insertRef(p.plan.Create, c.ref)
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", c.ref, err)
		}
		if err := checkLive(s, req, c, live, false); err != nil {
			p.block(c, live, true)
			if isConflict(err) {
				p.blockChild(c, err)
				continue
			}
			return err
		}
		change, err := driftedLive(ctx, s, req, c, live)
		if err != nil {
			return err
		}
		c.live, c.change = live, change
		if change {
			req.Log.V(1).Info("child changed since the step applied it, applying it again", "child", c.ref.String())
			p.plan.Update = insertRef(p.plan.Update, c.ref)
		}
	}
	return nil
}

// insertRef returns refs, sorted as a Plan's lists are, with r added in
// its place.
func insertRef(refs []Ref, r Ref) []Ref {
	i, _ := slices.BinarySearchFunc(refs, r, func(a, b Ref) int { return strings.Compare(a.String(), b.String()) })
	return slices.Insert(refs, i, r)
}
