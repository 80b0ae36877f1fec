package children

// turn is what the pacing of a kind's changes (pace) knows of one desired
// child.
type turn struct {
	// missing is set when the child does not exist: it is created.
	missing bool
	// change is set when the live child differs from the desired one.
	change bool
	// stale is set when that difference is in the hash: the desired
	// child changed since it was applied. A change without it is drift,
	// an edit made behind the step's back.
	stale bool
	// ready is the readiness of the live child, by its kind's check.
	ready bool
}

// pace returns which of turns, the desired children of one kind in the
// order the DesiredFunc returned them, a pass holds back so that no more
// than maxUnavailable of them are not ready, counting those it changes as
// not ready. Zero or less holds nothing back.
//
// Every child that is not ready takes up the budget, whatever the cause:
// one created lately, one broken, one still rolling from an earlier pass.
// Children that cannot lose more are never held: a missing one (a create
// takes nothing away that served) and a stale one that is not ready (it
// serves nothing now, and a fix of a roll-out that broke it must reach
// it). A ready child that drifted is put back at once, as the step always
// does, and takes up the budget, since the repair may take it down. The
// stale children that are ready then go in order while the budget lasts;
// the rest are held.
func pace(turns []turn, maxUnavailable int) []bool {
	held := make([]bool, len(turns))
	if maxUnavailable <= 0 {
		return held
	}
	down := 0
	for _, t := range turns {
		if t.missing || !t.ready || (t.change && !t.stale) {
			down++
		}
	}
	for i, t := range turns {
		if t.missing || !t.stale || !t.ready {
			continue
		}
		if down < maxUnavailable {
			down++
			continue
		}
		held[i] = true
	}
	return held
}

// holdBack marks held the children of p that their kind's MaxUnavailable
// leaves for a later pass (see pace): they are not applied in this one.
// ks are the step's kinds.
func holdBack(ks []kind, p *pass) {
	for i := range ks {
		k := &ks[i]
		if k.MaxUnavailable <= 0 {
			continue
		}
		var of []*child
		var turns []turn
		for _, c := range p.children {
			if c.kind.gvk != k.gvk {
				continue
			}
			// A child held by an object the set may not write is as
			// unavailable as a missing one.
			t := turn{missing: c.live == nil, change: c.change}
			if c.live != nil {
				t.stale = c.change && c.live.GetAnnotations()[annotationHash] != c.applied.GetAnnotations()[annotationHash]
				t.ready, _ = k.ready(c.live)
			}
			of, turns = append(of, c), append(turns, t)
		}
		for j, h := range pace(turns, k.MaxUnavailable) {
			if h {
				of[j].held, of[j].change = true, false
			}
		}
	}
}
