package bosuntest_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/bosunkit/bosun/bosuntest"
)

func TestLogRecorder(t *testing.T) {
	errBoom := errors.New("boom")
	var rec bosuntest.LogRecorder
	log := rec.Logger()
	log.Info("starting", "workers", 2)
	named := log.WithName("ctrl").WithValues("controller", "greeting").WithName("step")
	named.V(3).Info("detail", "step", "render")
	named.Error(errBoom, "reconcile failed", "object", "ns/hello")
	named.Error(nil, "no error given")

	want := []bosuntest.LogEntry{
		{Message: "starting", Values: []any{"workers", 2}},
		{Level: 3, Name: "ctrl/step", Message: "detail", Values: []any{"controller", "greeting", "step", "render"}},
		{Error: true, Name: "ctrl/step", Message: "reconcile failed", Err: errBoom, Values: []any{"controller", "greeting", "object", "ns/hello"}},
		{Error: true, Name: "ctrl/step", Message: "no error given", Values: []any{"controller", "greeting"}},
	}
	noTime := cmpopts.IgnoreFields(bosuntest.LogEntry{}, "Time")
	if diff := cmp.Diff(want, rec.Entries(), cmpopts.EquateErrors(), noTime); diff != "" {
		t.Errorf("Entries() (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[2:], rec.Errors(), cmpopts.EquateErrors(), noTime); diff != "" {
		t.Errorf("Errors() (-want +got):\n%s", diff)
	}
	for i, e := range rec.Entries() {
		if e.Time.IsZero() || i > 0 && e.Time.Before(rec.Entries()[i-1].Time) {
			t.Errorf("entry %d (%q) has time %s, want one no earlier than the line before", i, e.Message, e.Time)
		}
	}
	rec.Reset()
	if got := rec.Entries(); len(got) != 0 {
		t.Errorf("Entries() after Reset = %v, want none", got)
	}
}

func TestLogRecorderWrap(t *testing.T) {
	var printed []string
	next := funcr.New(func(prefix, args string) { printed = append(printed, prefix+" "+args) },
		funcr.Options{Verbosity: 1})
	var rec bosuntest.LogRecorder
	log := rec.Wrap(next.WithValues("before", 1)).WithName("ctrl").WithValues("after", 2)
	log.Info("shown")
	log.V(1).Info("shown too")
	log.V(2).Info("hidden")
	log.Error(errors.New("boom"), "failed")

	wantPrinted := []string{
		`ctrl "level"=0 "msg"="shown" "before"=1 "after"=2`,
		`ctrl "level"=1 "msg"="shown too" "before"=1 "after"=2`,
		`ctrl "msg"="failed" "error"="boom" "before"=1 "after"=2`,
	}
	if diff := cmp.Diff(wantPrinted, printed); diff != "" {
		t.Errorf("lines passed on (-want +got):\n%s", diff)
	}
	var got []string
	for _, e := range rec.Entries() {
		got = append(got, e.String())
	}
	wantRecorded := []string{
		`V0 ctrl: shown after=2`,
		`V1 ctrl: shown too after=2`,
		`V2 ctrl: hidden after=2`,
		`ERROR ctrl: failed err="boom" after=2`,
	}
	if diff := cmp.Diff(wantRecorded, got); diff != "" {
		t.Errorf("lines recorded (-want +got):\n%s", diff)
	}
}

func TestLogRecorderConcurrent(t *testing.T) {
	var rec bosuntest.LogRecorder
	log := rec.Logger()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			l := log.WithValues("worker", i)
			for range 100 {
				l.Info("tick")
			}
		})
	}
	wg.Wait()
	if got := len(rec.Entries()); got != 800 {
		t.Errorf("recorded %d lines, want 800", got)
	}
}

func TestLogEntry(t *testing.T) {
	tests := []struct {
		name      string
		entry     bosuntest.LogEntry
		want      string
		key       string
		wantValue any
		wantFound bool
	}{
		{
			name:  "info",
			entry: bosuntest.LogEntry{Level: 1, Message: "saved", Values: []any{"object", "ns/a", "changed", true}},
			want:  `V1 saved object="ns/a" changed=true`,
			key:   "changed", wantValue: true, wantFound: true,
		},
		{
			name:  "error with name",
			entry: bosuntest.LogEntry{Error: true, Name: "a/b", Message: "failed", Err: errors.New("conflict"), Values: []any{"cause", errors.New("x")}},
			want:  `ERROR a/b: failed err="conflict" cause="x"`,
			key:   "missing",
		},
		{
			name:  "nil error",
			entry: bosuntest.LogEntry{Error: true, Message: "odd"},
			want:  `ERROR odd err="<nil>"`,
		},
		{
			name:  "repeated key, last wins",
			entry: bosuntest.LogEntry{Message: "m", Values: []any{"k", 1, "k", 2}},
			want:  `V0 m k=1 k=2`,
			key:   "k", wantValue: 2, wantFound: true,
		},
		{
			name:  "dangling key",
			entry: bosuntest.LogEntry{Message: "m", Values: []any{"k", 1, "lonely"}},
			want:  `V0 m k=1 lonely=<missing>`,
			key:   "lonely",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.entry.String(); got != tt.want {
				t.Errorf("String() = %s, want %s", got, tt.want)
			}
			if tt.key == "" {
				return
			}
			v, ok := tt.entry.Value(tt.key)
			if v != tt.wantValue || ok != tt.wantFound {
				t.Errorf("Value(%q) = %v, %v; want %v, %v", tt.key, v, ok, tt.wantValue, tt.wantFound)
			}
		})
	}
}

func TestLogRecorderMaxLevel(t *testing.T) {
	for _, tt := range []struct {
		max  int
		want []int
	}{
		{max: 0, want: []int{0, 1, 8}},
		{max: 1, want: []int{0, 1}},
	} {
		r := &bosuntest.LogRecorder{MaxLevel: tt.max}
		l := r.Logger()
		for _, v := range []int{0, 1, 8} {
			l.V(v).Info("line")
		}
		var got []int
		for _, e := range r.Entries() {
			got = append(got, e.Level)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("MaxLevel %d recorded levels %v, want %v", tt.max, got, tt.want)
		}
	}
}
