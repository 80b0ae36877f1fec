package managed

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/bosunkit/bosun/conditions"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

func TestDecideCreate(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) string { return formatTime(now.Add(d)) }
	grace := 30 * time.Second
	tests := []struct {
		name          string
		ann           map[string]string
		deterministic bool
		want          guard
	}{
		{"nothing yet", nil, true, guardCreate},
		{"nothing yet, provider names", nil, false, guardCreate},
		{"pending alone, provider names", map[string]string{AnnotationCreatePending: at(-time.Hour)}, false, guardIncomplete},
		{"pending alone, deterministic, recent", map[string]string{AnnotationCreatePending: at(-time.Second)}, true, guardWait},
		{"pending alone, deterministic, old", map[string]string{AnnotationCreatePending: at(-time.Hour)}, true, guardCreate},
		{"pending newer than success", map[string]string{
			AnnotationCreatePending: at(-time.Minute), annotationCreateSucceeded: at(-time.Hour),
		}, false, guardIncomplete},
		{"pending newer than failure", map[string]string{
			AnnotationCreatePending: at(-time.Minute), annotationCreateFailed: at(-time.Hour),
		}, false, guardIncomplete},
		{"success recorded, within grace", map[string]string{
			AnnotationCreatePending: at(-2 * time.Second), annotationCreateSucceeded: at(-time.Second),
		}, false, guardWait},
		{"success recorded, after grace", map[string]string{
			AnnotationCreatePending: at(-2 * time.Minute), annotationCreateSucceeded: at(-time.Minute),
		}, false, guardCreate},
		{"failure recorded", map[string]string{
			AnnotationCreatePending: at(-2 * time.Second), annotationCreateFailed: at(-time.Second),
		}, false, guardCreate},
		{"failure after an older success", map[string]string{
			AnnotationCreatePending: at(-2 * time.Second), annotationCreateSucceeded: at(-time.Minute), annotationCreateFailed: at(-time.Second),
		}, true, guardCreate},
		{"unparsable pending, provider names", map[string]string{
			AnnotationCreatePending: "yesterday", annotationCreateSucceeded: at(-time.Hour),
		}, false, guardIncomplete},
		{"unparsable pending, deterministic", map[string]string{AnnotationCreatePending: "yesterday"}, true, guardWait},
		{"unparsable success counts as absent", map[string]string{
			AnnotationCreatePending: at(-time.Hour), annotationCreateSucceeded: "soon",
		}, false, guardIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decideCreate(tt.ann, now, grace, tt.deterministic); got != tt.want {
				t.Errorf("decideCreate = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestCreateGuard checks what the leak guard decides from the object and
// what the step remembers of it: a failed create it could not record
// stands in for its record, and with names the external system assigns a
// name saved after the pending mark is looked for like a deterministic
// one.
func TestCreateGuard(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) string { return formatTime(now.Add(d)) }
	failedAt := func(d time.Duration) memo { return memo{create: &attempt{at: now.Add(d), n: 1}} }
	tests := []struct {
		name          string
		providerNames bool
		ann           map[string]string
		m             memo
		want          guard
	}{
		{"pending, nothing remembered", false, map[string]string{AnnotationCreatePending: at(-time.Second)}, memo{}, guardWait},
		{"pending, failure remembered", false, map[string]string{AnnotationCreatePending: at(-time.Second)}, failedAt(-time.Millisecond), guardCreate},
		{"pending newer than the remembered failure", false, map[string]string{AnnotationCreatePending: at(-time.Second)}, failedAt(-time.Minute), guardWait},
		{"provider names, pending, no name", true, map[string]string{AnnotationCreatePending: at(-time.Second)}, memo{}, guardIncomplete},
		{"provider names, pending, no name, failure remembered", true, map[string]string{AnnotationCreatePending: at(-time.Second)}, failedAt(-time.Millisecond), guardCreate},
		{"provider names, pending, name saved, recent", true, map[string]string{
			AnnotationCreatePending: at(-time.Second), AnnotationExternalName: "bkt-1",
		}, memo{}, guardWait},
		{"provider names, pending, name saved, old", true, map[string]string{
			AnnotationCreatePending: at(-time.Hour), AnnotationExternalName: "bkt-1",
		}, memo{}, guardCreate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Annotations: tt.ann}}
			got := decideCreate(recorded(recordKeys{}, b, tt.m), now, defaultCreationGracePeriod, !tt.providerNames || ExternalName(b) != "")
			if got != tt.want {
				t.Errorf("decideCreate = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPollInterval(t *testing.T) {
	tests := []struct {
		name    string
		ann     map[string]string
		want    time.Duration
		wantBad bool
	}{
		{"default", nil, time.Minute, false},
		{"override", map[string]string{AnnotationPollInterval: "5m"}, 5 * time.Minute, false},
		{"clamped", map[string]string{AnnotationPollInterval: "1ms"}, 10 * time.Second, false},
		{"invalid falls back", map[string]string{AnnotationPollInterval: "often"}, time.Minute, true},
		{"zero falls back", map[string]string{AnnotationPollInterval: "0s"}, time.Minute, true},
		{"negative falls back", map[string]string{AnnotationPollInterval: "-1m"}, time.Minute, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, bad := pollInterval(tt.ann, time.Minute, 10*time.Second)
			if diff := cmp.Diff([]any{tt.want, tt.wantBad}, []any{got, bad}); diff != "" {
				t.Errorf("pollInterval (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJitter(t *testing.T) {
	tests := []struct {
		r    float64
		want time.Duration
	}{
		{0, 54 * time.Second},
		{0.5, time.Minute},
		{0.999999, 65999996 * time.Microsecond},
	}
	for _, tt := range tests {
		got := jitter(time.Minute, pollJitter, tt.r)
		if got.Round(time.Millisecond) != tt.want.Round(time.Millisecond) {
			t.Errorf("jitter(1m, 0.1, %v) = %v, want %v", tt.r, got, tt.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	got := []time.Duration{}
	for n := 1; n <= 5; n++ {
		got = append(got, backoff(time.Second, n))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
	if got := backoff(time.Minute, 30); got != maxBackoff {
		t.Errorf("backoff(1m, 30) = %v, want %v", got, maxBackoff)
	}
}

func TestParsePolicies(t *testing.T) {
	tests := []struct {
		in      string
		want    Policies
		wantErr bool
	}{
		{"*", AllPolicies(), false},
		{"observe", ObserveOnly(), false},
		{"observe, create,update", Policies{Create: true, Update: true}, false},
		{"delete,late-initialize", Policies{Delete: true, LateInitialize: true}, false},
		{"Observe,Create,Delete,LateInitialize", Policies{Create: true, Delete: true, LateInitialize: true}, false},
		{"", Policies{}, true},
		{"observe,destroy", Policies{}, true},
	}
	for _, tt := range tests {
		got, err := ParsePolicies(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParsePolicies(%q) = %+v, %v; want %+v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("ParsePolicies(%q) error %v does not wrap ErrInvalidPolicy", tt.in, err)
		}
		if err == nil {
			if back, _ := ParsePolicies(got.String()); back != got {
				t.Errorf("ParsePolicies(%q).String() = %q does not parse back", tt.in, got.String())
			}
		}
	}
}

func TestParseDeletionPolicy(t *testing.T) {
	for in, want := range map[string]DeletionPolicy{"delete": DeletionDelete, "orphan": DeletionOrphan, "Orphan": DeletionOrphan, " DELETE ": DeletionDelete, "keep": "", "": ""} {
		got, err := ParseDeletionPolicy(in)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("ParseDeletionPolicy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestNames(t *testing.T) {
	b := &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Name: "logs", UID: types.UID("0c8f-11")}}
	got := []string{ExternalName(b), NameFromNamespacedName(b), NameFromMetadata(b), NameFromUID("bkt-")(b)}
	b.Namespace = "team-a"
	got = append(got, NameFromNamespacedName(b))
	SetExternalName(b, "chosen")
	got = append(got, ExternalName(b))
	if diff := cmp.Diff([]string{"", "logs", "logs", "bkt-0c8f-11", "team-a.logs", "chosen"}, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

// TestDefaultNameIsPerNamespace checks that the default external name of
// two objects of the same name in two namespaces differs, and that no two
// namespaced objects share one.
func TestDefaultNameIsPerNamespace(t *testing.T) {
	seen := map[string]string{}
	for _, nn := range [][2]string{{"a", "b.c"}, {"a-b", "c"}, {"a", "b-c.d"}, {"a", "b-c"}, {"x", "shop"}, {"y", "shop"}} {
		b := &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: nn[0], Name: nn[1]}}
		n := defaults().nameFn(b)
		if prev, dup := seen[n]; dup {
			t.Errorf("%s/%s and %s both get external name %q", nn[0], nn[1], prev, n)
		}
		seen[n] = nn[0] + "/" + nn[1]
	}
}

func TestSetAnnotations(t *testing.T) {
	b := &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"a": "1", "b": "2"}}}
	orig := b.Annotations
	setAnnotations(b, map[string]string{"a": "", "c": "3"})
	if diff := cmp.Diff(map[string]string{"b": "2", "c": "3"}, b.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if orig["a"] != "1" {
		t.Error("setAnnotations changed the map it was given")
	}
	setAnnotations(b, map[string]string{"b": "", "c": ""})
	if b.Annotations != nil {
		t.Errorf("annotations %v, want nil", b.Annotations)
	}
}

func TestWithDetails(t *testing.T) {
	data := map[string][]byte{"user": []byte("u"), "password": []byte("p")}
	got, changed := withDetails(data, ConnectionDetails{"user": []byte("u")})
	if changed || len(got) != 2 {
		t.Errorf("same details: changed %v, data %v", changed, got)
	}
	got, changed = withDetails(data, ConnectionDetails{"endpoint": []byte("e")})
	if !changed || string(got["endpoint"]) != "e" || string(got["password"]) != "p" {
		t.Errorf("new key: changed %v, keys %v", changed, sortedKeys(got))
	}
	if _, ok := data["endpoint"]; ok {
		t.Error("withDetails changed the map it was given")
	}
}

func TestFailKeepsReasonAndSeverity(t *testing.T) {
	s := NewStep[*v1.Bucket](NopConnector[*v1.Bucket]())
	tests := []struct {
		name    string
		err     error
		want    string
		wantSev conditions.Severity
	}{
		{"plain", errors.New("boom"), string(ReasonCreateFailed), conditions.SeverityWarning},
		{"invalid spec", InvalidSpec(errors.New("bad")), string(ReasonInvalidSpec), conditions.SeverityError},
		{"warning with reason", conditions.Warning("Throttled", errors.New("slow down")), "Throttled", conditions.SeverityWarning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.rec.fail(ReasonCreateFailed, tt.err)
			reason, sev, _ := conditions.FromError(err)
			if diff := cmp.Diff([]string{tt.want, string(tt.wantSev), defaultConditionSynced}, []string{string(reason), string(sev), conditions.TypeOf(err)}); diff != "" {
				t.Errorf("fail (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOurs checks which existing resources the step takes for the object's
// own, by owner mark, create record, whether the step chose the name,
// hand-set name, adoption grant and policies; and the reason it gives for
// the others.
func TestOurs(t *testing.T) {
	s := NewStep[*v1.Bucket](NopConnector[*v1.Bucket]())
	b := &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: types.UID("uid-b")}}
	at := func(sec int) string { return formatTime(time.Date(2030, 1, 1, 0, 0, sec, 0, time.UTC)) }
	created := map[string]string{AnnotationExternalName: "x", AnnotationCreatePending: at(1), annotationCreateSucceeded: at(2)}
	handSet := map[string]string{AnnotationExternalName: "x"}
	const chosen, granted = true, true
	tests := []struct {
		name    string
		owner   string
		ann     map[string]string
		chosen  bool
		granted bool
		pol     Policies
		want    bool
		// reason is the reason given when the resource is not the
		// object's.
		reason conditions.Reason
	}{
		{"marked ours", "uid-b", nil, chosen, !granted, AllPolicies(), true, ""},
		{"marked ours, user named", "uid-b", handSet, !chosen, !granted, AllPolicies(), true, ""},
		{"marked another's", "uid-a", created, chosen, granted, AllPolicies(), false, ReasonExternalResourceConflict},
		{"marked another's, user named", "uid-a", handSet, !chosen, granted, AllPolicies(), false, ReasonExternalResourceConflict},
		{"marked another's, observe-only", "uid-a", nil, chosen, granted, ObserveOnly(), false, ReasonExternalResourceConflict},
		{"unmarked, nothing recorded", "", nil, chosen, !granted, AllPolicies(), false, ReasonAdoptionNotGranted},
		{"unmarked, nothing recorded, granted", "", nil, chosen, granted, AllPolicies(), false, ReasonExternalResourceConflict},
		{"unmarked, created under the chosen name", "", created, chosen, !granted, AllPolicies(), true, ""},
		{"unmarked, created under a hand-set name", "", created, !chosen, !granted, AllPolicies(), false, ReasonAdoptionNotGranted},
		{"unmarked, created under a hand-set name, granted", "", created, !chosen, granted, AllPolicies(), true, ""},
		{"unmarked, crash window", "", map[string]string{AnnotationExternalName: "x", AnnotationCreatePending: at(3), annotationCreateSucceeded: at(2)}, chosen, !granted, AllPolicies(), true, ""},
		{"unmarked, last create failed", "", map[string]string{AnnotationExternalName: "x", AnnotationCreatePending: at(1), annotationCreateFailed: at(2)}, chosen, granted, AllPolicies(), false, ReasonExternalResourceConflict},
		{"unmarked, failed after an older success", "", map[string]string{AnnotationExternalName: "x", AnnotationCreatePending: at(3), annotationCreateSucceeded: at(2), annotationCreateFailed: at(4)}, chosen, !granted, AllPolicies(), false, ReasonAdoptionNotGranted},
		{"unmarked, user named", "", handSet, !chosen, !granted, AllPolicies(), false, ReasonAdoptionNotGranted},
		{"unmarked, user named, granted", "", handSet, !chosen, granted, AllPolicies(), true, ""},
		{"unmarked, observe-only", "", nil, chosen, !granted, ObserveOnly(), false, ReasonAdoptionNotGranted},
		{"unmarked, observe-only, granted", "", nil, chosen, granted, ObserveOnly(), true, ""},
		{"unmarked, observe and late-initialise, granted", "", nil, chosen, granted, Policies{LateInitialize: true}, true, ""},
		{"unmarked, observe and update, granted", "", nil, chosen, granted, Policies{Update: true}, false, ReasonExternalResourceConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b.Annotations = tt.ann
			obs := Observation{Exists: true, Owner: tt.owner}
			f := facts{identity: Identity(b), ann: tt.ann, chosen: tt.chosen, granted: tt.granted, pol: tt.pol}
			got := f.owns(obs)
			var reason conditions.Reason
			if !got {
				reason, _, _ = conditions.FromError(s.rec.notOurs(b, "x", obs, tt.granted))
			}
			if diff := cmp.Diff([]any{tt.want, tt.reason}, []any{got, reason}); diff != "" {
				t.Errorf("owned and reason (-want +got):\n%s", diff)
			}
			if need := f.needsGrant(obs); need != (tt.owner == "" && (!f.claim().created || !tt.chosen)) {
				t.Errorf("needsGrant = %t", need)
			}
		})
	}
}

func TestParseDeletionOrder(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    DeletionOrder
		wantErr bool
	}{
		{in: "immediate", want: DeletionOrderImmediate},
		{in: " Last ", want: DeletionOrderLast},
		{in: "first", wantErr: true},
		{in: "", wantErr: true},
	} {
		got, err := ParseDeletionOrder(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseDeletionOrder(%q) = %q, %v; want %q, error %t", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("ParseDeletionOrder(%q): error %v does not wrap ErrInvalidPolicy", tc.in, err)
		}
	}
}
