package bosun_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestResyncRequeue: the result of a successful pass comes back after the
// resync period plus jitter, the object's annotation overrides the
// reconciler's period, a sooner requeue of a step wins, and an unreadable
// annotation is reported in Ready.
func TestResyncRequeue(t *testing.T) {
	for _, tc := range []struct {
		name       string
		resync     time.Duration
		annotation string // the value of AnnotationResyncInterval; "-" for none
		stepAfter  time.Duration
		min, max   time.Duration // bounds of RequeueAfter
		wantReady  string        // prefix
	}{
		{name: "off", annotation: "-", wantReady: "True/"},
		{name: "reconciler", resync: time.Minute, annotation: "-", min: time.Minute, max: 66 * time.Second, wantReady: "True/"},
		{name: "annotation overrides", resync: time.Minute, annotation: "10m", min: 10 * time.Minute, max: 11 * time.Minute, wantReady: "True/"},
		{name: "annotation alone", annotation: "1h", min: time.Hour, max: 66 * time.Minute, wantReady: "True/"},
		{name: "annotation zero turns it off", resync: time.Minute, annotation: "0", wantReady: "True/"},
		{name: "step sooner", resync: time.Minute, annotation: "-", stepAfter: time.Second, min: time.Second, max: time.Second, wantReady: "True/"},
		{name: "step later", resync: time.Minute, annotation: "-", stepAfter: time.Hour, min: time.Minute, max: 66 * time.Second, wantReady: "True/"},
		{name: "unreadable", resync: time.Minute, annotation: "often", wantReady: "False/" + string(conditions.ReasonInvalidResyncInterval) + `: annotation bosun.dev/resync-interval: "often" is not a duration`},
		{name: "negative", annotation: "-5m", wantReady: "False/" + string(conditions.ReasonInvalidResyncInterval)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ann map[string]string
			if tc.annotation != "-" {
				ann = map[string]string{bosun.AnnotationResyncInterval: tc.annotation}
			}
			c := fakeClient(t, nil, fakeWidget("w", nil, false, ann))
			step := &traced{name: "a", tr: &trace{}, do: func() (ctrl.Result, error) { return ctrl.Result{RequeueAfter: tc.stepAfter}, nil }}
			r := &bosun.Reconciler[*testapi.Widget]{Name: "resync", Client: c, Finalizer: testFinalizer, Resync: tc.resync, Steps: []bosun.Step[*testapi.Widget]{step}}
			res, w, err := reconcileWidget(t, r, c, "w")
			if got := readyOf(w); !strings.HasPrefix(got, tc.wantReady) {
				t.Errorf("Ready = %q, want prefix %q", got, tc.wantReady)
			}
			if strings.HasPrefix(tc.wantReady, "False/") {
				if err == nil || !errors.Is(err, reconcileTerminal) {
					t.Errorf("error = %v, want a terminal one", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.RequeueAfter < tc.min || res.RequeueAfter > tc.max {
				t.Errorf("RequeueAfter = %s, want between %s and %s", res.RequeueAfter, tc.min, tc.max)
			}
		})
	}
}

func TestResyncValidation(t *testing.T) {
	for _, tc := range []struct {
		resync time.Duration
		jitter float64
		want   string
	}{
		{resync: -time.Second, want: "Resync -1s is negative"},
		{resync: time.Second, jitter: 1.5, want: "ResyncJitter 1.5 is not between 0 and 1"},
		{resync: time.Second, jitter: -0.1, want: "ResyncJitter -0.1 is not between 0 and 1"},
	} {
		r := &bosun.Reconciler[*testapi.Widget]{Name: "resync", Client: fakeClient(t, nil), Finalizer: testFinalizer, Resync: tc.resync, Options: bosun.Options{ResyncJitter: tc.jitter},
			Steps: []bosun.Step[*testapi.Widget]{&traced{name: "a", tr: &trace{}}}}
		err := r.Validate()
		if err == nil || !errors.Is(err, bosun.ErrInvalidConfig) || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("Validate() = %v, want an ErrInvalidConfig ending %q", err, tc.want)
		}
	}
}

// TestResyncReconcilesAgainWithoutWrites: on a real API server, a
// reconciler with a resync period runs its steps again with nothing
// changed, and those passes write nothing.
func TestResyncReconcilesAgainWithoutWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	j := newJournal()
	writes := &bosuntest.WriteCounter{}
	r := newReconciler("resync", j, false)
	r.Resync = time.Second
	f.run(r, runOptions{client: writes.Wrap})
	f.create("w", 6, 3, nil)
	f.waitReady("w", metav1.ConditionTrue, conditions.ReasonSucceeded)
	// The status write brings one more pass; wait for it, then for resyncs.
	bosuntest.Eventually(t, func(context.Context) error {
		if n := j.count(j.do, "w"); n < 2 {
			return fmt.Errorf("%d Do calls, want 2", n)
		}
		return nil
	})
	writes.Reset()
	before := j.count(j.do, "w")
	bosuntest.Eventually(t, func(context.Context) error {
		if n := j.count(j.do, "w"); n < before+2 {
			return fmt.Errorf("%d resyncs so far, want 2", n-before)
		}
		return nil
	})
	if diff := cmp.Diff(map[string]int{}, widgetWrites(writes)); diff != "" {
		t.Errorf("writes of resyncs (-want +got):\n%s", diff)
	}
}
