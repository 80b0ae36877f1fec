package operator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/operator"
)

// convergedWidgets creates Widgets names in ns with spec.value 3 (and the
// annotations annotations), runs opts until each is Ready with result 6,
// and stops it.
func convergedWidgets(t *testing.T, opts operator.Options, ns string, annotations map[string]string, names ...string) {
	t.Helper()
	cp := shared.ControlPlane(t)
	ctx := t.Context()
	var ws []*testapi.Widget
	for _, name := range names {
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations}, Spec: testapi.WidgetSpec{Value: 3}}
		if err := cp.Client.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w)
	}
	r := start(t, opts, planFlags())
	for _, w := range ws {
		bosuntest.Eventually(t, func(ctx context.Context) error { return ready(ctx, cp.Client, w, 6) })
	}
	if err := r.stop(time.Minute); err != nil {
		t.Fatal(err)
	}
}

// writeEditText writes text into a file of the test's and returns its
// path.
func writeEditText(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "edit.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// planEdit runs opts with --plan --plan-edit path and returns what it
// printed and the error.
func planEdit(t *testing.T, opts operator.Options, path string) (string, error) {
	t.Helper()
	flags := planFlags()
	flags.Plan = true
	flags.PlanEdit = path
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	out := &syncBuffer{}
	err := operator.Run(ctx, opts, flags, out)
	t.Logf("--plan --plan-edit: %v; printed:\n%s", err, out.String())
	return out.String(), err
}

// editLines returns the "edit:" lines of report.
func editLines(report string) []string {
	var out []string
	for _, line := range strings.Split(report, "\n") {
		if strings.HasPrefix(line, "  edit: ") {
			out = append(out, strings.TrimPrefix(line, "  edit: "))
		}
	}
	return out
}

// TestPlanEditOfAManifest: a user's manifest, as they keep it in Git and
// apply it, names the object and sets its spec; it does not carry the
// finalizer the engine added nor the annotations others keep. Applying
// it would change spec.value alone, so the plan must say so, and nothing
// about the finalizer. Seen failing when the edit was planned as a
// replace.
func TestPlanEditOfAManifest(t *testing.T) {
	cp, ns := planEditEnv(t)
	opts := stepsOperator("manifest", ns, double{}, valueChild())
	convergedWidgets(t, opts, ns, map[string]string{"team.example.com/owner": "payments"}, "a")

	file := writeEditText(t, `apiVersion: test.bosun.dev/v1
kind: Widget
metadata:
  name: a
  namespace: `+ns+`
spec:
  value: 5
`)
	before := snapshot(t.Context(), t, cp.Client, ns)
	report, err := planEdit(t, opts, file)
	if err != nil {
		t.Fatalf("the plan of a manifest failed: %v", err)
	}
	if diff := cmp.Diff([]string{"spec.value: 3 -> 5"}, editLines(report)); diff != "" {
		t.Errorf("the plan of a manifest that kubectl apply would take as a change of spec.value alone says the edit changes more (-want +got):\n%s\n%s", diff, report)
	}
	if diff := cmp.Diff(before, snapshot(t.Context(), t, cp.Client, ns)); diff != "" {
		t.Errorf("the plan changed the server (-before +after):\n%s", diff)
	}
}

// TestPlanEditPrintsNoSensitiveValue: the operator marks spec.value of
// its Widgets sensitive. The Widget was created with kubectl apply, which
// keeps a copy of it in the last-applied-configuration annotation; the
// user plans an edit from their manifest. Neither the old nor the new
// value may be printed, in the report or in the plan's error when the
// API server refuses the edit.
func TestPlanEditPrintsNoSensitiveValue(t *testing.T) {
	_, ns := planEditEnv(t)
	opts := stepsOperator("secretive", ns, double{})
	opts.Sensitive = map[schema.GroupKind][]string{{Group: testapi.GroupVersion.Group, Kind: "Widget"}: {"spec.value", "spec.mode"}}
	lastApplied := `{"apiVersion":"test.bosun.dev/v1","kind":"Widget","metadata":{"annotations":{},"name":"a","namespace":"` + ns + `"},"spec":{"value":271828,"mode":"fast"}}`
	convergedWidgets(t, opts, ns, map[string]string{"kubectl.kubernetes.io/last-applied-configuration": lastApplied}, "a")

	report, err := planEdit(t, opts, writeEditText(t, `apiVersion: test.bosun.dev/v1
kind: Widget
metadata:
  name: a
  namespace: `+ns+`
spec:
  value: 5
  mode: slow
`))
	if err != nil {
		t.Fatalf("the plan failed: %v", err)
	}
	for _, v := range []string{"271828", "fast"} {
		if strings.Contains(report, v) {
			t.Errorf("the plan of an edit prints the sensitive %s of the live object:\n%s", v, report)
		}
	}

	// An edit the API server refuses: its words name the value.
	_, err = planEdit(t, opts, writeEditText(t, `apiVersion: test.bosun.dev/v1
kind: Widget
metadata:
  name: a
  namespace: `+ns+`
spec:
  value: 5
  mode: tophat-Zq81
`))
	if err == nil {
		t.Fatal("the plan of a refused edit succeeded")
	}
	if strings.Contains(err.Error(), "tophat-Zq81") {
		t.Errorf("the plan's error prints the sensitive spec.mode: %v", err)
	}
}

// TestPlanEditOfAKindTwoControllersReconcile: two reconcilers share the
// Widgets (each with its steps and finalizer, as "Status shared with other
// controllers" allows). A plain --plan covers each object once per
// controller; the plan of an edit of a Widget must cover the passes of
// both controllers: both act on the edit.
func TestPlanEditOfAKindTwoControllersReconcile(t *testing.T) {
	cp, ns := planEditEnv(t)
	opts := stepsOperator("first", ns, double{})
	opts.Setup = func(mgr ctrl.Manager) error {
		first := &bosun.Reconciler[*testapi.Widget]{Name: "first", Finalizer: planFinalizer, Steps: []bosun.Step[*testapi.Widget]{double{}}}
		if err := bosun.ControllerManagedBy[*testapi.Widget](mgr).Named("first").Complete(first); err != nil {
			return err
		}
		second := &bosun.Reconciler[*testapi.Widget]{Name: "second", Finalizer: planFinalizer + "-second", Steps: []bosun.Step[*testapi.Widget]{valueChild()}}
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).Named("second").Complete(second)
	}
	convergedWidgets(t, opts, ns, nil, "a")

	plain := runPlan(t, opts)
	for _, c := range []string{"first", "second"} {
		if !strings.Contains(plain, "Widget "+ns+"/a (controller "+c+")") {
			t.Fatalf("the plain plan lacks controller %s:\n%s", c, plain)
		}
	}

	edited := &testapi.Widget{}
	if err := cp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "a"}, edited); err != nil {
		t.Fatal(err)
	}
	edited.APIVersion, edited.Kind = testapi.GroupVersion.String(), "Widget"
	edited.Spec.Value = 5
	report, err := planEdit(t, opts, writeEdit(t, edited))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"first", "second"} {
		if !strings.Contains(report, "Widget "+ns+"/a (controller "+c+")") {
			t.Errorf("the plan of an edit of Widget a lacks the pass of controller %s, which reconciles it too", c)
		}
	}
	if !strings.Contains(report, `data.value: "3" -> "5"`) {
		t.Errorf("the plan of an edit lacks the child that controller second would change:\n%s", report)
	}
}

// TestPlanEditOfTheSameObjectTwice: a file that holds one object twice
// (two drafts pasted together) plans one object, not two, or says the
// file is ambiguous; it does not print the object's section twice.
func TestPlanEditOfTheSameObjectTwice(t *testing.T) {
	cp, ns := planEditEnv(t)
	opts := stepsOperator("twice", ns, double{})
	convergedWidgets(t, opts, ns, nil, "a")

	edited := &testapi.Widget{}
	if err := cp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "a"}, edited); err != nil {
		t.Fatal(err)
	}
	edited.APIVersion, edited.Kind = testapi.GroupVersion.String(), "Widget"
	edited.Spec.Value = 5
	one, err := os.ReadFile(writeEdit(t, edited))
	if err != nil {
		t.Fatal(err)
	}
	edited.Spec.Value = 7
	two, err := os.ReadFile(writeEdit(t, edited))
	if err != nil {
		t.Fatal(err)
	}
	report, err := planEdit(t, opts, writeEditText(t, string(one)+"---\n"+string(two)))
	if err != nil {
		if strings.Contains(err.Error(), "Widget "+ns+"/a") {
			return // refused, naming the object: fine
		}
		t.Fatalf("the plan failed without naming the object twice in the file: %v", err)
	}
	if n := strings.Count(report, "Widget "+ns+"/a (controller twice)"); n != 1 || !strings.HasPrefix(report, "plan: 1 objects") {
		t.Errorf("the plan of a file holding Widget a twice prints its section %d times:\n%s", n, report)
	}
}

// TestPlanEditOfAList: `kubectl get widgets -o yaml` writes a List, which
// kubectl apply and replace take; the plan of an edit must take it too.
func TestPlanEditOfAList(t *testing.T) {
	_, ns := planEditEnv(t)
	opts := stepsOperator("listed", ns, double{})
	convergedWidgets(t, opts, ns, nil, "a", "b")

	report, err := planEdit(t, opts, writeEditText(t, `apiVersion: v1
kind: List
metadata:
  resourceVersion: ""
items:
- apiVersion: test.bosun.dev/v1
  kind: Widget
  metadata:
    name: a
    namespace: `+ns+`
  spec:
    value: 5
- apiVersion: test.bosun.dev/v1
  kind: Widget
  metadata:
    name: b
    namespace: `+ns+`
  spec:
    value: 7
`))
	if err != nil {
		t.Fatalf("the plan of a List, as kubectl get -o yaml writes it: %v", err)
	}
	for _, want := range []string{"status.result: 6 -> 10", "status.result: 6 -> 14"} {
		if !strings.Contains(report, want) {
			t.Errorf("the plan of a List lacks %q", want)
		}
	}
}

// TestPlanEditOfAnObjectOutsideTheCache: the operator's cache holds only
// the Widgets labelled for it (a label selector, as an operator scoped to
// a tenant's objects sets). An edit of a Widget it does not select gets no
// pass: the plan must fail saying so, not print "plan: 0 objects" and
// exit 0 as if the edit changed nothing.
func TestPlanEditOfAnObjectOutsideTheCache(t *testing.T) {
	cp, ns := planEditEnv(t)
	opts := stepsOperator("scoped", ns, double{})
	manager := opts.Manager
	opts.Manager = func(o *ctrl.Options) {
		manager(o)
		o.Cache.ByObject = map[client.Object]cache.ByObject{
			&testapi.Widget{}: {Label: labels.SelectorFromSet(labels.Set{"tenant": "mine"})},
		}
	}
	convergedWidgets(t, opts, ns, nil) // none: the CRD and namespace only
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "theirs", Labels: map[string]string{"tenant": "theirs"}}, Spec: testapi.WidgetSpec{Value: 3}}
	if err := cp.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	w.APIVersion, w.Kind = testapi.GroupVersion.String(), "Widget"
	w.Spec.Value = 5
	report, err := planEdit(t, opts, writeEdit(t, w))
	if err == nil {
		t.Errorf("the plan of an edit of a Widget the operator does not watch succeeded, reporting:\n%s", report)
	}
	if err != nil && !strings.Contains(err.Error(), "theirs") {
		t.Errorf("the plan's error does not name the edited Widget: %v", err)
	}
}

// TestPlanEditOfAnObjectInANamespaceNotWatched: an operator of the Widgets
// of one namespace, and an edit of a Widget of another: the plan fails
// naming the object and why (the operator does not watch its namespace).
func TestPlanEditOfAnObjectInANamespaceNotWatched(t *testing.T) {
	cp, ns := planEditEnv(t)
	other := bosuntest.Namespace(t, cp.Client)
	opts := stepsOperator("nsscoped", ns, double{})
	convergedWidgets(t, opts, ns, nil)
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "elsewhere"}, Spec: testapi.WidgetSpec{Value: 3}}
	if err := cp.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	w.APIVersion, w.Kind = testapi.GroupVersion.String(), "Widget"
	w.Spec.Value = 5
	report, err := planEdit(t, opts, writeEdit(t, w))
	if err == nil {
		t.Fatalf("the plan of an edit of a Widget of a namespace the operator does not watch succeeded:\n%s", report)
	}
	if !strings.Contains(err.Error(), "Widget "+other+"/elsewhere") {
		t.Errorf("the plan's error does not name the edited Widget as the report does (Widget %s/elsewhere): %v", other, err)
	}
}

// TestPlanEditReadThroughTheManager: a step reads its Widget through the
// manager's cache (mgr.GetCache()) besides the pass's object: it must read
// spec.value 5 of the edit, not 3. Seen failing when only the client and
// the API reader read the edit.
func TestPlanEditReadThroughTheManager(t *testing.T) {
	cp, ns := planEditEnv(t)
	for _, via := range []string{"cache"} {
		t.Run(via, func(t *testing.T) {
			name := "read-" + via
			opts := stepsOperator(name, ns, double{})
			opts.Setup = func(mgr ctrl.Manager) error {
				var rd client.Reader = mgr.GetCache()
				step := bosun.NewStep[*testapi.Widget]("read", func(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
					var w testapi.Widget
					if err := rd.Get(ctx, client.ObjectKeyFromObject(req.Object), &w); err != nil {
						return ctrl.Result{}, err
					}
					req.Object.Status.Result = 2 * w.Spec.Value
					return ctrl.Result{}, nil
				})
				r := &bosun.Reconciler[*testapi.Widget]{Name: name, Finalizer: planFinalizer, Steps: []bosun.Step[*testapi.Widget]{step}}
				return bosun.ControllerManagedBy[*testapi.Widget](mgr).Named(name).Complete(r)
			}
			convergedWidgets(t, opts, ns, nil, via)
			edited := &testapi.Widget{}
			if err := cp.Client.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: via}, edited); err != nil {
				t.Fatal(err)
			}
			edited.APIVersion, edited.Kind = testapi.GroupVersion.String(), "Widget"
			edited.Spec.Value = 5
			report, err := planEdit(t, opts, writeEdit(t, edited))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(report, "status.result: 6 -> 10") {
				t.Errorf("a read of the Widget through the manager's %s sees the live object, not the edit: the plan lacks status.result: 6 -> 10", via)
			}
		})
	}
}
