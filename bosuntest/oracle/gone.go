package oracle

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// errOrphans is wrapped by the error of NoOrphans.
var errOrphans = errors.New("objects still owned by deleted owners")

// Gone reads each of objs from the API server with c until none is left,
// or bound passes, or ctx ends. An object is gone when the API server
// answers Not Found, or when it holds an object of that name with another
// UID than obj's (the object was deleted and a new one made). Only the
// Interval option applies.
//
// The error is nil when all are gone. Otherwise it says "not gone" (or
// wraps ctx's error) and names each object still there, with its finalizers,
// whether it is being deleted at all, and its Ready condition.
func Gone(ctx context.Context, c client.Client, objs []client.Object, bound time.Duration, opts ...Option) error {
	s := newSettings(opts)
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	left := objs
	// What the last read that reached the API server found, per object:
	// a read cut short by the end of the wait (or refused by the client's
	// rate limiter because the wait is about to end) says nothing of the
	// object, so the one before it is reported.
	seen := make(map[client.Object]string, len(objs))
	err := wait.PollUntilContextCancel(ctx, s.interval, true, func(ctx context.Context) (bool, error) {
		left = stillThere(ctx, c, left, seen)
		return len(left) == 0, nil
	})
	if err == nil {
		return nil
	}
	lines := make([]string, 0, len(left))
	for _, obj := range left {
		lines = append(lines, seen[obj])
	}
	heading := fmt.Sprintf("%d of %d objects still there after %s", len(lines), len(objs), time.Since(start).Round(time.Millisecond))
	if cause := context.Cause(ctx); !errors.Is(cause, context.DeadlineExceeded) {
		return fmt.Errorf("oracle: %w: %s", cause, joinLines(heading, lines))
	}
	return fmt.Errorf("oracle: objects %w: %s", errNotGone, joinLines(heading, lines))
}

// stillThere reads each of objs and returns those still on the API server.
// It records in seen a line describing each; a failed read replaces the
// line only when there is none yet.
func stillThere(ctx context.Context, c client.Client, objs []client.Object, seen map[client.Object]string) []client.Object {
	var left []client.Object
	for _, obj := range objs {
		cur := obj.DeepCopyObject().(client.Object)
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), cur)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			left = append(left, obj)
			if _, ok := seen[obj]; !ok {
				seen[obj] = fmt.Sprintf("%s: reading: %v", describe(c, obj), err)
			}
			continue
		case obj.GetUID() != "" && cur.GetUID() != obj.GetUID():
			continue
		}
		left = append(left, obj)
		seen[obj] = describe(c, obj) + ": " + presence(cur)
	}
	return left
}

// presence describes an object that is still there: whether it is being
// deleted, its finalizers and its Ready condition.
func presence(obj client.Object) string {
	s := "not being deleted"
	if obj.GetDeletionTimestamp() != nil {
		s = "being deleted"
	}
	if f := obj.GetFinalizers(); len(f) > 0 {
		s += fmt.Sprintf(", finalizers %q", f)
	} else {
		s += ", no finalizers"
	}
	if m, err := content(obj); err == nil {
		s += ", " + readyText(m)
	}
	return s
}

// NoOrphans lists each of lists in namespace ("" for all namespaces) and
// reports every object that still has an ownerReference to one of owners,
// the UIDs of objects that were deleted. A control plane without the
// garbage collector (see controlplane.Options.ControllerManager) leaves
// such objects behind when an operator relies on ownerReferences alone, so
// there the oracle checks what the operator itself deleted. Objects being
// deleted count as still there.
//
// It reads once; wrap it in bosuntest.Eventually to wait. The error is nil
// when there is no such object; otherwise it names
// each, with the owner it points to. Calling it with no lists is refused.
func NoOrphans(ctx context.Context, c client.Client, namespace string, owners []types.UID, lists ...client.ObjectList) error {
	if len(lists) == 0 {
		return errors.New("oracle: NoOrphans given no lists to look in")
	}
	gone := make(map[types.UID]bool, len(owners))
	for _, uid := range owners {
		gone[uid] = true
	}
	var lines []string
	for _, list := range lists {
		l := freshList(list)
		if err := c.List(ctx, l, client.InNamespace(namespace)); err != nil {
			return fmt.Errorf("oracle: listing %s: %w", kindOf(c, list), err)
		}
		objs, err := items(l)
		if err != nil {
			return fmt.Errorf("oracle: %w", err)
		}
		for _, obj := range objs {
			for _, ref := range obj.GetOwnerReferences() {
				if gone[ref.UID] {
					line := fmt.Sprintf("%s: owned by %s %s (uid %s)", describe(c, obj), ref.Kind, ref.Name, ref.UID)
					if obj.GetDeletionTimestamp() != nil {
						line += fmt.Sprintf(", being deleted, finalizers %q", obj.GetFinalizers())
					}
					lines = append(lines, line)
				}
			}
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("oracle: %w:%s", errOrphans, indent(lines))
}
