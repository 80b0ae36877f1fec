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
// its desired children.
func reportKinds[T client.Object](s *Step[T], req *bosun.Pass[T], p *pass) {
	co, ok := any(req.Object).(conditions.Object)
	if !ok {
		return
	}
	ks, _ := s.kinds(req.Client.Scheme())
	conds := co.GetConditions()
	now := metav1.Now()
	for i := range ks {
		k := &ks[i]
		var notReady []string
		total := 0
		for _, c := range p.children {
			if c.kind.gvk != k.gvk {
				continue
			}
			total++
			if c.live == nil {
				notReady = append(notReady, c.ref.Name+": not created")
				continue
			}
			if ready, msg := k.ready(c.live); !ready {
				if msg == "" {
					msg = "not ready"
				}
				notReady = append(notReady, c.ref.Name+": "+msg)
			}
		}
		cond := metav1.Condition{Type: k.condition, Status: metav1.ConditionTrue, Reason: reasonReady, ObservedGeneration: req.Object.GetGeneration()}
		switch {
		case len(notReady) > 0:
			sort.Strings(notReady)
			cond.Status, cond.Reason = metav1.ConditionFalse, reasonNotReady
			cond.Message = fmt.Sprintf("%d of %d %s not ready: %s", len(notReady), total, k.gvk.Kind, listSome(notReady, maxListed))
		case total == 0:
			cond.Message = "no " + k.gvk.Kind + " desired"
		default:
			cond.Message = fmt.Sprintf("%d %s ready", total, k.gvk.Kind)
		}
		conditions.Set(&conds, cond, now)
	}
	co.SetConditions(conds)
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
