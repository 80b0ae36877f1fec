package children

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
)

// observeMember finds the live child c: member if it is a member of the set,
// else read from the cache (an object the set does not hold yet). A child
// the cache does not show is looked up on the API server before it is
// created, so an object the cache has not seen yet is not applied over;
// one missing there too was deleted, whatever the step remembers of
// applying it.
// It returns nil when the child does not exist, and the error of check
// when it exists but is not the set's to write; the object is then a
// blocker of the pass (see pass.block).
func observeMember[T client.Object](ctx context.Context, s *Step[T], req *bosun.Pass[T], p *pass, c *child, member client.Object) (client.Object, error) {
	live, unseen := member, false
	if live == nil {
		key := client.ObjectKey{Namespace: c.ref.Namespace, Name: c.ref.Name}
		live = c.kind.newObject()
		err := req.Client.Get(ctx, key, live)
		if apierrors.IsNotFound(err) && req.APIReader != nil {
			// A child that a list of the pass looked for and did not
			// find (lookUpUnseen) is missing on the API server too.
			if found, listed := p.lookedUp[c.id]; found || !listed {
				live = c.kind.newObject()
				err = req.APIReader.Get(ctx, key, live)
			}
			switch {
			case err == nil:
				unseen = true
				req.Log.V(1).Info("child not in the cache yet, read from the API server", "child", c.ref.String())
			case apierrors.IsNotFound(err):
				// Gone on the API server too: an apply the step
				// remembers was of a child deleted since, not one the
				// cache has yet to show (see recallApplied). It is
				// created again in this pass, and not judged from the
				// apply's answer.
				s.mem.forgetApply(req.Object, c.id)
			}
		}
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", c.ref, err)
		}
	}
	if err := checkLive(s, req, c, live, member != nil); err != nil {
		p.block(c, live, unseen)
		return nil, err
	}
	return live, nil
}

// unseenListMin is the number of desired children of one kind and name,
// in as many namespaces, that are not members of the set, from which a pass
// looks them up on the API server with one list rather than one read
// each (see lookUpUnseen).
const unseenListMin = 8

// lookUpUnseen looks up on the API server, before the pass compares its
// children, the desired children of cs that are not members of the set,
// when at least unseenListMin of one kind share a name (one object kept
// in many namespaces, as a cluster-scoped parent or an unowned step
// does): one list of the metadata of the kind's objects of that name, in
// every namespace, answers for all of them, where observeMember would read
// each one the cache does not show. It records in p.lookedUp, for each
// child the list looked for, whether it found it; observeMember reads the
// ones found that the cache does not show, and takes the others for
// missing. The list is as fresh as a read. When it fails (an operator
// allowed to list the kind in some namespaces only is refused), the
// children are read one by one, and a refusal is remembered: the step does
// not ask again.
func lookUpUnseen[T client.Object](ctx context.Context, s *Step[T], req *bosun.Pass[T], p *pass, cs []*child, members map[string]client.Object) {
	if req.APIReader == nil {
		return
	}
	type group struct {
		k    *kind
		name string
	}
	groups := map[group][]*child{}
	for _, c := range cs {
		if members[c.id] != nil || c.ref.Namespace == "" || s.listRefused(c.kind.gvk) {
			continue
		}
		g := group{c.kind, c.ref.Name}
		groups[g] = append(groups[g], c)
	}
	for g, unseen := range groups {
		if len(unseen) < unseenListMin {
			continue
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(g.k.gvk.GroupVersion().WithKind(g.k.gvk.Kind + "List"))
		if err := req.APIReader.List(ctx, list, client.MatchingFields{"metadata.name": g.name}); err != nil {
			if apierrors.IsForbidden(err) {
				s.refuseList(g.k.gvk)
			}
			req.Log.V(1).Info("cannot list the children the cache does not show, reading them one by one", "kind", g.k.gvk.Kind, "name", g.name, "error", err.Error())
			continue
		}
		found := make(map[string]bool, len(list.Items))
		for _, it := range list.Items {
			found[it.Namespace] = true
		}
		if p.lookedUp == nil {
			p.lookedUp = map[string]bool{}
		}
		for _, c := range unseen {
			p.lookedUp[c.id] = found[c.ref.Namespace]
		}
	}
}

// checkLive returns an error when live, the object with the name of the
// desired child c, is not the set's to write: controlled by another
// object or labelled for another set or parent (ReasonChildConflict), or,
// without WithAdoption, made by someone else (ReasonChildExists). member
// tells that live is a member of the set, as listed from the cache.
func checkLive[T client.Object](s *Step[T], req *bosun.Pass[T], c *child, live client.Object, member bool) error {
	if ctl := metav1.GetControllerOf(live); ctl != nil && ctl.UID != req.Object.GetUID() {
		return conditions.Terminal(ReasonChildConflict, fmt.Errorf("%s exists and is controlled by %s %s", c.ref, ctl.Kind, ctl.Name))
	}
	if l := live.GetLabels(); l[LabelSet] != "" && (l[LabelSet] != s.name || l[LabelOwner] != string(req.Object.GetUID())) {
		return conditions.Terminal(ReasonChildConflict, fmt.Errorf("%s exists and belongs to set %q of another object", c.ref, l[LabelSet]))
	}
	if !member && !isOurs(s, req, live) && !s.cfg.adopt {
		return &conditions.Error{
			Type:     c.kind.condition,
			Reason:   ReasonChildExists,
			Severity: conditions.SeverityWarning,
			Err: fmt.Errorf("%s exists and was not created by set %q: it is left alone; delete or rename it, or let the step adopt it (WithAdoption)",
				c.ref, s.name),
		}
	}
	return nil
}

// isOurs reports whether live, an object with the name of a desired child
// that is not among the members listed from the cache, was made by this
// set for the parent of req: it carries the set's labels for the parent (a
// child the cache does not show yet), or, for an owned child that lost its
// labels, has the parent as its controller. An unowned child without the
// labels cannot be told from anyone else's.
func isOurs[T client.Object](s *Step[T], req *bosun.Pass[T], live client.Object) bool {
	uid := req.Object.GetUID()
	if l := live.GetLabels(); l[LabelSet] == s.name && l[LabelOwner] == string(uid) {
		return true
	}
	if s.unowned {
		return false
	}
	ctl := metav1.GetControllerOf(live)
	return ctl != nil && ctl.UID == uid
}

// listMembers lists, from the cache, the children of kind k that carry the
// set's labels for the parent of req.
func listMembers[T client.Object](ctx context.Context, s *Step[T], req *bosun.Pass[T], k *kind) ([]client.Object, error) {
	return listMembersFrom(ctx, s, req.Client, req, k)
}

// listMembersFrom lists, through r, the children of kind k that carry the
// set's labels for the parent of req. An object with those labels that
// something else controls was not created by the set: it is left out, so
// it is never pruned or deleted, and a desired child of its name is a
// conflict.
func listMembersFrom[T client.Object](ctx context.Context, s *Step[T], r client.Reader, req *bosun.Pass[T], k *kind) ([]client.Object, error) {
	list, err := k.newList(req.Client.Scheme())
	if err != nil {
		return nil, err
	}
	opts := []client.ListOption{client.MatchingLabels{LabelSet: s.name, LabelOwner: string(req.Object.GetUID())}}
	if !s.unowned && req.Object.GetNamespace() != "" {
		opts = append(opts, client.InNamespace(req.Object.GetNamespace()))
	}
	if err := r.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("listing the %s children: %w", k.gvk.Kind, err)
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("reading the %s children: %w", k.gvk.Kind, err)
	}
	out := make([]client.Object, 0, len(items))
	for _, it := range items {
		obj, ok := it.(client.Object)
		if !ok {
			return nil, fmt.Errorf("a %s list item of type %T is not an object", k.gvk.Kind, it)
		}
		if ctl := metav1.GetControllerOf(obj); ctl != nil && ctl.UID != req.Object.GetUID() {
			continue
		}
		out = append(out, obj)
	}
	return out, nil
}
