package flow_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/flow"
)

func TestBuildErrors(t *testing.T) {
	a := flow.Nop()
	tests := []struct {
		name    string
		build   func()
		want    flow.BuildError
		wantMsg string
	}{
		{"New nil fn", func() { flow.New("x", nil) },
			flow.BuildError{Combinator: "New", Argument: "fn", Reason: "must not be nil"}, "flow: New: argument fn: must not be nil"},
		{"Sequence nil action", func() { flow.Sequence(a, nil) },
			flow.BuildError{Combinator: "Sequence", Argument: "actions[1]", Reason: "must not be nil"}, "flow: Sequence: argument actions[1]: must not be nil"},
		{"Join nil action", func() { flow.Join(nil) },
			flow.BuildError{Combinator: "Join", Argument: "actions[0]", Reason: "must not be nil"}, ""},
		{"OrderedJoin nil action", func() { flow.OrderedJoin(a, a, nil) },
			flow.BuildError{Combinator: "OrderedJoin", Argument: "actions[2]", Reason: "must not be nil"}, ""},
		{"ParallelJoin nil action", func() { flow.ParallelJoin(a, nil) },
			flow.BuildError{Combinator: "ParallelJoin", Argument: "actions[1]", Reason: "must not be nil"}, ""},
		{"Timeout zero", func() { flow.Timeout(0, a) },
			flow.BuildError{Combinator: "Timeout", Argument: "d", Reason: "must be positive, got 0s"}, "flow: Timeout: argument d: must be positive, got 0s"},
		{"Timeout negative", func() { flow.Timeout(-time.Second, a) },
			flow.BuildError{Combinator: "Timeout", Argument: "d", Reason: "must be positive, got -1s"}, ""},
		{"Timeout nil action", func() { flow.Timeout(time.Second, nil) },
			flow.BuildError{Combinator: "Timeout", Argument: "a", Reason: "must not be nil"}, ""},
		{"If nil action", func() { flow.If(true, nil) },
			flow.BuildError{Combinator: "If", Argument: "a", Reason: "must not be nil"}, ""},
		{"IfElse nil a", func() { flow.IfElse(true, nil, a) },
			flow.BuildError{Combinator: "IfElse", Argument: "a", Reason: "must not be nil"}, ""},
		{"IfElse nil b", func() { flow.IfElse(true, a, nil) },
			flow.BuildError{Combinator: "IfElse", Argument: "b", Reason: "must not be nil"}, ""},
		{"When nil predicate", func() { flow.When(nil, a) },
			flow.BuildError{Combinator: "When", Argument: "pred", Reason: "must not be nil"}, ""},
		{"When nil action", func() { flow.When(func(context.Context) bool { return true }, nil) },
			flow.BuildError{Combinator: "When", Argument: "a", Reason: "must not be nil"}, ""},
		{"Retry zero limit", func() { flow.Retry(0, 0, a) },
			flow.BuildError{Combinator: "Retry", Argument: "limit", Reason: "must be positive, got 0"}, "flow: Retry: argument limit: must be positive, got 0"},
		{"Retry nil action", func() { flow.Retry(1, 0, nil) },
			flow.BuildError{Combinator: "Retry", Argument: "a", Reason: "must not be nil"}, ""},
		{"Retry negative limit", func() { flow.Retry(-2, time.Second, a) },
			flow.BuildError{Combinator: "Retry", Argument: "limit", Reason: "must be positive, got -2"}, ""},
		{"Retry negative interval", func() { flow.Retry(2, -time.Millisecond, a) },
			flow.BuildError{Combinator: "Retry", Argument: "interval", Reason: "must not be negative, got -1ms"}, ""},
		{"Shared nil action", func() { flow.Shared(nil) },
			flow.BuildError{Combinator: "Shared", Argument: "a", Reason: "must not be nil"}, ""},
		{"WithHooks nil action", func() { flow.WithHooks(nil) },
			flow.BuildError{Combinator: "WithHooks", Argument: "a", Reason: "must not be nil"}, ""},
		{"WithHooks nil hook", func() { flow.WithHooks(a, flow.NopHook(), nil) },
			flow.BuildError{Combinator: "WithHooks", Argument: "hooks[1]", Reason: "must not be nil"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := capture(tt.build)
			err, ok := v.(error)
			if !ok {
				t.Fatalf("recovered %v (%T), want a *BuildError", v, v)
			}
			var be *flow.BuildError
			if !errors.As(err, &be) {
				t.Fatalf("recovered %T, want a *BuildError", err)
			}
			if diff := cmp.Diff(tt.want, *be); diff != "" {
				t.Errorf("BuildError mismatch (-want +got):\n%s", diff)
			}
			if tt.wantMsg != "" && be.Error() != tt.wantMsg {
				t.Errorf("Error() = %q, want %q", be.Error(), tt.wantMsg)
			}
		})
	}
}

func TestValidArgumentsDoNotPanic(t *testing.T) {
	a := flow.Nop()
	builds := []func(){
		func() { flow.Sequence() },
		func() { flow.Join() },
		func() { flow.ParallelJoin() },
		func() { flow.Timeout(time.Nanosecond, a) },
		func() { flow.Retry(1, 0, a) },
		func() { flow.Retry(1, 0, a) },
		func() { flow.WithHooks(a) },
	}
	for i, b := range builds {
		if v := capture(b); v != nil {
			t.Errorf("build %d panicked: %v", i, v)
		}
	}
}
