package ref_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/ref"
)

const ns = "team-a"

func scheme(t bosuntest.TB) *runtime.Scheme {
	return unit.Scheme(t, clientgoscheme.AddToScheme, testapi.AddToScheme)
}

// cond is the expectation of one condition.
func cond(typ string, st metav1.ConditionStatus, reason conditions.Reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: st, Reason: string(reason), Message: msg}
}

// owner returns the expectations of the owner step's condition and of
// Ready, which summarises it.
func owner(st metav1.ConditionStatus, reason conditions.Reason, msg string) []metav1.Condition {
	readyReason := reason
	if st == metav1.ConditionTrue {
		readyReason = conditions.ReasonSucceeded
	}
	return []metav1.Condition{cond("OwnerResolved", st, reason, msg), cond(conditions.TypeReady, st, readyReason, "")}
}

var writeStatus = []string{"patch status Widget team-a/w"}

func TestResolveWidget(t *testing.T) {
	labelled := map[string]string{"app": "db"}
	for _, tc := range []struct {
		opts []ref.Option
		c    unit.Case[*testapi.Widget]
	}{{
		c: unit.Case[*testapi.Widget]{
			Name:             "no reference",
			Object:           widget(ns, "w"),
			ExpectConditions: owner(metav1.ConditionFalse, "NoReference", "no Widget is referred to"),
			ExpectWrites:     writeStatus,
		},
	}, {
		opts: []ref.Option{ref.Optional()},
		c: unit.Case[*testapi.Widget]{
			Name:             "no reference, optional",
			Object:           widget(ns, "w"),
			ExpectConditions: owner(metav1.ConditionTrue, "NoReference", "no object is referred to"),
			ExpectObjects:    []client.Object{&testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Status: testapi.WidgetStatus{Result: -1}}},
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:             "name not found",
			Object:           widget(ns, "w", annName, "r"),
			ExpectConditions: owner(metav1.ConditionFalse, "ReferenceNotFound", `Widget "team-a/r" does not exist`),
			ExpectWrites:     writeStatus,
			ExpectNoEvents:   true,
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:   "no Ready condition yet",
			Object: widget(ns, "w", annName, "r"),
			Given:  []client.Object{target(ns, "r", 7, nil, 1, 0, "")},
			ExpectConditions: owner(metav1.ConditionFalse, "ReferenceNotReady",
				`Widget "team-a/r" is not ready: it has no Ready condition yet`),
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:   "Ready False",
			Object: widget(ns, "w", annName, "r"),
			Given:  []client.Object{target(ns, "r", 7, nil, 1, 1, metav1.ConditionFalse)},
			ExpectConditions: owner(metav1.ConditionFalse, "ReferenceNotReady",
				`Widget "team-a/r" is not ready: its Ready condition is False (Broken): as the test says`),
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:   "Ready of an older generation",
			Object: widget(ns, "w", annName, "r"),
			Given:  []client.Object{target(ns, "r", 7, nil, 2, 1, metav1.ConditionTrue)},
			ExpectConditions: owner(metav1.ConditionFalse, "ReferenceNotReady",
				`Widget "team-a/r" is not ready: its Ready condition describes generation 1, not the current 2`),
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:             "ready: resolved, and the next step sees it",
			Object:           widget(ns, "w", annName, "r"),
			Given:            []client.Object{ready(ns, "r", 7, nil)},
			ExpectConditions: owner(metav1.ConditionTrue, "Resolved", `resolved to Widget "team-a/r"`),
			ExpectObjects:    []client.Object{&testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Status: testapi.WidgetStatus{Result: 7}}},
			ExpectWrites:     writeStatus,
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:   "being deleted",
			Object: widget(ns, "w", annName, "r"),
			Given: []client.Object{func() client.Object {
				r := ready(ns, "r", 7, nil)
				r.Finalizers = []string{"test.bosun.dev/keep"}
				r.DeletionTimestamp = &metav1.Time{Time: time.Now()}
				return r
			}()},
			ExpectConditions: owner(metav1.ConditionFalse, "ReferenceNotReady", `Widget "team-a/r" is being deleted`),
		},
	}, {
		opts: []ref.Option{ref.ReadyWhen(func(*testapi.Widget) (bool, string) { return true, "" })},
		c: unit.Case[*testapi.Widget]{
			Name:             "a readiness that takes any object that exists takes a Widget with no Ready condition",
			Object:           widget(ns, "w", annName, "r"),
			Given:            []client.Object{target(ns, "r", 7, nil, 1, 0, "")},
			ExpectConditions: owner(metav1.ConditionTrue, "Resolved", ""),
		},
	}, {
		opts: []ref.Option{ref.ReadyWhen(func(r *testapi.Widget) (bool, string) { return r.Spec.Value > 10, "its value is 10 or less" })},
		c: unit.Case[*testapi.Widget]{
			Name:   "a readiness of the user's",
			Object: widget(ns, "w", annName, "r"),
			Given:  []client.Object{ready(ns, "r", 7, nil)},
			ExpectConditions: owner(metav1.ConditionFalse, "ReferenceNotReady",
				`Widget "team-a/r" is not ready: its value is 10 or less`),
		},
	}, {
		opts: []ref.Option{ref.WithRecheck(time.Minute)},
		c: unit.Case[*testapi.Widget]{
			Name:             "recheck: the pass looks again later",
			Object:           widget(ns, "w", annName, "r"),
			ExpectConditions: owner(metav1.ConditionFalse, "ReferenceNotFound", ""),
			ExpectResult:     ctrl.Result{RequeueAfter: time.Minute},
		},
	}, {
		opts: []ref.Option{ref.WithCondition("OwnerReady")},
		c: unit.Case[*testapi.Widget]{
			Name:   "a condition type of the user's",
			Object: widget(ns, "w", annName, "r"),
			ExpectConditions: []metav1.Condition{
				cond("OwnerReady", metav1.ConditionFalse, "ReferenceNotFound", ""),
				cond(conditions.TypeReady, metav1.ConditionFalse, "ReferenceNotFound", ""),
			},
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:             "selector matches none",
			Object:           widget(ns, "w", annSelector, "app=db"),
			Given:            []client.Object{ready(ns, "other", 1, map[string]string{"app": "web"})},
			ExpectConditions: owner(metav1.ConditionFalse, "ReferenceNotFound", `no Widget in namespace "team-a" matches app=db`),
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:   "selector matches one",
			Object: widget(ns, "w", annSelector, "app=db"),
			Given: []client.Object{
				ready(ns, "db", 3, labelled),
				ready(ns, "other", 1, map[string]string{"app": "web"}),
				ready("team-b", "db-elsewhere", 4, labelled),
			},
			ExpectConditions: owner(metav1.ConditionTrue, "Resolved", `resolved to Widget "team-a/db"`),
			ExpectObjects:    []client.Object{&testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Status: testapi.WidgetStatus{Result: 3}}},
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:   "selector matches two",
			Object: widget(ns, "w", annSelector, "app=db"),
			Given:  []client.Object{ready(ns, "db-2", 3, labelled), ready(ns, "db-1", 3, labelled)},
			ExpectConditions: owner(metav1.ConditionFalse, "ReferenceAmbiguous",
				`2 Widget objects in namespace "team-a" match app=db (db-1, db-2); the reference must match exactly one`),
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:   "selector matches many",
			Object: widget(ns, "w", annSelector, "app=db"),
			Given: []client.Object{
				ready(ns, "a", 1, labelled), ready(ns, "b", 1, labelled), ready(ns, "c", 1, labelled),
				ready(ns, "d", 1, labelled), ready(ns, "e", 1, labelled), ready(ns, "f", 1, labelled),
				ready(ns, "g", 1, labelled),
			},
			ExpectConditions: owner(metav1.ConditionFalse, "ReferenceAmbiguous",
				`7 Widget objects in namespace "team-a" match app=db (a, b, c, d, e and 2 more); the reference must match exactly one`),
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:   "selector that does not parse",
			Object: widget(ns, "w", annBadSelector, "app"),
			ExpectConditions: owner(metav1.ConditionFalse, "ReferenceInvalid",
				`the selector of the reference to a Widget does not parse: "Near" is not a valid label selector operator`),
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:   "name and selector",
			Object: widget(ns, "w", annName, "r", annSelector, "app=db"),
			ExpectConditions: owner(metav1.ConditionFalse, "ReferenceInvalid",
				`the reference to a Widget has both a name ("r") and a selector (app=db); give one`),
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:   "another namespace, not allowed",
			Object: widget(ns, "w", annName, "r", annNamespace, "team-b"),
			Given:  []client.Object{ready("team-b", "r", 5, nil)},
			ExpectConditions: owner(metav1.ConditionFalse, "ReferenceNotAllowed",
				`the reference team-b/r leads out of namespace "team-a", which is not allowed`),
		},
	}, {
		opts: []ref.Option{ref.AllowCrossNamespace()},
		c: unit.Case[*testapi.Widget]{
			Name:             "another namespace, allowed",
			Object:           widget(ns, "w", annName, "r", annNamespace, "team-b"),
			Given:            []client.Object{ready("team-b", "r", 5, nil), ready(ns, "r", 1, nil)},
			ExpectConditions: owner(metav1.ConditionTrue, "Resolved", `resolved to Widget "team-b/r"`),
			ExpectObjects:    []client.Object{&testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Status: testapi.WidgetStatus{Result: 5}}},
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:             "own namespace named",
			Object:           widget(ns, "w", annName, "r", annNamespace, ns),
			Given:            []client.Object{ready(ns, "r", 1, nil)},
			ExpectConditions: owner(metav1.ConditionTrue, "Resolved", ""),
		},
	}, {
		c: unit.Case[*testapi.Widget]{
			Name:   "a failed read fails the pass",
			Object: widget(ns, "w", annName, "r"),
			Interceptor: interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if key.Name == "r" {
					return apierrors.NewForbidden(schema.GroupResource{Group: "test.bosun.dev", Resource: "widgets"}, "r", errors.New("no"))
				}
				return c.Get(ctx, key, obj, opts...)
			}},
			ExpectErr: "forbidden",
			ExpectConditions: []metav1.Condition{
				cond("OwnerResolved", metav1.ConditionFalse, "ReferenceReadFailed", ""),
				cond(conditions.TypeReady, metav1.ConditionFalse, "ReferenceReadFailed", ""),
			},
		},
	}} {
		t.Run(tc.c.Name, func(t *testing.T) {
			step := ref.Resolve[*testapi.Widget, *testapi.Widget]("owner", refOf, tc.opts...)
			r := unit.Steps(step, useOwner(step, strings.Contains(tc.c.Name, "optional")))
			unit.Check(t, tc.c, unit.Reconcile(t, scheme(t), r, tc.c))
		})
	}
}

// A second pass over a converged object writes nothing.
func TestResolveConvergedWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		obj   *testapi.Widget
		given []client.Object
	}{
		{name: "resolved", obj: widget(ns, "w", annName, "r"), given: []client.Object{ready(ns, "r", 7, nil)}},
		{name: "not found", obj: widget(ns, "w", annName, "r")},
		{name: "ambiguous", obj: widget(ns, "w", annSelector, "app=db"), given: []client.Object{
			ready(ns, "a", 1, map[string]string{"app": "db"}), ready(ns, "b", 1, map[string]string{"app": "db"}),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newReconciler := func() *bosun.Reconciler[*testapi.Widget] {
				step := ref.Resolve[*testapi.Widget, *testapi.Widget]("owner", refOf)
				return unit.Steps(step, useOwner(step, false))
			}
			first := unit.Reconcile(t, scheme(t), newReconciler(), unit.Case[*testapi.Widget]{Object: tc.obj, Given: tc.given})
			if len(first.Writes) != 1 {
				t.Fatalf("first pass wrote %v, want one status patch", first.Writes)
			}
			c := unit.Case[*testapi.Widget]{Name: tc.name, Object: first.Object, Given: tc.given, ExpectNoWrites: true, ExpectNoEvents: true}
			unit.Check(t, c, unit.Reconcile(t, scheme(t), newReconciler(), c))
		})
	}
}

func TestResolveClusterScoped(t *testing.T) {
	newReconciler := func() *bosun.Reconciler[*testapi.Widget] {
		return unit.Steps[*testapi.Widget](ref.Resolve[*testapi.Widget, *rbacv1.ClusterRole]("role", refOf))
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "reader"}}
	unit.Run(t, scheme(t), newReconciler,
		unit.Case[*testapi.Widget]{
			Name:   "found, whatever namespace the reference names",
			Object: widget(ns, "w", annName, "reader", annNamespace, "team-b"),
			Given:  []client.Object{role},
			ExpectConditions: []metav1.Condition{
				cond("RoleResolved", metav1.ConditionTrue, "Resolved", `resolved to ClusterRole "reader"`),
			},
		},
		unit.Case[*testapi.Widget]{
			Name:   "not found",
			Object: widget(ns, "w", annName, "writer"),
			Given:  []client.Object{role},
			ExpectConditions: []metav1.Condition{
				cond("RoleResolved", metav1.ConditionFalse, "ReferenceNotFound", `ClusterRole "writer" does not exist`),
			},
		},
		unit.Case[*testapi.Widget]{
			Name:   "by selector",
			Object: widget(ns, "w", annSelector, "tier=gold"),
			Given: []client.Object{role, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gold", Labels: map[string]string{"tier": "gold"}}},
				&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "gold-2", Labels: map[string]string{"tier": "gold"}}}},
			ExpectConditions: []metav1.Condition{
				cond("RoleResolved", metav1.ConditionFalse, "ReferenceAmbiguous",
					`2 ClusterRole objects match tier=gold (gold, gold-2); the reference must match exactly one`),
			},
		},
	)
}

// A ConfigMap keeps no conditions: it is ready once it exists, unless a
// readiness of the user's says more.
func TestResolveConfigMap(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"state": "draft"}}
	for _, tc := range []struct {
		name string
		opts []ref.Option
		want metav1.Condition
	}{
		{name: "exists", want: cond("SettingsResolved", metav1.ConditionTrue, "Resolved", `resolved to ConfigMap "team-a/settings"`)},
		{
			name: "ReadyWhen",
			opts: []ref.Option{ref.ReadyWhen(func(c *corev1.ConfigMap) (bool, string) {
				return c.Data["state"] == "final", "its state is " + c.Data["state"]
			})},
			want: cond("SettingsResolved", metav1.ConditionFalse, "ReferenceNotReady", `ConfigMap "team-a/settings" is not ready: its state is draft`),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := unit.Steps[*testapi.Widget](ref.Resolve[*testapi.Widget, *corev1.ConfigMap]("settings", refOf, tc.opts...))
			c := unit.Case[*testapi.Widget]{Object: widget(ns, "w", annName, "settings"), Given: []client.Object{cm}, ExpectConditions: []metav1.Condition{tc.want}}
			unit.Check(t, c, unit.Reconcile(t, scheme(t), r, c))
		})
	}
}

// Lookup, for a Cleanup, finds the object whatever its readiness, and
// says why it does not with a sentinel.
func TestLookup(t *testing.T) {
	step := ref.Resolve[*testapi.Widget, *testapi.Widget]("owner", refOf)
	for _, tc := range []struct {
		name    string
		obj     *testapi.Widget
		wantErr error
		want    string
	}{
		{name: "not ready is found", obj: widget(ns, "w", annName, "r"), want: "r"},
		{name: "missing", obj: widget(ns, "w", annName, "gone"), wantErr: ref.ErrNotFound},
		{name: "none", obj: widget(ns, "w"), wantErr: ref.ErrNoReference},
		{name: "ambiguous", obj: widget(ns, "w", annSelector, "app=db"), wantErr: ref.ErrAmbiguous},
		{name: "invalid", obj: widget(ns, "w", annBadSelector, "app"), wantErr: ref.ErrInvalid},
		{name: "not allowed", obj: widget(ns, "w", annName, "r", annNamespace, "team-b"), wantErr: ref.ErrNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *testapi.Widget
			var err error
			lookup := bosun.NewStep("lookup", func(ctx context.Context, p *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
				got, err = step.Lookup(ctx, p)
				return ctrl.Result{}, nil
			})
			given := []client.Object{
				target(ns, "r", 1, map[string]string{"app": "db"}, 2, 1, metav1.ConditionFalse),
				ready(ns, "r2", 1, map[string]string{"app": "db"}),
			}
			unit.Reconcile(t, scheme(t), unit.Steps[*testapi.Widget](lookup), unit.Case[*testapi.Widget]{Object: tc.obj, Given: given})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Lookup error = %v, want %v", err, tc.wantErr)
			}
			var re *ref.Error
			if tc.wantErr != nil && !errors.As(err, &re) {
				t.Errorf("Lookup error %v is not a *ref.Error", err)
			}
			if tc.want != "" && (got == nil || got.Name != tc.want) {
				t.Errorf("Lookup = %v, want %s", got, tc.want)
			}
		})
	}
}

// Mistakes in the configuration show when the controller is set up.
func TestResolveConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		step bosun.Step[*testapi.Widget]
		want string
	}{
		{name: "empty name", step: ref.Resolve[*testapi.Widget, *testapi.Widget]("", refOf), want: "the name is empty"},
		{name: "nil reference function", step: ref.Resolve[*testapi.Widget, *testapi.Widget]("owner", nil), want: "the reference function is nil"},
		{
			name: "bad condition type", step: ref.Resolve[*testapi.Widget, *testapi.Widget]("owner", refOf, ref.WithCondition("not a type")),
			want: `condition type "not a type"`,
		},
		{
			name: "readiness of another kind",
			step: ref.Resolve[*testapi.Widget, *testapi.Widget]("owner", refOf, ref.ReadyWhen(func(*corev1.Secret) (bool, string) { return true, "" })),
			want: "not one of *testapi.Widget",
		},
		{
			name: "nil readiness", step: ref.Resolve[*testapi.Widget, *testapi.Widget]("owner", refOf, ref.ReadyWhen[*testapi.Widget](nil)),
			want: "the readiness function is nil",
		},
		{
			name: "negative recheck", step: ref.Resolve[*testapi.Widget, *testapi.Widget]("owner", refOf, ref.WithRecheck(-time.Second)),
			want: "must not be negative",
		},
		{
			name: "referenced type not a pointer to a struct", step: ref.Resolve[*testapi.Widget, client.Object]("owner", nil),
			want: "Object is not a pointer to a struct",
		},
		{
			name: "kind not in the scheme", step: ref.Resolve[*testapi.Widget, *unknown]("owner", refOf),
			want: "no kind is registered",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := unit.Steps(tc.step).FieldIndexes(scheme(t))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("FieldIndexes error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// unknown is a kind no scheme knows.
type unknown struct{ corev1.ConfigMap }

func (u *unknown) DeepCopyObject() runtime.Object {
	return &unknown{ConfigMap: *u.DeepCopy()}
}

// TestResolveInParallel: steps that run at once in a ParallelJoin share
// the object's list of conditions; each Resolve sets its own through
// Pass.UpdateConditions, so none is lost to another's write of the list.
// Without the lock, a step's condition goes missing in some passes (and
// -race reports the writes).
func TestResolveInParallel(t *testing.T) {
	const n = 8
	var want []metav1.Condition
	for i := range n {
		want = append(want, cond(fmt.Sprintf("Part%dResolved", i), metav1.ConditionTrue, "NoReference", "no object is referred to"))
	}
	want = append(want, cond(conditions.TypeReady, metav1.ConditionTrue, conditions.ReasonSucceeded, ""))
	for i := range 20 {
		var steps []bosun.Step[*testapi.Widget]
		for j := range n {
			steps = append(steps, ref.Resolve[*testapi.Widget, *testapi.Widget](fmt.Sprintf("part%d", j), refOf, ref.Optional(), ref.WithCondition(fmt.Sprintf("Part%dResolved", j))))
		}
		c := unit.Case[*testapi.Widget]{Name: fmt.Sprintf("pass %d", i), Object: widget(ns, "w"), ExpectConditions: want, ExpectWrites: writeStatus}
		unit.Check(t, c, unit.Reconcile(t, scheme(t), unit.Steps(bosun.ParallelJoin(steps...)), c))
	}
}
