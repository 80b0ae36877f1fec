package oracle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Errors of the external resource checks. The error of OnePer may wrap
// several.
var (
	// errDuplicates: an owner has more than one external resource.
	errDuplicates = errors.New("owners with more than one external resource")
	// errMissing: an owner has no external resource.
	errMissing = errors.New("owners without an external resource")
	// errExtra: a resource belongs to none of the expected owners.
	errExtra = errors.New("external resources of no expected owner")
	// errLeaked: resources are left for owners that are gone, or carry no
	// owner mark.
	errLeaked = errors.New("external resources leaked")
)

// External is one resource in a system outside Kubernetes (a database, a
// bucket, a cloud instance) as the test sees it there.
type External struct {
	// ID identifies the resource in its system.
	ID string
	// Owner identifies the Kubernetes object the resource belongs to,
	// usually its UID or namespace/name, as the operator marked it on the
	// resource; empty when the resource carries no mark.
	Owner string
}

// Externals are the resources an external system holds, as a test lists
// them there (usually through an Inventory), and the checks of what an
// operator made of them: NoDuplicates, OnePer, NoneFor, NoUnmarked, and
// the count Duplicates.
type Externals []External

// Inventory lists the resources of an external system, for the checks of
// Externals. A test writes one for the system its operator manages.
type Inventory func(ctx context.Context) (Externals, error)

// byOwner groups the IDs of ext by owner, unmarked ones under "".
func byOwner(ext Externals) map[string][]string {
	m := map[string][]string{}
	for _, e := range ext {
		m[e.Owner] = append(m[e.Owner], e.ID)
	}
	return m
}

// Duplicates returns how many marked resources of ext are more than one
// for their owner: zero when no owner has two. It is the figure behind
// NoDuplicates.
func (ext Externals) Duplicates() int {
	n := 0
	for owner, ids := range byOwner(ext) {
		if owner != "" && len(ids) > 1 {
			n += len(ids) - 1
		}
	}
	return n
}

// NoDuplicates reports every owner with more than one resource in ext, and
// their IDs. Unmarked resources are not counted (see NoUnmarked).
func (ext Externals) NoDuplicates() error {
	var lines []string
	for owner, ids := range byOwner(ext) {
		if owner != "" && len(ids) > 1 {
			lines = append(lines, ownerLine(owner, ids))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("oracle: %w:%s", errDuplicates, indent(lines))
}

// OnePer reports unless each of owners has exactly one resource in ext and
// ext holds nothing else. Its error names owners with none, owners with
// more than one, and resources of other owners or unmarked. An inventory
// that also holds resources the test does not care about should be
// filtered first. An empty owner in owners is refused.
func (ext Externals) OnePer(owners []string) error {
	want, err := ownerSet(owners)
	if err != nil {
		return err
	}
	got := byOwner(ext)
	var missing, dups, extra []string
	for owner := range want {
		switch ids := got[owner]; {
		case len(ids) == 0:
			missing = append(missing, fmt.Sprintf("%q", owner))
		case len(ids) > 1:
			dups = append(dups, ownerLine(owner, ids))
		}
	}
	for owner, ids := range got {
		if want[owner] {
			continue
		}
		for _, id := range ids {
			extra = append(extra, resourceLine(id, owner))
		}
	}
	var errs []error
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("%w:%s", errMissing, indent(missing)))
	}
	if len(dups) > 0 {
		errs = append(errs, fmt.Errorf("%w:%s", errDuplicates, indent(dups)))
	}
	if len(extra) > 0 {
		errs = append(errs, fmt.Errorf("%w:%s", errExtra, indent(extra)))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("oracle: not one external resource per owner: %w", errors.Join(errs...))
}

// NoneFor reports every resource of ext that belongs to one of owners: the
// owners are gone, so their resources should be too. Unmarked resources
// are not reported; NoUnmarked does that. An empty owner in owners is
// refused.
func (ext Externals) NoneFor(owners []string) error {
	gone, err := ownerSet(owners)
	if err != nil {
		return err
	}
	var lines []string
	for _, e := range ext {
		if gone[e.Owner] {
			lines = append(lines, resourceLine(e.ID, e.Owner))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("oracle: %w for deleted owners:%s", errLeaked, indent(lines))
}

// NoUnmarked reports every resource of ext that carries no owner mark: an
// operator that marks what it makes leaves such a resource only when it
// made it and lost track before marking it, so nothing will ever delete
// it.
func (ext Externals) NoUnmarked() error {
	var lines []string
	for _, e := range ext {
		if e.Owner == "" {
			lines = append(lines, resourceLine(e.ID, ""))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("oracle: %w without an owner mark:%s", errLeaked, indent(lines))
}

// ownerSet returns owners as a set, refusing an empty one.
func ownerSet(owners []string) (map[string]bool, error) {
	set := make(map[string]bool, len(owners))
	for i, o := range owners {
		if o == "" {
			return nil, fmt.Errorf("oracle: owner %d is empty", i)
		}
		set[o] = true
	}
	return set, nil
}

// ownerLine renders an owner and its resources.
func ownerLine(owner string, ids []string) string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return fmt.Sprintf("owner %q: %d resources %q", owner, len(ids), ids)
}

// resourceLine renders a resource and its owner.
func resourceLine(id, owner string) string {
	if owner == "" {
		return fmt.Sprintf("resource %q: unmarked", id)
	}
	return fmt.Sprintf("resource %q: owner %q", id, owner)
}

// indent renders lines sorted, each on a line of its own after a tab.
func indent(lines []string) string {
	lines = slices.Clone(lines)
	slices.Sort(lines)
	return "\n\t" + strings.Join(lines, "\n\t")
}
