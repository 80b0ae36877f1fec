package conditions_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/conditions"
)

// TestMessagesAreBounded checks that no message Set stores, nor one
// Summarize derives, is longer than the API server accepts, that a cut
// never splits a character, and that messages within the limit stay as
// they are.
func TestMessagesAreBounded(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	// "é" is two bytes: a cut at an odd byte count would split one.
	accents := strings.Repeat("é", conditions.MaxMessageLength)
	exact := strings.Repeat("y", conditions.MaxMessageLength)
	for _, tc := range []struct {
		name, msg string
		same      bool
	}{
		{"short", "all good", true},
		{"at the limit", exact, true},
		{"ASCII over the limit", long, false},
		{"two-byte characters over the limit", accents, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var conds []metav1.Condition
			conditions.Set(&conds, metav1.Condition{Type: "Synced", Status: metav1.ConditionFalse, Reason: "Broken", Message: tc.msg}, t0)
			got := conditions.Find(conds, "Synced").Message
			check := func(what, got string) {
				t.Helper()
				if len(got) > conditions.MaxMessageLength {
					t.Errorf("%s message is %d bytes, want at most %d", what, len(got), conditions.MaxMessageLength)
				}
				if !utf8.ValidString(got) {
					t.Errorf("%s message is not valid UTF-8 after the cut", what)
				}
				if tc.same && got != tc.msg {
					t.Errorf("%s message changed although within the limit", what)
				}
				if !tc.same && !strings.HasPrefix(tc.msg, strings.TrimSuffix(got, conditions.CutMarker)) {
					t.Errorf("%s message is not a prefix of the original", what)
				}
				if !tc.same && !strings.HasSuffix(got, conditions.CutMarker) {
					t.Errorf("%s message does not end with %q", what, conditions.CutMarker)
				}
			}
			check("Set", got)
			// Set with the same long message again reports no change.
			if conditions.Set(&conds, metav1.Condition{Type: "Synced", Status: metav1.ConditionFalse, Reason: "Broken", Message: tc.msg}, t1) {
				t.Error("setting the same message again reported a change")
			}
			unbounded := []metav1.Condition{{Type: "Synced", Status: metav1.ConditionFalse, Reason: "Broken", Message: tc.msg}}
			check("Summarize", conditions.Summarize(unbounded, []string{"Synced"}, 1).Message)
		})
	}
}
