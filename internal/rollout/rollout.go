// Package rollout holds what the members and the sharder of a shard ring
// and the bosun command share about a canary rollout: the record of the
// rollout (annotations on a Lease of the ring), the version label of a
// member's Lease, the pass counts a member publishes on it, and the
// summary of a ring by version that `bosun canary status` prints.
package rollout

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Keys on the Leases of a ring.
const (
	// LabelRing labels every Lease of a ring with the ring's name.
	LabelRing = "shard.bosun.dev/ring"
	// LabelVersion labels a member's Lease with the member's version.
	LabelVersion = "shard.bosun.dev/version"
	// AnnotationPasses, on a member's Lease, holds its pass counts (Stats
	// as JSON) since it started, written at each renewal.
	AnnotationPasses = "shard.bosun.dev/passes"
	// AnnotationVersion, AnnotationPercent and AnnotationSelector, on the
	// ring's canary Lease, are the fields of its Spec.
	AnnotationVersion  = "canary.shard.bosun.dev/version"
	AnnotationPercent  = "canary.shard.bosun.dev/percent"
	AnnotationSelector = "canary.shard.bosun.dev/selector"
)

// LeaseName is the name of the Lease that records the canary rollout of
// ring. The Lease of a member is named ring-identity: the dot keeps the
// two apart.
func LeaseName(ring string) string { return ring + ".canary" }

// Spec is a canary rollout: the members of version Version take the
// objects whose key falls in the first Percent of a hash, or whose labels
// match Selector; the other members take the rest.
type Spec struct {
	Version  string
	Percent  int
	Selector string
}

// Validate reports what is wrong with s.
func (s Spec) Validate() error {
	var errs []error
	if s.Version == "" {
		errs = append(errs, errors.New("the version is empty"))
	} else if msgs := validation.IsValidLabelValue(s.Version); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("the version %q is not a label value: %v", s.Version, msgs))
	}
	if s.Percent < 0 || s.Percent > 100 {
		errs = append(errs, fmt.Errorf("the percent %d is not between 0 and 100", s.Percent))
	}
	if _, err := labels.Parse(s.Selector); err != nil {
		errs = append(errs, fmt.Errorf("the selector %q: %w", s.Selector, err))
	}
	return errors.Join(errs...)
}

// Annotations returns s as the annotations of the canary Lease.
func (s Spec) Annotations() map[string]string {
	return map[string]string{
		AnnotationVersion:  s.Version,
		AnnotationPercent:  fmt.Sprint(s.Percent),
		AnnotationSelector: s.Selector,
	}
}

// Parse reads a Spec from the annotations of a canary Lease; an error
// says what is wrong with them.
func Parse(annotations map[string]string) (Spec, error) {
	s := Spec{Version: annotations[AnnotationVersion], Selector: annotations[AnnotationSelector]}
	if p := annotations[AnnotationPercent]; p != "" {
		if _, err := fmt.Sscan(p, &s.Percent); err != nil {
			return s, fmt.Errorf("the annotation %s=%q is not a number", AnnotationPercent, p)
		}
	}
	return s, s.Validate()
}

// Chooser decides which objects a canary takes.
type Chooser struct {
	percent  int
	selector labels.Selector
}

// NewChooser returns the Chooser of s, which must be valid.
func NewChooser(s Spec) (Chooser, error) {
	sel, err := labels.Parse(s.Selector)
	if err != nil {
		return Chooser{}, fmt.Errorf("the selector %q: %w", s.Selector, err)
	}
	if s.Selector == "" {
		sel = labels.Nothing()
	}
	return Chooser{percent: s.Percent, selector: sel}, nil
}

// Takes reports whether the canary takes the object of ring key key and
// labels lbls: its key's bucket, a hash into 0..99 that does not depend
// on the members, is below the percent, or its labels match the
// selector. Raising the percent only adds objects.
func (c Chooser) Takes(key string, lbls map[string]string) bool {
	return Bucket(key) < c.percent || c.selector.Matches(labels.Set(lbls))
}

// Bucket is the bucket of a ring key, in 0..99.
func Bucket(key string) int {
	f := fnv.New32a()
	_, _ = f.Write([]byte("canary/" + key))
	return int(f.Sum32() % 100)
}

// Stats are the passes a member ran since it started: how many, how many
// failed, and their total duration.
type Stats struct {
	Passes  int64   `json:"passes"`
	Errors  int64   `json:"errors"`
	Seconds float64 `json:"seconds"`
}

// Encode returns s as the value of AnnotationPasses.
func (s Stats) Encode() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// DecodeStats reads the value of AnnotationPasses; a value it cannot read
// gives zero Stats.
func DecodeStats(v string) Stats {
	var s Stats
	_ = json.Unmarshal([]byte(v), &s)
	return s
}

// Version is what the live members of one version report together.
type Version struct {
	Version string
	Members []string
	Stats
}

// Summary is a ring by version.
type Summary struct {
	// Canary is the rollout in force, nil without one; Invalid says why a
	// canary Lease there is cannot be used.
	Canary  *Spec
	Invalid error
	// Versions are the live members' versions, sorted.
	Versions []Version
}

// Summarize reads the Leases of a ring at now: the canary record, and the
// live members by version with their pass counts.
func Summarize(ring string, leases []coordinationv1.Lease, now time.Time) Summary {
	var sum Summary
	byVersion := map[string]*Version{}
	for i := range leases {
		l := &leases[i]
		if l.Name == LeaseName(ring) {
			spec, err := Parse(l.Annotations)
			if err != nil {
				sum.Invalid = err
				continue
			}
			sum.Canary = &spec
			continue
		}
		if !Alive(l, now) {
			continue
		}
		v := l.Labels[LabelVersion]
		if byVersion[v] == nil {
			byVersion[v] = &Version{Version: v}
		}
		agg := byVersion[v]
		agg.Members = append(agg.Members, *l.Spec.HolderIdentity)
		st := DecodeStats(l.Annotations[AnnotationPasses])
		agg.Passes += st.Passes
		agg.Errors += st.Errors
		agg.Seconds += st.Seconds
	}
	for _, v := range byVersion {
		slices.Sort(v.Members)
		sum.Versions = append(sum.Versions, *v)
	}
	slices.SortFunc(sum.Versions, func(a, b Version) int {
		switch {
		case a.Version < b.Version:
			return -1
		case a.Version > b.Version:
			return 1
		}
		return 0
	})
	return sum
}

// Alive reports whether lease, a member's Lease, is current at now: it
// has a holder and was renewed within its duration.
func Alive(lease *coordinationv1.Lease, now time.Time) bool {
	s := lease.Spec
	if s.RenewTime == nil || s.LeaseDurationSeconds == nil || s.HolderIdentity == nil || *s.HolderIdentity == "" || lease.DeletionTimestamp != nil {
		return false
	}
	return now.Before(s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second))
}
