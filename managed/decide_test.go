package managed

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// decideNow is the time the decisions of the tables below are taken at.
var decideNow = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// decideAt formats decideNow+d as the step's annotations hold times.
func decideAt(d time.Duration) string { return formatTime(decideNow.Add(d)) }

// baseFacts are the facts of a named object at generation 2, under every
// policy, with the default grace and short interval, with o observed (nil
// for none), changed by the given functions.
func baseFacts(o *Observation, change ...func(*facts)) facts {
	f := facts{
		now: decideNow, gen: 2, identity: "uid-1", named: true, chosen: true,
		ann:   map[string]string{AnnotationExternalName: "bkt"},
		grace: defaultCreationGracePeriod, short: defaultShortInterval,
		pol: AllPolicies(), obs: o,
	}
	for _, c := range change {
		c(&f)
	}
	return f
}

// Observations the tables use.
var (
	obsMissing  = &Observation{}
	obsOurs     = &Observation{Exists: true, UpToDate: true, Available: true, Owner: "uid-1"}
	obsDiffers  = &Observation{Exists: true, Owner: "uid-1"}
	obsLateInit = &Observation{Exists: true, UpToDate: true, LateInitialized: true, Owner: "uid-1"}
	obsAnother  = &Observation{Exists: true, UpToDate: true, Owner: "uid-2"}
	obsUnmarked = &Observation{Exists: true, UpToDate: true}
)

// Changes of the facts the tables use.
func withAnn(kv ...string) func(*facts) {
	return func(f *facts) {
		f.ann = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			f.ann[kv[i]] = kv[i+1]
		}
		f.named = f.ann[AnnotationExternalName] != ""
	}
}

func withPol(p Policies) func(*facts) { return func(f *facts) { f.pol = p } }

func withMemo(m memo) func(*facts) { return func(f *facts) { f.memo = m } }

var (
	providerNames = func(f *facts) { f.providerNames, f.chosen = true, false }
	// handSet marks the name as set by hand, not the step's choice.
	handSet = func(f *facts) { f.chosen = false }
	granted = func(f *facts) { f.granted = true }
	// created marks the object's resource as made by the step an hour ago.
	created = withAnn(AnnotationExternalName, "bkt", AnnotationCreatePending, decideAt(-time.Hour-time.Second), annotationCreateSucceeded, decideAt(-time.Hour))
)

// TestDecide checks every branch of decide, Do's decision, from the facts
// alone.
func TestDecide(t *testing.T) {
	errFailed := errors.New("failed")
	failedAgo := func(d time.Duration, n int, gen int64, terminal bool) *attempt {
		return &attempt{at: decideNow.Add(-d), n: n, gen: gen, terminal: terminal, err: errFailed}
	}
	tests := []struct {
		name string
		f    facts
		want decision
	}{
		// The resource is missing.
		{"missing: create", baseFacts(obsMissing, withAnn()), decision{action: actCreate}},
		{"missing, pending lately: wait for the creation window",
			baseFacts(obsMissing, withAnn(AnnotationExternalName, "bkt", AnnotationCreatePending, decideAt(-time.Second))), decision{action: actCreateWait}},
		{"missing, pending long ago: create again",
			baseFacts(obsMissing, withAnn(AnnotationExternalName, "bkt", AnnotationCreatePending, decideAt(-time.Hour))), decision{action: actCreate}},
		{"missing, created lately: wait for the creation window",
			baseFacts(obsMissing, withAnn(AnnotationExternalName, "bkt", annotationCreateSucceeded, decideAt(-time.Second))), decision{action: actCreateWait}},
		{"missing, provider names, pending and no name: incomplete",
			baseFacts(obsMissing, withAnn(AnnotationCreatePending, decideAt(-time.Hour)), providerNames), decision{action: actCreateIncomplete}},
		{"missing, provider names, pending and name saved: create again",
			baseFacts(obsMissing, withAnn(AnnotationExternalName, "bkt", AnnotationCreatePending, decideAt(-time.Hour)), providerNames), decision{action: actCreate}},
		{"missing, create failed lately: its backoff",
			baseFacts(obsMissing, withAnn(), withMemo(memo{create: failedAgo(time.Second, 1, 2, false)})), decision{action: actCreateBackoff}},
		{"missing, create failed, backoff over: create",
			baseFacts(obsMissing, withAnn(), withMemo(memo{create: failedAgo(time.Minute, 1, 2, false)})), decision{action: actCreate}},
		{"missing, terminal failure of this generation: its error",
			baseFacts(obsMissing, withAnn(), withMemo(memo{create: failedAgo(time.Hour, 1, 2, true)})), decision{action: actCreateBackoff}},
		{"missing, terminal failure of an older generation: create",
			baseFacts(obsMissing, withAnn(), withMemo(memo{create: failedAgo(time.Second, 1, 1, true)})), decision{action: actCreate}},
		{"missing, create failed lately, Create not allowed: not found",
			baseFacts(obsMissing, withAnn(), withPol(Policies{Update: true}), withMemo(memo{create: failedAgo(time.Second, 1, 2, false)})), decision{action: actNotFound}},
		{"missing, observe-only: not found", baseFacts(obsMissing, withAnn(), withPol(ObserveOnly())), decision{action: actNotFound}},

		// The resource is there and not the object's.
		{"marked as another's: conflict", baseFacts(obsAnother, created), decision{action: actConflict}},
		{"marked as another's, observe-only: conflict", baseFacts(obsAnother, created, withPol(ObserveOnly())), decision{action: actConflict}},
		{"unmarked, chosen name never recorded: not granted",
			baseFacts(obsUnmarked, withAnn(), func(f *facts) { f.named = false }), decision{action: actNotGranted}},
		{"unmarked, chosen name never recorded, granted: conflict",
			baseFacts(obsUnmarked, withAnn(), func(f *facts) { f.named = false }, granted), decision{action: actConflict}},
		{"unmarked, last create failed: not granted",
			baseFacts(obsUnmarked, withAnn(AnnotationExternalName, "bkt", AnnotationCreatePending, decideAt(-time.Hour), annotationCreateFailed, decideAt(-time.Minute))),
			decision{action: actNotGranted}},
		{"unmarked, last create failed, granted: conflict",
			baseFacts(obsUnmarked, withAnn(AnnotationExternalName, "bkt", AnnotationCreatePending, decideAt(-time.Hour), annotationCreateFailed, decideAt(-time.Minute)), granted),
			decision{action: actConflict}},
		{"unmarked, name set by hand: not granted", baseFacts(obsUnmarked, handSet), decision{action: actNotGranted}},
		{"unmarked, created under a name set by hand: not granted", baseFacts(obsUnmarked, created, handSet), decision{action: actNotGranted}},
		{"unmarked, created under a name the system assigned: not granted", baseFacts(obsUnmarked, created, providerNames), decision{action: actNotGranted}},
		{"unmarked, observe-only: not granted", baseFacts(obsUnmarked, withAnn(), withPol(ObserveOnly())), decision{action: actNotGranted}},

		// The resource is the object's.
		{"ours, up to date: report", baseFacts(obsOurs, created), decision{action: actReport}},
		{"unmarked, created here: report", baseFacts(obsUnmarked, created), decision{action: actReport}},
		{"unmarked, name set by hand, granted: report", baseFacts(obsUnmarked, handSet, granted), decision{action: actReport}},
		{"unmarked, created under a name set by hand, granted: report", baseFacts(obsUnmarked, created, handSet, granted), decision{action: actReport}},
		{"unmarked, observe-only, granted: report", baseFacts(obsUnmarked, withAnn(), withPol(ObserveOnly()), granted), decision{action: actReport}},
		{"late-initialised: report, take the spec", baseFacts(obsLateInit, created), decision{action: actReport, lateInit: true}},
		{"late-initialised, LateInitialize not allowed: report, drop the spec",
			baseFacts(obsLateInit, created, withPol(Policies{Create: true, Update: true, Delete: true})), decision{action: actReport}},
		{"differs, Update not allowed: observe only",
			baseFacts(obsDiffers, created, withPol(Policies{Create: true, Delete: true})), decision{action: actObserveOnly}},
		{"differs: update", baseFacts(obsDiffers, created), decision{action: actUpdate}},
		{"differs, late-initialised: update, take the spec",
			baseFacts(&Observation{Exists: true, LateInitialized: true, Owner: "uid-1"}, created), decision{action: actUpdate, lateInit: true}},
		{"differs, update of this generation asked lately: wait",
			baseFacts(obsDiffers, created, withMemo(memo{update: &attempt{at: decideNow.Add(-2 * time.Second), gen: 2}})),
			decision{action: actUpdateWait, wait: 3 * time.Second}},
		{"differs, update of this generation asked long ago: update",
			baseFacts(obsDiffers, created, withMemo(memo{update: &attempt{at: decideNow.Add(-time.Minute), gen: 2}})), decision{action: actUpdate}},
		{"differs, update of an older generation asked lately: update",
			baseFacts(obsDiffers, created, withMemo(memo{update: &attempt{at: decideNow.Add(-time.Second), gen: 1}})), decision{action: actUpdate}},
		{"differs, update failed lately: its backoff",
			baseFacts(obsDiffers, created, withMemo(memo{update: failedAgo(7*time.Second, 2, 2, false)})), decision{action: actUpdateBackoff}},
		{"differs, update failed, backoff over: update",
			baseFacts(obsDiffers, created, withMemo(memo{update: failedAgo(11*time.Second, 2, 2, false)})), decision{action: actUpdate}},
		{"differs, terminal update failure of this generation: its error",
			baseFacts(obsDiffers, created, withMemo(memo{update: failedAgo(time.Hour, 1, 2, true)})), decision{action: actUpdateBackoff}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decide(tt.f)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(decision{})); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
		})
	}
}

// lastCleanup marks the facts of the last Cleanup before the finalizer
// goes (bosun.Pass.LastCleanup).
func lastCleanup(f *facts) { f.lastCleanup = true }

// TestDecideCleanup checks every branch of decideCleanup, Cleanup's
// decision, before and after it observes.
func TestDecideCleanup(t *testing.T) {
	deleting := func(ago time.Duration) func(*facts) {
		return func(f *facts) { f.ann[annotationDeletePending] = decideAt(-ago) }
	}
	last := func(finalizers int, controller string, peers ...string) func(*facts) {
		return func(f *facts) {
			f.last, f.finalizers, f.controller, f.deletingLast = true, finalizers, controller, peers
		}
	}
	tests := []struct {
		name string
		f    facts
		want decision
	}{
		// Before observing.
		{"orphan: leave", baseFacts(nil, created, func(f *facts) { f.orphan = true }), decision{action: actLeave}},
		{"Delete not allowed: leave", baseFacts(nil, created, withPol(Policies{Create: true, Update: true})), decision{action: actLeave}},
		{"provider names, pending and no name: incomplete",
			baseFacts(nil, withAnn(AnnotationCreatePending, decideAt(-time.Hour)), providerNames), decision{action: actCreateIncomplete}},
		{"nothing named: gone", baseFacts(nil, withAnn()), decision{action: actGone}},
		{"bad deletion order: its error", baseFacts(nil, created, func(f *facts) { f.orderErr = errors.New("bad") }), decision{action: actBadOrder}},
		{"bad deletion order, orphan: leave",
			baseFacts(nil, created, func(f *facts) { f.orderErr, f.orphan = errors.New("bad"), true }), decision{action: actLeave}},
		{"last, another finalizer: wait", baseFacts(nil, created, last(2, "db")), decision{action: actWaitFinalizers}},
		{"last, only the engine's finalizer: observe", baseFacts(nil, created, last(1, "db")), decision{action: actObserve}},
		{"last, the other finalizer a peer's: observe", baseFacts(nil, created, last(2, "db", "cache")), decision{action: actObserve}},
		{"last, a peer and another finalizer: wait", baseFacts(nil, created, last(3, "db", "cache", "db")), decision{action: actWaitFinalizers}},
		{"immediate, other finalizers: observe", baseFacts(nil, created, func(f *facts) { f.finalizers = 3 }), decision{action: actObserve}},

		// After observing.
		{"missing: gone", baseFacts(obsMissing, created), decision{action: actGone}},
		{"missing within the creation window: delete once",
			baseFacts(obsMissing, withAnn(AnnotationExternalName, "bkt", annotationCreateSucceeded, decideAt(-time.Second))), decision{action: actDelete}},
		{"missing within the creation window, delete asked: gone",
			baseFacts(obsMissing, withAnn(AnnotationExternalName, "bkt", annotationCreateSucceeded, decideAt(-time.Second)), deleting(time.Second)),
			decision{action: actGone}},
		{"another's: leave it in place", baseFacts(obsAnother, created), decision{action: actLeftInPlace}},
		{"unmarked, not created here: leave it in place",
			baseFacts(obsUnmarked, withAnn(), func(f *facts) { f.named = true }), decision{action: actLeftInPlace}},
		{"unmarked, name set by hand: leave it in place", baseFacts(obsUnmarked, handSet), decision{action: actLeftInPlace}},
		{"unmarked, created under a name set by hand: leave it in place", baseFacts(obsUnmarked, created, handSet), decision{action: actLeftInPlace}},
		{"unmarked, name set by hand, granted: delete", baseFacts(obsUnmarked, handSet, granted), decision{action: actDelete}},
		{"unmarked, created under the chosen name: delete", baseFacts(obsUnmarked, created), decision{action: actDelete}},
		{"ours: delete", baseFacts(obsOurs, created), decision{action: actDelete}},
		{"ours, delete asked lately: wait", baseFacts(obsOurs, created, deleting(time.Second)), decision{action: actDeleteWait, wait: 4 * time.Second}},
		{"ours, delete asked long ago: delete again", baseFacts(obsOurs, created, deleting(time.Minute)), decision{action: actDelete}},
		{"ours, delete failed lately: its backoff",
			baseFacts(obsOurs, created, deleting(time.Second), withMemo(memo{delete: &attempt{at: decideNow.Add(-time.Second), n: 1, err: errors.New("x")}})),
			decision{action: actDeleteBackoff}},
		{"ours, delete failed lately, last cleanup: delete",
			baseFacts(obsOurs, created, deleting(time.Second), withMemo(memo{delete: &attempt{at: decideNow.Add(-time.Second), n: 1, err: errors.New("x")}}), lastCleanup),
			decision{action: actDelete}},
		{"ours, delete asked lately, last cleanup: delete", baseFacts(obsOurs, created, deleting(time.Second), lastCleanup), decision{action: actDelete}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decideCleanup(tt.f)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(decision{})); diff != "" {
				t.Errorf("decideCleanup (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOthersHold checks how the controllers that delete last count the
// finalizers of their peers.
func TestOthersHold(t *testing.T) {
	tests := []struct {
		finalizers int
		controller string
		last       []string
		want       bool
	}{
		{1, "db", nil, false},
		{2, "db", nil, true},
		{2, "db", []string{"db"}, true},
		{2, "db", []string{"cache"}, false},
		{2, "db", []string{"cache", "db"}, false},
		{3, "db", []string{"cache"}, true},
		{2, "", nil, true},
	}
	for _, tt := range tests {
		if got := othersHold(tt.finalizers, tt.controller, tt.last); got != tt.want {
			t.Errorf("othersHold(%d, %q, %q) = %t, want %t", tt.finalizers, tt.controller, tt.last, got, tt.want)
		}
	}
}
