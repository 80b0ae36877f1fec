package oracle_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/bosuntest/oracle"
)

// checkErr compares err with what a table test wants: nil when want is
// empty, otherwise an error wrapping each of is and whose text holds each
// of want.
func checkErr(t *testing.T, err error, is []error, want []string) {
	t.Helper()
	if len(is) == 0 && len(want) == 0 {
		if err != nil {
			t.Fatalf("err = %v, want nil", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("err = nil, want one wrapping %v and saying %q", is, want)
	}
	for _, target := range is {
		if !errors.Is(err, target) {
			t.Errorf("err = %v, want it to wrap %v", err, target)
		}
	}
	for _, s := range want {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("err = %v\nwant it to hold %q", err, s)
		}
	}
}

// unwanted fails the test when err's text holds any of not.
func unwanted(t *testing.T, err error, not []string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range not {
		if strings.Contains(err.Error(), s) {
			t.Errorf("err = %v\nwant it not to hold %q", err, s)
		}
	}
}

func TestNoDuplicates(t *testing.T) {
	tests := []struct {
		name   string
		ext    oracle.Externals
		wantN  int
		want   []string
		wantIs []error
		not    []string
	}{
		{name: "empty"},
		{name: "one each", ext: oracle.Externals{{ID: "r1", Owner: "a"}, {ID: "r2", Owner: "b"}}},
		{name: "unmarked are not duplicates", ext: oracle.Externals{{ID: "r1"}, {ID: "r2"}, {ID: "r3", Owner: "a"}}},
		{
			name:   "two for one owner",
			ext:    oracle.Externals{{ID: "r2", Owner: "a"}, {ID: "r1", Owner: "a"}, {ID: "r3", Owner: "b"}},
			wantN:  1,
			wantIs: []error{oracle.ErrDuplicates},
			want:   []string{`owner "a": 2 resources ["r1" "r2"]`},
			not:    []string{`owner "b"`},
		},
		{
			name:   "several owners",
			ext:    oracle.Externals{{ID: "r1", Owner: "a"}, {ID: "r2", Owner: "a"}, {ID: "r3", Owner: "a"}, {ID: "r4", Owner: "b"}, {ID: "r5", Owner: "b"}},
			wantN:  3,
			wantIs: []error{oracle.ErrDuplicates},
			want:   []string{`owner "a": 3 resources ["r1" "r2" "r3"]`, `owner "b": 2 resources ["r4" "r5"]`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.ext.NoDuplicates()
			checkErr(t, err, tt.wantIs, tt.want)
			unwanted(t, err, tt.not)
			if got := tt.ext.Duplicates(); got != tt.wantN {
				t.Errorf("Duplicates = %d, want %d", got, tt.wantN)
			}
		})
	}
}

func TestOnePer(t *testing.T) {
	tests := []struct {
		name   string
		ext    oracle.Externals
		owners []string
		want   []string
		wantIs []error
		not    []error
	}{
		{name: "nothing expected, nothing there"},
		{name: "one each", ext: oracle.Externals{{ID: "r1", Owner: "a"}, {ID: "r2", Owner: "b"}}, owners: []string{"a", "b"}},
		{name: "owner listed twice", ext: oracle.Externals{{ID: "r1", Owner: "a"}}, owners: []string{"a", "a"}},
		{
			name:   "missing",
			ext:    oracle.Externals{{ID: "r1", Owner: "a"}},
			owners: []string{"a", "b", "c"},
			wantIs: []error{oracle.ErrMissing},
			want:   []string{`"b"`, `"c"`},
			not:    []error{oracle.ErrDuplicates, oracle.ErrExtra},
		},
		{
			name:   "duplicate",
			ext:    oracle.Externals{{ID: "r1", Owner: "a"}, {ID: "r2", Owner: "a"}},
			owners: []string{"a"},
			wantIs: []error{oracle.ErrDuplicates},
			want:   []string{`owner "a": 2 resources ["r1" "r2"]`},
			not:    []error{oracle.ErrMissing, oracle.ErrExtra},
		},
		{
			name:   "extra owner and unmarked",
			ext:    oracle.Externals{{ID: "r1", Owner: "a"}, {ID: "r2", Owner: "z"}, {ID: "r3"}},
			owners: []string{"a"},
			wantIs: []error{oracle.ErrExtra},
			want:   []string{`resource "r2": owner "z"`, `resource "r3": unmarked`},
			not:    []error{oracle.ErrMissing, oracle.ErrDuplicates},
		},
		{
			name:   "all at once",
			ext:    oracle.Externals{{ID: "r1", Owner: "a"}, {ID: "r2", Owner: "a"}, {ID: "r3", Owner: "z"}},
			owners: []string{"a", "b"},
			wantIs: []error{oracle.ErrMissing, oracle.ErrDuplicates, oracle.ErrExtra},
			want:   []string{`"b"`, `owner "a": 2 resources`, `resource "r3": owner "z"`},
		},
		{
			name:   "empty owner refused",
			owners: []string{"a", ""},
			want:   []string{"owner 1 is empty"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.ext.OnePer(tt.owners)
			checkErr(t, err, tt.wantIs, tt.want)
			for _, target := range tt.not {
				if errors.Is(err, target) {
					t.Errorf("err = %v, want it not to wrap %v", err, target)
				}
			}
		})
	}
}

func TestNoneForAndNoUnmarked(t *testing.T) {
	ext := oracle.Externals{
		{ID: "r1", Owner: "live"},
		{ID: "r2", Owner: "deleted"},
		{ID: "r3", Owner: "deleted"},
		{ID: "r4"},
	}
	tests := []struct {
		name   string
		check  func() error
		want   []string
		wantIs []error
		not    []string
	}{
		{
			name:   "none for deleted owner",
			check:  func() error { return ext.NoneFor([]string{"deleted"}) },
			wantIs: []error{oracle.ErrLeaked},
			want:   []string{`resource "r2": owner "deleted"`, `resource "r3": owner "deleted"`},
			not:    []string{"r1", "r4"},
		},
		{name: "none for owners with nothing", check: func() error { return ext.NoneFor([]string{"other"}) }},
		{name: "none for no owners", check: func() error { return ext.NoneFor(nil) }},
		{name: "empty owner refused", check: func() error { return ext.NoneFor([]string{""}) }, want: []string{"owner 0 is empty"}},
		{
			name:   "unmarked",
			check:  func() error { return ext.NoUnmarked() },
			wantIs: []error{oracle.ErrLeaked},
			want:   []string{`resource "r4": unmarked`},
			not:    []string{"r1", "r2", "r3"},
		},
		{name: "all marked", check: func() error { return ext[:3].NoUnmarked() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.check()
			checkErr(t, err, tt.wantIs, tt.want)
			unwanted(t, err, tt.not)
		})
	}
}

func TestOnePerMessage(t *testing.T) {
	err := oracle.Externals{{ID: "r1", Owner: "a"}, {ID: "r2", Owner: "a"}, {ID: "r3"}}.OnePer([]string{"a", "b"})
	want := `oracle: not one external resource per owner: owners without an external resource:
	"b"
owners with more than one external resource:
	owner "a": 2 resources ["r1" "r2"]
external resources of no expected owner:
	resource "r3": unmarked`
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}
