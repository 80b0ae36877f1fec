package oracle_test

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/oracle"
)

func TestNoConflictErrors(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "test.bosun.dev", Resource: "widgets"}, "w1", errors.New(oracle.ConflictMessage))
	tests := []struct {
		name    string
		entries []bosuntest.LogEntry
		want    []string
		not     []string
	}{
		{name: "no lines"},
		{
			name: "other errors and info lines",
			entries: []bosuntest.LogEntry{
				{Error: true, Message: "reconcile failed", Err: errors.New("boom")},
				{Error: true, Message: "no error given"},
				{Message: "retrying after a conflict", Values: []any{"err", conflict}},
				{Level: 1, Message: oracle.ConflictMessage},
			},
		},
		{
			name:    "conflict error",
			entries: []bosuntest.LogEntry{{Error: true, Name: "widget", Message: "reconcile failed", Err: conflict}},
			want:    []string{"line 0: ERROR widget: reconcile failed", `widgets.test.bosun.dev \"w1\"`},
		},
		{
			name: "wrapped conflict among others",
			entries: []bosuntest.LogEntry{
				{Error: true, Message: "first", Err: errors.New("boom")},
				{Error: true, Message: "second", Err: fmt.Errorf("saving status: %w", conflict)},
			},
			want: []string{"line 1: ERROR second", "saving status"},
			not:  []string{"first"},
		},
		{
			name:    "message text only",
			entries: []bosuntest.LogEntry{{Error: true, Message: "update failed", Err: errors.New("Operation cannot be fulfilled: " + oracle.ConflictMessage)}},
			want:    []string{"line 0: ERROR update failed"},
		},
		{
			name:    "text in a value",
			entries: []bosuntest.LogEntry{{Error: true, Message: "update failed", Values: []any{"reason", oracle.ConflictMessage}}},
			want:    []string{"line 0: ERROR update failed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := oracle.NoConflictErrors(tt.entries)
			var is []error
			if len(tt.want) > 0 {
				is = []error{oracle.ErrConflictLogged}
			}
			checkErr(t, err, is, tt.want)
			unwanted(t, err, tt.not)
		})
	}
}
