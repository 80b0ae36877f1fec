package children

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
)

// reportKinds sets the condition of each declared kind from the readiness of
// its desired children (see kindCondition).
func reportKinds[T client.Object](s *Step[T], req *bosun.Pass[T], p *pass) {
	if _, ok := any(req.Object).(conditions.Object); !ok {
		return
	}
	ks, _ := s.kinds(req.Client.Scheme())
	now := metav1.Now()
	req.UpdateConditions(func(conds *[]metav1.Condition) {
		for i := range ks {
			cond := kindCondition(&ks[i], p.children)
			cond.ObservedGeneration = req.Object.GetGeneration()
			conditions.Set(conds, cond, now)
		}
	})
}

// kindCondition returns the condition of kind k over the desired children
// of a pass (those of other kinds are skipped): False with the reason
// RollingUpdate while some are held back by k's MaxUnavailable, counting
// the updated (ready), waiting (held) and in progress (not ready) ones;
// else False with the reason NotReady while some are missing or not
// ready; else True.
func kindCondition(k *kind, children []*child) metav1.Condition {
	var notReady []string
	total, held := 0, 0
	for _, c := range children {
		if c.kind.gvk != k.gvk {
			continue
		}
		total++
		switch {
		case c.blocked:
			notReady = append(notReady, c.ref.Name+": held by an object the set may not write")
		case c.held:
			held++
		case c.waiting:
			notReady = append(notReady, c.ref.Name+": changed since the pass read it, looking again")
		case c.live == nil:
			notReady = append(notReady, c.ref.Name+": not created")
		default:
			if ready, msg := k.ready(c.live); !ready {
				if msg == "" {
					msg = "not ready"
				}
				notReady = append(notReady, c.ref.Name+": "+msg)
			}
		}
	}
	sort.Strings(notReady)
	cond := metav1.Condition{Type: k.condition, Status: metav1.ConditionTrue, Reason: string(ReasonReady)}
	switch {
	case held > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, string(ReasonRollingUpdate)
		cond.Message = fmt.Sprintf("%d of %d %s updated, %d waiting, %d in progress", total-held-len(notReady), total, k.gvk.Kind, held, len(notReady))
		if len(notReady) > 0 {
			cond.Message += ": " + listSome(notReady, maxListed)
		}
	case len(notReady) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, string(ReasonNotReady)
		cond.Message = fmt.Sprintf("%d of %d %s not ready: %s", len(notReady), total, k.gvk.Kind, listSome(notReady, maxListed))
	case total == 0:
		cond.Message = "no " + k.gvk.Kind + " desired"
	default:
		cond.Message = fmt.Sprintf("%d %s ready", total, k.gvk.Kind)
	}
	return cond
}

// maxListed is how many children a condition message names at most.
const maxListed = 20

// listSome joins the first n of items, and says how many more there are.
// Each item is cut to a few hundred bytes, so the message stays small
// whatever the children are called or their readiness checks say.
func listSome(items []string, n int) string {
	const maxItem = 256
	shown := items[:min(n, len(items))]
	parts := make([]string, len(shown), len(shown)+1)
	for i, it := range shown {
		if len(it) > maxItem {
			it = conditions.Bound(it[:maxItem]) + "..."
		}
		parts[i] = it
	}
	if more := len(items) - len(shown); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, "; ")
}
