package faults

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/conditions"
)

// kstatusWatch judges, with cli-utils' kstatus, every version of the
// operator's objects the API server stores while the cell runs.
type kstatusWatch struct {
	mu       sync.Mutex
	versions int
	bad      []string
	stops    []func()
}

// judge reads one watch to its end.
func (w *kstatusWatch) judge(events <-chan watch.Event) {
	for ev := range events {
		u, ok := ev.Object.(*unstructured.Unstructured)
		if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
			continue
		}
		if err := judgeKStatus(u); err != nil {
			w.mu.Lock()
			w.bad = append(w.bad, fmt.Sprintf("%s at version %s: %v", u.GetName(), u.GetResourceVersion(), err))
			w.mu.Unlock()
		}
		w.mu.Lock()
		w.versions++
		w.mu.Unlock()
	}
}

// judgeKStatus checks one version of an object: kstatus must not call it
// Current unless Ready is True for its generation, and never Failed (the
// matrix's faults are all transient). A version the operator has not
// written a Ready condition to yet is not judged: kstatus calls an object
// without status Current whoever reconciles it.
func judgeKStatus(u *unstructured.Unstructured) error {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	hasReady := false
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == conditions.TypeReady {
			hasReady = true
		}
	}
	if !hasReady || u.GetDeletionTimestamp() != nil {
		return nil
	}
	res, err := status.Compute(u)
	if err != nil {
		return fmt.Errorf("kstatus: %w", err)
	}
	switch res.Status {
	case status.FailedStatus:
		return fmt.Errorf("kstatus says Failed (%s) under transient faults", res.Message)
	case status.CurrentStatus:
		if err := oracle.CheckReady(u); err != nil {
			return fmt.Errorf("kstatus says Current, but %w", err)
		}
	}
	return nil
}

// stop ends the watches.
func (w *kstatusWatch) stop() {
	for _, s := range w.stops {
		s()
	}
}

// check reports the versions kstatus judged wrong.
func (w *kstatusWatch) check() (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.bad) > 0 {
		return w.versions, fmt.Errorf("kstatus wrong on %d of %d versions: %s", len(w.bad), w.versions, strings.Join(w.bad, "; "))
	}
	if w.versions == 0 {
		return 0, errors.New("kstatus: no version of the objects was seen")
	}
	return w.versions, nil
}

// blocked returns the object's DeletionBlocked condition when it is True.
func blocked(o client.Object) *metav1.Condition {
	co, ok := o.(conditions.Object)
	if !ok {
		return nil
	}
	c := meta.FindStatusCondition(co.GetConditions(), conditions.TypeDeletionBlocked)
	if c == nil || c.Status != metav1.ConditionTrue {
		return nil
	}
	return c
}

// plannedChange checks the plan's section of the object called name in
// namespace ns ("" for a cluster-scoped one): it had a pass that
// succeeded, and, when its spec changed, would change something.
func plannedChange(report, ns, name string, changed bool) error {
	ref := name
	if ns != "" {
		ref = ns + "/" + name
	}
	lines := strings.Split(report, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, " ") || !strings.Contains(l, " "+ref+" (controller ") {
			continue
		}
		var body []string
		for _, b := range lines[i+1:] {
			if !strings.HasPrefix(b, " ") {
				break
			}
			if strings.HasPrefix(b, "  edit: ") {
				// What a proposed edit changes, not what the pass would.
				continue
			}
			body = append(body, strings.TrimSpace(b))
		}
		switch {
		case len(body) == 0:
			return fmt.Errorf("%s: an empty section", name)
		case body[0] == "no change" && changed:
			return fmt.Errorf("%s: no change foretold, but its spec changed", name)
		case strings.HasPrefix(body[0], "no pass ran"), strings.HasPrefix(body[0], "the pass failed"):
			return fmt.Errorf("%s: %s", name, body[0])
		}
		return nil
	}
	return fmt.Errorf("%s is not in the plan", name)
}

// unchanged counts the objects of before that after holds at the same
// version.
func unchanged(before, after map[string]string) int {
	n := 0
	for k, v := range before {
		if after[k] == v {
			n++
		}
	}
	return n
}
