package panics

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/bosunkit/bosun/conditions"
)

func TestCatch(t *testing.T) {
	errBoom := errors.New("boom")
	var nilMap map[string]int
	for _, tc := range []struct {
		name    string
		fn      func()
		want    *conditions.PanicError
		wantErr error // reached by errors.Is through the PanicError
	}{
		{"returns", func() {}, nil, nil},
		{"panics with a string", func() { panic("bad input") }, &conditions.PanicError{Step: "s", Value: "bad input"}, nil},
		{"panics with an error", func() { panic(errBoom) }, &conditions.PanicError{Step: "s", Value: errBoom}, errBoom},
		{"panics with nil", func() { panic(nil) }, &conditions.PanicError{Step: "s", Value: new(runtime.PanicNilError)}, nil},
		{"runtime error", func() { nilMap["x"] = 1 }, &conditions.PanicError{Step: "s", Value: "assignment to entry in nil map"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Catch("s", tc.fn)
			if got != nil {
				if !strings.Contains(string(got.Stack), "panics.TestCatch") {
					t.Errorf("stack does not show the panicking function:\n%s", got.Stack)
				}
				if tc.wantErr != nil && !errors.Is(got, tc.wantErr) {
					t.Errorf("errors.Is(%v, %v) = false", got, tc.wantErr)
				}
			}
			valueText := cmp.Comparer(func(a, b any) bool { return valueString(a) == valueString(b) })
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(conditions.PanicError{}, "Stack"), cmp.FilterPath(isValue, valueText)); diff != "" {
				t.Errorf("Catch (-want +got):\n%s", diff)
			}
		})
	}
}

// isValue selects the Value field, compared by its text: a runtime error
// is not comparable with ==.
func isValue(p cmp.Path) bool { return p.Last().String() == ".Value" }

func valueString(v any) string {
	switch v := v.(type) {
	case error:
		return v.Error()
	case string:
		return v
	}
	return "?"
}

// TestCatchKeepsResults checks that results a fn assigns before it
// returns reach the caller, and that a panic leaves them as they were.
func TestCatchKeepsResults(t *testing.T) {
	n, err := 0, error(nil)
	if pe := Catch("s", func() { n, err = 1, errors.New("failed") }); pe != nil || n != 1 || err == nil {
		t.Errorf("Catch = %v with n=%d, err=%v; want nil with n=1 and an error", pe, n, err)
	}
	n, err = 7, nil
	if pe := Catch("s", func() { n, err = sum(nil), nil }); pe == nil || n != 7 || err != nil {
		t.Errorf("Catch = %v with n=%d, err=%v; want a PanicError with n=7, err=nil", pe, n, err)
	}
}

func sum(xs []int) int { return xs[0] + xs[1] }
