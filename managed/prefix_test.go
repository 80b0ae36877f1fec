package managed

import (
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
)

// TestRecordKeys checks how a step with an annotation prefix of its own
// reads and writes its annotations: under the prefix, seen by their
// default keys, with another step's (the default one's) neither seen nor
// touched; the policies stay where they are.
func TestRecordKeys(t *testing.T) {
	theirs := map[string]string{
		AnnotationExternalName:       "theirs",
		annotationCreateSucceeded:    "2026-01-01T00:00:00Z",
		AnnotationDeletionPolicy:     "Orphan",
		"second.bosun.dev/unrelated": "kept",
	}
	mine := recordKeys{prefix: "second.bosun.dev"}
	tests := []struct {
		name     string
		keys     recordKeys
		ann      map[string]string
		set      map[string]string
		wantView map[string]string
		wantAnn  map[string]string
	}{{
		name:     "default prefix reads and writes the default keys",
		ann:      theirs,
		set:      map[string]string{AnnotationCreatePending: "p", AnnotationExternalName: ""},
		wantView: theirs,
		wantAnn: map[string]string{
			AnnotationCreatePending:      "p",
			annotationCreateSucceeded:    "2026-01-01T00:00:00Z",
			AnnotationDeletionPolicy:     "Orphan",
			"second.bosun.dev/unrelated": "kept",
		},
	}, {
		name: "a prefix of its own sees none of the default step's records",
		keys: mine,
		ann:  theirs,
		set:  map[string]string{AnnotationCreatePending: "p", AnnotationExternalName: "mine"},
		wantView: map[string]string{
			AnnotationDeletionPolicy:     "Orphan",
			"second.bosun.dev/unrelated": "kept",
		},
		wantAnn: map[string]string{
			AnnotationExternalName:                     "theirs",
			annotationCreateSucceeded:                  "2026-01-01T00:00:00Z",
			AnnotationDeletionPolicy:                   "Orphan",
			"second.bosun.dev/unrelated":               "kept",
			"second.bosun.dev/external-create-pending": "p",
			"second.bosun.dev/external-name":           "mine",
		},
	}, {
		name: "a prefix of its own reads its records by the default keys",
		keys: mine,
		ann: map[string]string{
			AnnotationExternalName:                "theirs",
			"second.bosun.dev/external-name":      "mine",
			"second.bosun.dev/external-operation": "create:t",
		},
		set: map[string]string{annotationOperation: ""},
		wantView: map[string]string{
			AnnotationExternalName: "mine",
			annotationOperation:    "create:t",
		},
		wantAnn: map[string]string{
			AnnotationExternalName:           "theirs",
			"second.bosun.dev/external-name": "mine",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Annotations: maps.Clone(tt.ann)}}
			if diff := cmp.Diff(tt.wantView, tt.keys.view(b)); diff != "" {
				t.Errorf("view (-want +got):\n%s", diff)
			}
			tt.keys.mark(b, tt.set)
			if diff := cmp.Diff(tt.wantAnn, b.Annotations); diff != "" {
				t.Errorf("annotations after mark (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLendName checks what an ExternalClient of a step with a prefix of its
// own sees during a call: the step's name under AnnotationExternalName;
// and what the step keeps after it: the name the client set, under the
// prefix, and the default step's name as it was.
func TestLendName(t *testing.T) {
	keys := recordKeys{prefix: "second.bosun.dev"}
	for _, tt := range []struct {
		name     string
		ann      map[string]string
		assigned string
		during   string
		want     map[string]string
	}{
		{"beside the default step's name", map[string]string{AnnotationExternalName: "theirs", "second.bosun.dev/external-name": "mine"}, "", "mine",
			map[string]string{AnnotationExternalName: "theirs", "second.bosun.dev/external-name": "mine"}},
		{"a name the external system assigns", map[string]string{AnnotationExternalName: "theirs"}, "assigned", "",
			map[string]string{AnnotationExternalName: "theirs", "second.bosun.dev/external-name": "assigned"}},
		{"no default step", map[string]string{"second.bosun.dev/external-name": "mine"}, "", "mine",
			map[string]string{"second.bosun.dev/external-name": "mine"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Annotations: maps.Clone(tt.ann)}}
			takeBack := keys.lendName(b)
			if got := ExternalName(b); got != tt.during {
				t.Errorf("ExternalName during the call = %q, want %q", got, tt.during)
			}
			if tt.assigned != "" {
				SetExternalName(b, tt.assigned)
			}
			takeBack()
			if diff := cmp.Diff(tt.want, b.Annotations); diff != "" {
				t.Errorf("annotations after the call (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTwoStepsKeepRecordsApart runs two managed steps on one Bucket, each
// in a cloud of its own: the default one with names it chooses, and one
// with an annotation prefix of its own whose cloud assigns the names.
// Each creates its resource once, at once (neither takes the other's
// create for its own and waits out the creation grace period, a minute
// here), each name is where its step keeps it, and the delete empties
// both clouds. Without WithAnnotationPrefix the second step waited for the
// grace period after the first one's create.
func TestTwoStepsKeepRecordsApart(t *testing.T) {
	first, second := newCloud(), newCloud()
	second.assignNames = true
	grace := WithTiming(Timing{CreationGrace: time.Minute})
	secondStep := NewStep[*v1.Bucket](second, append(testOpts(), grace, WithName("second"),
		WithConditionTypes("SecondSynced", "SecondAvailable"), WithAnnotationPrefix("second.bosun.dev"), WithProviderNames())...)
	var firstStep *Step[*v1.Bucket]
	e := startRig(t, first, rig{
		opts: []Option{grace},
		step: func(s *Step[*v1.Bucket]) bosun.Step[*v1.Bucket] {
			firstStep = s
			return bosun.Join[*v1.Bucket](s, secondStep)
		},
	})
	e.create("pair", 1, "", nil)
	b := e.wait("pair", map[string]cond{
		defaultConditionSynced:    {metav1.ConditionTrue, ReasonReconcileSuccess},
		defaultConditionAvailable: {metav1.ConditionTrue, ReasonAvailable},
		"SecondSynced":            {metav1.ConditionTrue, ReasonReconcileSuccess},
		"SecondAvailable":         {metav1.ConditionTrue, ReasonAvailable},
	})
	if got, want := b.Annotations[AnnotationExternalName], NameFromNamespacedName(b); got != want || firstStep.ExternalName(b) != want {
		t.Errorf("%s = %q, the first step's ExternalName %q, want both the first step's %q", AnnotationExternalName, got, firstStep.ExternalName(b), want)
	}
	theirs := b.Annotations["second.bosun.dev/external-name"]
	if got := secondStep.ExternalName(b); got != theirs || got == "" {
		t.Errorf("the second step's ExternalName = %q, want its annotation's %q", got, theirs)
	}
	if got := second.live(); len(got) != 1 || got[0] != theirs {
		t.Errorf("second cloud holds %v, want only the name the second step recorded, %q", got, theirs)
	}
	for _, k := range []string{annotationCreateSucceeded, "second.bosun.dev/external-create-succeeded"} {
		if _, ok := b.Annotations[k]; !ok {
			t.Errorf("annotations %v lack %s", b.Annotations, k)
		}
	}
	for i, cl := range []*cloud{first, second} {
		if c, _, _ := cl.counts(); c != 1 {
			t.Errorf("cloud %d: %d creates, want 1", i+1, c)
		}
	}
	e.delete("pair")
	e.waitGone("pair")
	for i, cl := range []*cloud{first, second} {
		if got := cl.live(); len(got) != 0 {
			t.Errorf("cloud %d still holds %v after the object is gone", i+1, got)
		}
	}
}
