package conditions_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun/conditions"
)

// classified is what FromError returns, as one comparable value.
type classified struct {
	Reason   conditions.Reason
	Severity conditions.Severity
	Message  string
}

func classify(err error) classified {
	r, s, m := conditions.FromError(err)
	return classified{Reason: r, Severity: s, Message: m}
}

func TestFromError(t *testing.T) {
	errBoom := errors.New("boom")
	errZero := errors.New("divisor is zero")
	terminalSpec := conditions.Terminal("InvalidSpec", errZero)
	panicked := &conditions.PanicError{Step: "divide", Value: "bad input", Stack: []byte("goroutine 1 [running]:")}
	long := "x" + strings.Repeat("é", 20000)

	const (
		sevErr  = conditions.SeverityError
		sevWarn = conditions.SeverityWarning
		rErr    = conditions.ReasonError
	)
	tests := []struct {
		name string
		err  error
		want classified
	}{
		{"nil", nil, classified{}},
		{"plain error", errBoom, classified{rErr, sevWarn, "boom"}},
		{"wrapped plain error", fmt.Errorf("read secret: %w", errBoom), classified{rErr, sevWarn, "read secret: boom"}},
		{"terminal", terminalSpec, classified{"InvalidSpec", sevErr, "divisor is zero"}},
		{"terminalf", conditions.Terminalf("InvalidSpec", "divisor %d is zero", 0), classified{"InvalidSpec", sevErr, "divisor 0 is zero"}},
		{"warning", conditions.Warning("SecretMissing", errBoom), classified{"SecretMissing", sevWarn, "boom"}},
		{"warningf", conditions.Warningf("SecretMissing", "secret %q: %w", "in", errBoom), classified{"SecretMissing", sevWarn, `secret "in": boom`}},
		{"wrapped terminal", fmt.Errorf("step divide: %w", terminalSpec), classified{"InvalidSpec", sevErr, "step divide: divisor is zero"}},
		{"terminal without error", conditions.Terminal("Frozen", nil), classified{"Frozen", sevErr, "Frozen"}},
		{"zero typed error", &conditions.Error{}, classified{rErr, sevWarn, string(rErr)}},
		{"typed error without reason or severity", &conditions.Error{Err: errBoom}, classified{rErr, sevWarn, "boom"}},
		{"invalid reason with a space", conditions.Terminal("not valid", errBoom), classified{rErr, sevErr, "boom"}},
		{"invalid reason ending in a colon", conditions.Terminal("Bad:", errBoom), classified{rErr, sevErr, "boom"}},
		{"invalid reason starting with a digit", conditions.Warning("1Bad", errBoom), classified{rErr, sevWarn, "boom"}},
		{"valid reason with punctuation", conditions.Warning("Not_Ready,Yet:2", errBoom), classified{"Not_Ready,Yet:2", sevWarn, "boom"}},
		{"invalid reason too long", conditions.Warning(conditions.Reason(strings.Repeat("A", 1025)), errBoom), classified{rErr, sevWarn, "boom"}},
		{"controller-runtime terminal", reconcile.TerminalError(errBoom), classified{rErr, sevErr, "terminal error: boom"}},
		{"wrapped controller-runtime terminal", fmt.Errorf("step x: %w", reconcile.TerminalError(errBoom)), classified{rErr, sevErr, "step x: terminal error: boom"}},
		{"warning around a terminal: outermost decides", conditions.Warning("Retry", reconcile.TerminalError(errBoom)), classified{"Retry", sevWarn, "terminal error: boom"}},
		{"panic", panicked, classified{conditions.ReasonPanic, sevWarn, `panic in divide: bad input`}},
		{"panic with a terminal value", &conditions.PanicError{Step: "a", Value: terminalSpec}, classified{conditions.ReasonPanic, sevWarn, `panic in a: divisor is zero`}},
		{"wrapped panic", fmt.Errorf("step divide: %w", panicked), classified{conditions.ReasonPanic, sevWarn, `step divide: panic in divide: bad input`}},
		{"joined terminals", errors.Join(terminalSpec, conditions.Terminal("Other", errBoom)), classified{"InvalidSpec", sevErr, "divisor is zero\nboom"}},
		{"joined terminal and plain", errors.Join(terminalSpec, errBoom), classified{"InvalidSpec", sevWarn, "divisor is zero\nboom"}},
		{"joined plain and terminal", errors.Join(errBoom, terminalSpec), classified{"InvalidSpec", sevWarn, "boom\ndivisor is zero"}},
		{"joined terminal kinds", errors.Join(reconcile.TerminalError(errBoom), terminalSpec), classified{"InvalidSpec", sevErr, "terminal error: boom\ndivisor is zero"}},
		{"joined plain and panic", errors.Join(errBoom, panicked), classified{conditions.ReasonPanic, sevWarn, "boom\n" + panicked.Error()}},
		{"joined terminal and panic", errors.Join(terminalSpec, panicked), classified{conditions.ReasonPanic, sevWarn, "divisor is zero\n" + panicked.Error()}},
		{"two terminals in one Errorf", fmt.Errorf("%w; %w", terminalSpec, reconcile.TerminalError(errBoom)), classified{"InvalidSpec", sevErr, "divisor is zero; terminal error: boom"}},
		{"terminal joined with nothing else", errors.Join(nil, terminalSpec), classified{"InvalidSpec", sevErr, "divisor is zero"}},
		{"long message cut at a character boundary", errors.New(long), classified{rErr, sevWarn, "x" + strings.Repeat("é", 16383)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classify(tt.err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FromError() mismatch (-want +got):\n%s", diff)
			}
			if len(got.Message) > conditions.MaxMessageLength || !utf8.ValidString(got.Message) {
				t.Errorf("message of %d bytes, valid UTF-8 %v; want at most %d bytes of valid UTF-8",
					len(got.Message), utf8.ValidString(got.Message), conditions.MaxMessageLength)
			}
		})
	}
}

func TestTypeOf(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, conditions.TypeReady},
		{"plain", errBoom, conditions.TypeReady},
		{"terminal names no type", conditions.Terminal("R", errBoom), conditions.TypeReady},
		{"typed with a type", &conditions.Error{Type: "Synced", Reason: "R", Err: errBoom}, "Synced"},
		{"wrapped typed with a type", fmt.Errorf("step: %w", &conditions.Error{Type: "Synced", Err: errBoom}), "Synced"},
		{"first typed error wins", errors.Join(&conditions.Error{Type: "A"}, &conditions.Error{Type: "B"}), "A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, conditions.TypeOf(tt.err)); diff != "" {
				t.Errorf("TypeOf() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorUnwrap(t *testing.T) {
	errBase := errors.New("base")
	tests := []struct {
		name string
		err  error
	}{
		{"Terminal", conditions.Terminal("R", errBase)},
		{"Warning", conditions.Warning("R", errBase)},
		{"Terminalf", conditions.Terminalf("R", "ctx: %w", errBase)},
		{"Warningf", conditions.Warningf("R", "ctx: %w", errBase)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, errBase) {
				t.Errorf("errors.Is(%v, base) = false, want true", tt.err)
			}
			var te *conditions.Error
			if !errors.As(tt.err, &te) || te.Reason != "R" {
				t.Errorf("errors.As(%v, *Error) did not find reason R", tt.err)
			}
		})
	}
	if got := conditions.Terminal("R", nil); got == nil || errors.Unwrap(got) != nil {
		t.Errorf("Terminal(R, nil) = %#v, want a non-nil error wrapping nothing", got)
	}
}

func TestErrorCondition(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name string
		err  error
		want metav1.Condition
	}{
		{"nil", nil, metav1.Condition{}},
		{"plain", errBoom, metav1.Condition{
			Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(conditions.ReasonError), Message: "boom", ObservedGeneration: 6,
		}},
		{"typed for another condition", &conditions.Error{Type: "Synced", Reason: "Stale", Severity: conditions.SeverityError, Err: errBoom}, metav1.Condition{
			Type: "Synced", Status: metav1.ConditionFalse, Reason: "Stale", Message: "boom", ObservedGeneration: 6,
		}},
		{"panic", &conditions.PanicError{Step: "a", Value: "x"}, metav1.Condition{
			Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(conditions.ReasonPanic), Message: `panic in a: x`, ObservedGeneration: 6,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, conditions.ErrorCondition(tt.err, 6)); diff != "" {
				t.Errorf("ErrorCondition() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
