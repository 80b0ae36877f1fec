package flow

import (
	"strconv"
	"strings"
)

// Describe renders the tree of a as one line of text, for example
//
//	Sequence(Join(A, B), Timeout(C, 1s))
//
// where A, B and C are the descriptions of leaf actions. The forms are Sequence(...),
// Join(...), OrderedJoin(...), ParallelJoin(...), Timeout(a, d), If(cond, a),
// IfElse(cond, a, b), When(a), Retry(a, limit) or Retry(a, limit, interval),
// Shared(a) and Nop. WithHooks is transparent and renders as its action. An action
// that is not a combinator of this package renders as its Description. The
// Description of a combinator is this rendering, made on first use and then kept.
func Describe(a Action) string {
	var b strings.Builder
	describe(&b, a)
	return b.String()
}

func describe(b *strings.Builder, a Action) {
	switch x := a.(type) {
	case nil:
		b.WriteString("<nil>")
	case *group:
		b.WriteString(x.kind.String())
		b.WriteByte('(')
		for i, c := range x.actions {
			if i > 0 {
				b.WriteString(", ")
			}
			describe(b, c)
		}
		b.WriteByte(')')
	case *timeoutAction:
		b.WriteString("Timeout(")
		describe(b, x.a)
		b.WriteString(", ")
		b.WriteString(x.d.String())
		b.WriteByte(')')
	case *ifAction:
		if x.hasElse {
			b.WriteString("IfElse(")
		} else {
			b.WriteString("If(")
		}
		b.WriteString(strconv.FormatBool(x.cond))
		b.WriteString(", ")
		describe(b, x.then)
		if x.hasElse {
			b.WriteString(", ")
			describe(b, x.els)
		}
		b.WriteByte(')')
	case *whenAction:
		b.WriteString("When(")
		describe(b, x.a)
		b.WriteByte(')')
	case *retryAction:
		b.WriteString("Retry(")
		describe(b, x.a)
		b.WriteString(", ")
		b.WriteString(strconv.Itoa(x.limit))
		if x.interval > 0 {
			b.WriteString(", ")
			b.WriteString(x.interval.String())
		}
		b.WriteByte(')')
	case *sharedAction:
		b.WriteString("Shared(")
		describe(b, x.a)
		b.WriteByte(')')
	case *hookedAction:
		describe(b, x.a)
	default:
		b.WriteString(a.Description())
	}
}

// Optimize returns an Action equivalent to a with a simpler tree:
//
//   - nested groups of the same kind are flattened: Sequence in Sequence, Join in
//     Join, OrderedJoin in OrderedJoin, ParallelJoin in ParallelJoin;
//   - Nop children of groups are dropped; an empty group becomes Nop, and a
//     Sequence, Join or OrderedJoin of one action becomes that action;
//   - If(true, a) becomes a, If(false, a) becomes Nop, IfElse picks its branch;
//   - nested Timeouts keep the shorter duration: Timeout(1s, Timeout(2s, a)) and
//     Timeout(2s, Timeout(1s, a)) both become Timeout(1s, a);
//   - Retry(1, a) becomes a, and Retry, If and Shared around Nop become Nop.
//
// Optimisation never changes results: for the same outcomes of the leaf actions, the
// optimised workflow runs the same leaf actions (in the same order where the original
// promises one) and returns the same outcome. What may differ is what is not a result:
// hooks see fewer combinator nodes, a timeout error names the action the optimised
// Timeout wraps, and with fewer groups the context is checked at fewer points, so a
// cancellation that arrives after the last leaf action started may go unreported. A
// ParallelJoin of one action is kept, because it turns a panic into an error. Each
// Shared is rewritten once, so its uses stay one Shared. WithHooks is kept (its action
// is optimised) and nothing is flattened through it. Parts that need no change are
// returned as they are.
func Optimize(a Action) Action {
	o := optimizer{shared: make(map[*sharedAction]optimized)}
	r, _ := o.opt(a)
	return r
}

// optimized is the rewrite of a node and whether it differs from the node.
type optimized struct {
	a       Action
	changed bool
}

type optimizer struct {
	shared map[*sharedAction]optimized
}

// opt returns the optimised form of a and whether it differs from a. Actions are not
// compared with ==, because an Action may be of a type that cannot be compared.
func (o *optimizer) opt(a Action) (Action, bool) {
	switch x := a.(type) {
	case *group:
		return o.optGroup(x)
	case *timeoutAction:
		inner, changed := o.opt(x.a)
		if t, ok := inner.(*timeoutAction); ok {
			return Timeout(min(x.d, t.d), t.a), true
		}
		if !changed {
			return x, false
		}
		return Timeout(x.d, inner), true
	case *ifAction:
		switch {
		case x.cond:
			r, _ := o.opt(x.then)
			return r, true
		case x.hasElse:
			r, _ := o.opt(x.els)
			return r, true
		default:
			return Nop(), true
		}
	case *whenAction:
		inner, changed := o.opt(x.a)
		if !changed {
			return x, false
		}
		return When(x.pred, inner), true
	case *retryAction:
		inner, changed := o.opt(x.a)
		switch {
		case isNop(inner) || x.limit == 1:
			return inner, true
		case !changed:
			return x, false
		default:
			return Retry(x.limit, x.interval, inner), true
		}
	case *sharedAction:
		if r, ok := o.shared[x]; ok {
			return r.a, r.changed
		}
		r := optimized{a: x}
		switch inner, changed := o.opt(x.a); {
		case isNop(inner):
			r = optimized{a: inner, changed: true}
		case changed:
			r = optimized{a: Shared(inner), changed: true}
		}
		o.shared[x] = r
		return r.a, r.changed
	case *hookedAction:
		inner, changed := o.opt(x.a)
		if !changed {
			return x, false
		}
		return &hookedAction{base: base{shared: hasShared(inner)}, a: inner, set: x.set}, true
	}
	return a, false
}

func (o *optimizer) optGroup(g *group) (Action, bool) {
	changed := false
	kids := make([]Action, 0, len(g.actions))
	for _, c := range g.actions {
		oc, ch := o.opt(c)
		changed = changed || ch
		switch inner, ok := oc.(*group); {
		case isNop(oc):
			changed = true
		case ok && inner.kind == g.kind:
			changed = true
			kids = append(kids, inner.actions...)
		default:
			kids = append(kids, oc)
		}
	}
	switch {
	case len(kids) == 0:
		return Nop(), true
	case len(kids) == 1 && g.kind != kindParallelJoin:
		return kids[0], true
	case !changed:
		return g, false
	}
	return &group{base: base{shared: hasShared(kids...)}, kind: g.kind, actions: kids}, true
}
