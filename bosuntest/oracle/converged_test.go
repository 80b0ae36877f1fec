package oracle_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/internal/testapi"
)

// widgetList returns an empty unstructured list of Widgets.
func widgetList() *unstructured.UnstructuredList {
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(testapi.GroupVersion.WithKind("WidgetList"))
	return l
}

func TestCheckReady(t *testing.T) {
	ready := func(status metav1.ConditionStatus, gen int64) metav1.Condition {
		return metav1.Condition{Type: "Ready", Status: status, Reason: "R", ObservedGeneration: gen}
	}
	now := metav1.Now()
	tests := []struct {
		name      string
		gen       int64
		statusGen int64
		conds     []metav1.Condition
		deleting  bool
		want      string // "" for converged
	}{
		{name: "ready, condition generation", gen: 3, conds: []metav1.Condition{ready("True", 3)}},
		{name: "ready, status generation", gen: 3, statusGen: 3, conds: []metav1.Condition{ready("True", 0)}},
		{name: "ready, both", gen: 3, statusGen: 3, conds: []metav1.Condition{{Type: "Synced", Status: "False", Reason: "R"}, ready("True", 3)}},
		{name: "no conditions", gen: 1, want: "no Ready condition"},
		{name: "other conditions only", gen: 1, conds: []metav1.Condition{{Type: "Synced", Status: "True", Reason: "R", ObservedGeneration: 1}}, want: "no Ready condition"},
		{name: "false", gen: 1, conds: []metav1.Condition{ready("False", 1)}, want: "not ready"},
		{name: "unknown", gen: 1, conds: []metav1.Condition{ready("Unknown", 1)}, want: "not ready"},
		{name: "stale condition", gen: 2, conds: []metav1.Condition{ready("True", 1)}, want: "the Ready condition is for generation 1, the object is at 2"},
		{name: "stale status", gen: 2, statusGen: 1, conds: []metav1.Condition{ready("True", 2)}, want: "status.observedGeneration is 1, the object is at 2"},
		{name: "no generation anywhere", gen: 2, conds: []metav1.Condition{ready("True", 0)}, want: "no observedGeneration"},
		{name: "being deleted", gen: 1, conds: []metav1.Condition{ready("True", 1)}, deleting: true, want: "being deleted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Generation: tt.gen}}
			w.Status.Conditions = tt.conds
			w.Status.ObservedGeneration = tt.statusGen
			if tt.deleting {
				w.DeletionTimestamp = &now
			}
			m, err := runtimeToUnstructured(w)
			if err != nil {
				t.Fatal(err)
			}
			for name, obj := range map[string]client.Object{"typed": w, "unstructured": m} {
				err := oracle.CheckReady(obj)
				switch {
				case tt.want == "" && err != nil:
					t.Errorf("%s: CheckReady = %v, want nil", name, err)
				case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
					t.Errorf("%s: CheckReady = %v, want %q", name, err, tt.want)
				}
			}
		})
	}
}

func TestConvergedWhenReadySet(t *testing.T) {
	cp := shared.ControlPlane(t)
	c := cp.Client
	ns := bosuntest.Namespace(t, c)
	w := createWidget(t, c, ns, "w1")

	for name, list := range map[string]client.ObjectList{"typed": &testapi.WidgetList{}, "unstructured": widgetList()} {
		t.Run(name, func(t *testing.T) {
			type result struct {
				res oracle.Convergence
				err error
			}
			done := make(chan result, 1)
			setReady(t, c, w, "False", "Working", "", w.Generation, 0)
			go func() {
				res, err := oracle.Converged(t.Context(), c, list, 30*time.Second, oracle.ListOptions(client.InNamespace(ns)), oracle.Interval(20*time.Millisecond))
				done <- result{res, err}
			}()
			setReady(t, c, w, "True", "Succeeded", "", w.Generation, w.Generation)
			r := <-done
			if r.err != nil {
				t.Fatalf("Converged: %v", r.err)
			}
			if r.res.Objects != 1 || r.res.Converged != 1 || r.res.Duration <= 0 || r.res.Duration > 30*time.Second {
				t.Errorf("Convergence = %+v, want 1 of 1 object converged within the bound", r.res)
			}
		})
	}
}

func TestConvergedNamesWhatIsNotConverged(t *testing.T) {
	cp := shared.ControlPlane(t)
	c := cp.Client
	ns := bosuntest.Namespace(t, c)

	ready := createWidget(t, c, ns, "ready")
	setReady(t, c, ready, "True", "Succeeded", "", ready.Generation, 0)
	broken := createWidget(t, c, ns, "broken")
	setReady(t, c, broken, "False", "DiskFull", "disk full", broken.Generation, 0)
	createWidget(t, c, ns, "silent")
	stale := createWidget(t, c, ns, "stale")
	setReady(t, c, stale, "True", "Succeeded", "", stale.Generation, 0)
	bumpGeneration(t, c, stale)
	deleting := createWidget(t, c, ns, "deleting", "oracle.test.bosun.dev/hold")
	setReady(t, c, deleting, "True", "Succeeded", "", deleting.Generation, 0)
	deleteObject(t, c, deleting)
	t.Cleanup(func() { removeFinalizers(t, c, deleting) })

	res, err := oracle.Converged(t.Context(), c, &testapi.WidgetList{}, failBound, oracle.ListOptions(client.InNamespace(ns)))
	checkErr(t, err, []error{oracle.ErrNotConverged}, []string{
		"1 of 5 converged after",
		`Widget ` + ns + `/broken: Ready False/DiskFull "disk full" (generation 1): not ready`,
		`Widget ` + ns + `/silent: no Ready condition`,
		`Widget ` + ns + `/stale: Ready True/Succeeded (generation 1): the Ready condition is for generation 1, the object is at 2`,
		`Widget ` + ns + `/deleting: Ready True/Succeeded (generation 1): being deleted`,
	})
	unwanted(t, err, []string{"/ready", "no Ready condition: no Ready condition"})
	if res.Objects != 5 || res.Converged != 1 || res.Duration < failBound {
		t.Errorf("Convergence = %+v, want 1 of 5 converged after the bound", res)
	}
}

// A List refused before the end of the wait says nothing of the objects:
// Converged names the failure beside what the last List that got through
// found.
func TestConvergedKeepsTheLastListThatGotThrough(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	createWidget(t, cp.Client, ns, "silent")
	c, reads := refusingAfterFirstRead(t, cp.Config, cp.Client.Scheme())
	// The bound leaves the first List, which a new client makes after a
	// discovery of the API server, time to get through on a busy machine.
	_, err := oracle.Converged(t.Context(), c, &testapi.WidgetList{}, failBound,
		oracle.ListOptions(client.InNamespace(ns)), oracle.Interval(10*time.Millisecond))
	checkErr(t, err, []error{oracle.ErrNotConverged}, []string{
		`Widget ` + ns + `/silent: no Ready condition`,
		"rate limiter",
	})
	if reads.Load() < 2 {
		t.Errorf("Converged read %d times in %s at a 10ms interval, want more than once", reads.Load(), failBound)
	}
}

func TestConvergedWithCheckAndCount(t *testing.T) {
	cp := shared.ControlPlane(t)
	c := cp.Client
	ns := bosuntest.Namespace(t, c)
	inNS := oracle.ListOptions(client.InNamespace(ns))

	_, err := oracle.Converged(t.Context(), c, widgetList(), failBound, inNS)
	checkErr(t, err, []error{oracle.ErrNotConverged}, []string{"no objects listed"})
	res, err := oracle.Converged(t.Context(), c, widgetList(), 30*time.Second, inNS, oracle.Count(0))
	if err != nil || res.Objects != 0 {
		t.Errorf("Converged(Count(0)) over an empty namespace = %+v, %v; want no objects and no error", res, err)
	}

	w := createWidget(t, c, ns, "w1")
	setReady(t, c, w, "True", "Succeeded", "", w.Generation, 0)
	_, err = oracle.Converged(t.Context(), c, widgetList(), failBound, inNS, oracle.Count(2))
	checkErr(t, err, []error{oracle.ErrNotConverged}, []string{"1 object listed, want 2"})

	resultIs42 := func(obj client.Object) error {
		u := obj.(*unstructured.Unstructured)
		if r, _, _ := unstructured.NestedInt64(u.Object, "status", "result"); r != 42 {
			return errors.New("result is not 42")
		}
		return nil
	}
	_, err = oracle.Converged(t.Context(), c, widgetList(), failBound, inNS, oracle.WithCheck(resultIs42))
	checkErr(t, err, []error{oracle.ErrNotConverged}, []string{`/w1: Ready True/Succeeded (generation 1): result is not 42`})

	if err := c.Get(t.Context(), client.ObjectKeyFromObject(w), w); err != nil {
		t.Fatal(err)
	}
	w.Status.Result = 42
	if err := c.Status().Update(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	if _, err := oracle.Converged(t.Context(), c, widgetList(), 30*time.Second, inNS, oracle.WithCheck(resultIs42), oracle.Count(1)); err != nil {
		t.Errorf("Converged with a passing check: %v", err)
	}
}

func TestConvergedStopsWithTheContext(t *testing.T) {
	cp := shared.ControlPlane(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := oracle.Converged(ctx, cp.Client, &testapi.WidgetList{}, time.Minute)
	if !errors.Is(err, context.Canceled) || errors.Is(err, oracle.ErrNotConverged) {
		t.Errorf("err = %v, want context.Canceled and not ErrNotConverged", err)
	}
}
