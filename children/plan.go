package children

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
)

// Ref names a child in a Plan.
type Ref struct {
	// Kind is the child's kind, such as "ConfigMap".
	Kind string
	// Namespace is empty for a cluster-scoped child.
	Namespace string
	// Name is the child's name.
	Name string
}

// String returns "Kind namespace/name", or "Kind name" without a namespace.
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// Plan is what a pass does to the children: the desired ones that are
// missing (Create) or differ from the live ones (Update), and the members
// of the set that are no longer desired (Delete). Each list is sorted.
type Plan struct {
	Create []Ref
	Update []Ref
	Delete []Ref
	// Held lists the desired children that differ from the live ones and
	// that the pass leaves for a later one, to keep the children of their
	// kind that are not ready within Kind.MaxUnavailable.
	Held []Ref
}

// Empty reports whether the plan changes nothing. A plan that only holds
// children back (Held) changes nothing in this pass.
func (p Plan) Empty() bool { return len(p.Create)+len(p.Update)+len(p.Delete) == 0 }

// child is one desired child in a pass.
type child struct {
	kind    *kind
	ref     Ref
	applied *unstructured.Unstructured // the form to apply, stamped
	live    client.Object              // nil when missing
	change  bool
	// held is set when the child differs from the live one but waits
	// for a later pass, under its kind's MaxUnavailable (change is then
	// false).
	held bool
	// blocked is set when an object the set may not write holds the
	// child's name (ChildExists, ChildConflict): the pass leaves the
	// child out, counts it as not ready, and writes the others.
	blocked bool
	// waiting is set when an apply of the child found an object other
	// than the one the pass read, one the set may write, that differs
	// from the desired form: the pass leaves it for a later one
	// (reportTaken), and counts it as not ready meanwhile.
	waiting bool
	id      string // unique within the pass: kind, namespace and name
}

// pass is what a pass works out before it changes anything.
type pass struct {
	children []*child
	prune    []client.Object
	// release are the members no longer desired that the step adopted:
	// they are given back, not deleted (see releaseChild).
	release []client.Object
	keep    []Ref
	plan    Plan
	// lagging is set when the cache does not show a write of this step
	// yet: the pass looks again after cacheRetry.
	lagging bool
	// blockers holds the objects found holding the name of a desired
	// child that the set may not write (see block).
	blockers map[blocker]blockState
	// conflicts are the errors of the desired children whose names such
	// objects hold: the pass writes the other children and fails with
	// them (see conflictErr).
	conflicts []error
	// lookedUp holds, by child id, whether a list of the API server found
	// the desired children it looked for (see lookUpUnseen).
	lookedUp map[string]bool
}

// isConflict reports whether err says that an object the set may not
// write holds the name of a desired child (ReasonChildConflict,
// ReasonChildExists).
func isConflict(err error) bool {
	var ce *conditions.Error
	return errors.As(err, &ce) && (ce.Reason == ReasonChildConflict || ce.Reason == ReasonChildExists)
}

// block records live, the object with the name of the desired child c, as
// one the set may not write: the parent's pass is run again when it
// changes or goes (see blockerHandler and pollBlockers). unseen tells that
// the cache does not hold it.
func (p *pass) block(c *child, live client.Object, unseen bool) {
	if p.blockers == nil {
		p.blockers = map[blocker]blockState{}
	}
	b := blocker{gvk: c.kind.gvk, key: client.ObjectKeyFromObject(live)}
	p.blockers[b] = blockState{resourceVersion: live.GetResourceVersion(), unseen: unseen}
}

// blockChild leaves c out of the pass's writes, its name held by an object
// the set may not write, for err, which the pass returns once it has
// written the other children (see conflictErr).
func (p *pass) blockChild(c *child, err error) {
	c.blocked, c.live, c.change, c.held = true, nil, false, false
	p.conflicts = append(p.conflicts, err)
	p.plan.Create = slices.DeleteFunc(p.plan.Create, func(r Ref) bool { return r == c.ref })
	p.plan.Update = slices.DeleteFunc(p.plan.Update, func(r Ref) bool { return r == c.ref })
}

// conflictErr is the error of a pass with conflicts: the first, which
// sets the condition, and how many more there are.
func (p *pass) conflictErr() error {
	switch len(p.conflicts) {
	case 0:
		return nil
	case 1:
		return p.conflicts[0]
	}
	return fmt.Errorf("%w (and %d more children blocked)", p.conflicts[0], len(p.conflicts)-1)
}

// preparePass reads the desired children, stamps them, compares them with the
// live ones, holds back the changes their kinds' MaxUnavailable leaves for
// later passes (holdBack) and finds the members to prune, into p.
func preparePass[T client.Object](ctx context.Context, s *Step[T], req *bosun.Pass[T], p *pass) error {
	scheme := req.Client.Scheme()
	ks, err := s.kinds(scheme)
	if err != nil {
		return conditions.Terminal(ReasonInvalidChildren, err)
	}
	desired, err := callDesired(ctx, s, req)
	if err != nil {
		return fmt.Errorf("computing the desired children: %w", err)
	}
	parent := req.Object
	parentGVK, err := apiutil.GVKForObject(parent, scheme)
	if err != nil {
		return fmt.Errorf("looking up the parent's kind: %w", err)
	}
	s.mem.expireParent(parent)
	// The members of the set, one list per kind: the live form of the
	// desired children that exist, and the candidates for pruning.
	members := map[string]client.Object{}
	var order []string
	for i := range ks {
		ms, err := listMembers(ctx, s, req, &ks[i])
		if err != nil {
			return err
		}
		for _, m := range ms {
			id := ks[i].gvk.String() + " " + m.GetNamespace() + "/" + m.GetName()
			members[id] = m
			order = append(order, id)
		}
	}
	wanted := map[string]bool{}
	for i, obj := range desired {
		c, err := stampChild(s, req, obj, i, ks, parentGVK)
		if err != nil {
			return err
		}
		c.id = c.kind.gvk.String() + " " + c.ref.Namespace + "/" + c.ref.Name
		if wanted[c.id] {
			return conditions.Terminal(ReasonInvalidChildren, fmt.Errorf("%s is desired twice", c.ref))
		}
		wanted[c.id] = true
		p.children = append(p.children, c)
	}
	lookUpUnseen(ctx, s, req, p, p.children, members)
	for _, c := range p.children {
		err := compareLive(ctx, s, req, p, c, members[c.id])
		if err == nil {
			err = recallApplied(ctx, s, req, p, c)
		}
		switch {
		case isConflict(err):
			// One object in the way holds back no other child.
			p.blockChild(c, err)
		case err != nil:
			return err
		}
	}
	holdBack(ks, p)
	for _, c := range p.children {
		switch {
		case c.blocked:
		case c.held:
			p.plan.Held = append(p.plan.Held, c.ref)
		case c.live == nil:
			p.plan.Create = append(p.plan.Create, c.ref)
		case c.change:
			p.plan.Update = append(p.plan.Update, c.ref)
		}
	}
	for _, id := range order {
		if !wanted[id] {
			markUnwanted(s, parent, p, members[id])
		}
	}
	for _, l := range []*[]Ref{&p.plan.Create, &p.plan.Update, &p.plan.Delete, &p.plan.Held} {
		sort.Slice(*l, func(i, j int) bool { return (*l)[i].String() < (*l)[j].String() })
	}
	return nil
}

// recallApplied checks a child c that compare found to need an apply against
// the step's memory of its last apply of c as desired: applied within
// cacheGrace, the cache has not caught up and the pass waits for it;
// applied earlier, the child is read from the API server (confirmLive).
// A child of a rolled-out kind the cache shows behind an apply of an
// earlier desired form is read from the API server too (readBehind).
func recallApplied[T client.Object](ctx context.Context, s *Step[T], req *bosun.Pass[T], p *pass, c *child) error {
	if !c.change {
		return nil
	}
	w, age, ok := s.mem.lastApply(req.Object, c.id, c.applied.GetAnnotations()[annotationHash])
	switch {
	case ok && age < cacheGrace:
		// The health of the child is judged from what the apply
		// returned.
		c.change, c.live = false, w.live
		p.lagging = true
	case ok:
		return confirmLive(ctx, s, req, c)
	case c.kind.MaxUnavailable > 0 && c.live != nil &&
		s.mem.behind(req.Object, c.id, c.live.GetAnnotations()[annotationHash]):
		return readBehind(ctx, s, req, p, c)
	}
	return nil
}

// readBehind reads from the API server the child c of a kind rolled out
// under MaxUnavailable when the cache shows it as it was before the step's
// latest apply of it, an apply of an earlier desired form (the parent
// changed again since): the cache's version may be ready where the live
// one is not, and the pacing of the roll-out goes by the live one. A child
// gone there is created again. Without an APIReader the cache is believed.
func readBehind[T client.Object](ctx context.Context, s *Step[T], req *bosun.Pass[T], p *pass, c *child) error {
	if req.APIReader == nil {
		return nil
	}
	live := c.kind.newObject()
	err := req.APIReader.Get(ctx, client.ObjectKey{Namespace: c.ref.Namespace, Name: c.ref.Name}, live)
	if apierrors.IsNotFound(err) {
		s.mem.forgetApply(req.Object, c.id)
		c.live, c.change = nil, true
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", c.ref, err)
	}
	if err := checkLive(s, req, c, live, false); err != nil {
		p.block(c, live, true)
		return err
	}
	req.Log.V(1).Info("cache behind the step's earlier apply of a rolled-out child, read it from the API server", "child", c.ref.String())
	c.live = live
	markAdopted(s, req, c, live, true)
	c.change, err = driftedLive(ctx, s, req, c, live)
	return err
}

// markUnwanted sorts a member m of the set that is no longer desired into p:
// kept (AnnotationPrune "false"), already going, deleted just now (the
// cache has not caught up), or to prune.
func markUnwanted[T client.Object](s *Step[T], parent client.Object, p *pass, m client.Object) {
	switch {
	case !m.GetDeletionTimestamp().IsZero():
	case m.GetAnnotations()[AnnotationPrune] == "false":
		p.keep = append(p.keep, refOf(m))
	case s.mem.recentDelete(parent, m.GetUID()):
		p.lagging = true
	case m.GetAnnotations()[annotationAdopted] == "true":
		p.release = append(p.release, m)
		p.plan.Update = append(p.plan.Update, refOf(m))
	default:
		p.prune = append(p.prune, m)
		p.plan.Delete = append(p.plan.Delete, refOf(m))
	}
}

// confirmLive reads the child c from the API server, when the step applied
// it as desired longer than cacheGrace ago and the cache still shows it
// missing or different: a cache that missed the apply's watch event is not
// taken for drift until its next relist. When the child on the API server
// is as desired, it is not applied again. Without an APIReader the cache
// is believed.
func confirmLive[T client.Object](ctx context.Context, s *Step[T], req *bosun.Pass[T], c *child) error {
	if req.APIReader == nil {
		return nil
	}
	live := c.kind.newObject()
	if err := req.APIReader.Get(ctx, client.ObjectKey{Namespace: c.ref.Namespace, Name: c.ref.Name}, live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading %s: %w", c.ref, err)
	}
	change, err := driftedLive(ctx, s, req, c, live)
	if err != nil {
		return err
	}
	if !change {
		req.Log.V(1).Info("cache behind the child's apply for longer than the grace, read it from the API server", "child", c.ref.String())
		c.live, c.change = live, false
	}
	return nil
}

// compareLive finds the live child c (see observeMember) and decides whether it
// must be applied: when it is missing, or has drifted from the applied
// form (see drifted). A child found up to date is forgotten from the
// recent writes: the cache has caught up with it.
func compareLive[T client.Object](ctx context.Context, s *Step[T], req *bosun.Pass[T], p *pass, c *child, member client.Object) error {
	live, err := observeMember(ctx, s, req, p, c, member)
	if err != nil {
		return err
	}
	if live == nil {
		c.change = true
		return nil
	}
	c.live = live
	markAdopted(s, req, c, live, member != nil)
	c.change, err = driftedLive(ctx, s, req, c, live)
	if err != nil {
		return err
	}
	if !c.change {
		s.mem.forgetApply(req.Object, c.id)
	}
	return nil
}

// markAdopted marks the applied form of c as adopted when WithAdoption
// takes live over from someone else (it is not a member, and not the
// set's), or took it over in an earlier pass (live is marked): the mark
// stays in every apply, so that the child is given back, not deleted,
// once it is no longer desired (see releaseChild).
func markAdopted[T client.Object](s *Step[T], req *bosun.Pass[T], c *child, live client.Object, member bool) {
	ann := live.GetAnnotations()
	// An unowned child that lost its labels still names its parent.
	named := s.unowned && ann[annotationOwnerNamespace] == req.Object.GetNamespace() && ann[annotationOwnerName] == req.Object.GetName()
	if !s.cfg.adopt || (ann[annotationAdopted] != "true" && (member || named || isOurs(s, req, live))) {
		return
	}
	applied := c.applied.GetAnnotations()
	if applied == nil {
		applied = map[string]string{}
	}
	applied[annotationAdopted] = "true"
	c.applied.SetAnnotations(applied)
}

// refOf returns the Ref of a live object.
func refOf(obj client.Object) Ref {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		kind = reflect.TypeOf(obj).Elem().Name()
	}
	return Ref{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

// driftedLive is drifted for the live child c as the pass read it. For a
// MetadataOnly kind, the fields the step's field manager owns tell drift
// (see drift), except where another manager wrote a Secret's data through
// stringData: the API server stores it in data and records the other
// manager as the owner of stringData, which it never stores and no later
// write takes from it, so the step keeps owning the data field it no
// longer holds. Such a Secret is read whole from the API server and
// compared by value, once for each of its versions: a version found in
// place is remembered, and judged by ownership again while the Secret
// does not change.
func driftedLive[T client.Object](ctx context.Context, s *Step[T], req *bosun.Pass[T], c *child, live client.Object) (bool, error) {
	owner := s.fieldOwner(req)
	if !c.kind.MetadataOnly {
		return drifted(c.applied, live, owner, false)
	}
	if c.kind.gvk != secretGVK || req.APIReader == nil || !stringDataWritten(live) ||
		s.mem.verifiedAt(req.Object, c.id) == live.GetResourceVersion() {
		return drifted(c.applied, live, owner, true)
	}
	whole := &unstructured.Unstructured{}
	whole.SetGroupVersionKind(c.kind.gvk)
	if err := req.APIReader.Get(ctx, client.ObjectKeyFromObject(live), whole); err != nil {
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("reading %s: %w", c.ref, err)
	}
	change, err := drifted(c.applied, whole, owner, false)
	if err == nil && !change {
		s.mem.rememberVerified(req.Object, c.id, whole.GetResourceVersion())
	}
	return change, err
}

// stringDataWritten reports whether a manager has written the stringData
// of the Secret live (the step never does: see foldStringData).
func stringDataWritten(live client.Object) bool {
	for _, e := range live.GetManagedFields() {
		if e.FieldsV1 == nil {
			continue
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(e.FieldsV1.GetRawBytes(), &top) == nil && top["f:stringData"] != nil {
			return true
		}
	}
	return false
}
