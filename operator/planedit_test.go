package operator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/operator"
)

// valueChild is a children step that keeps a ConfigMap "<name>-value"
// holding the Widget's spec.value.
func valueChild() bosun.Step[*testapi.Widget] {
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		return []client.Object{&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: req.Object.Name + "-value"},
			Data:       map[string]string{"value": fmt.Sprint(req.Object.Spec.Value)},
		}}, nil
	}
	return children.NewStep("value", desired, []children.Kind{children.Of(&corev1.ConfigMap{})})
}

// TestPlanOfAnEdit runs an operator until two Widgets converge, stops it,
// and plans an edit of one of them, written as kubectl get -o yaml shows
// it (status, managedFields and resourceVersion included) with a new
// spec.value: the report covers that Widget alone, says what the edit
// changes, and foretells its child's new data and its status; nothing
// changes on the server. An edit the API server refuses, of an object the
// cluster lacks, or of a kind the operator does not reconcile fails the
// plan, saying why.
func TestPlanOfAnEdit(t *testing.T) {
	cp, ns := planEditEnv(t)
	opts := stepsOperator("edit", ns, double{}, valueChild())
	ctx := t.Context()
	ws := map[string]*testapi.Widget{}
	for _, name := range []string{"a", "b"} {
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: testapi.WidgetSpec{Value: 3}}
		if err := cp.Client.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
		ws[name] = w
	}
	r := start(t, opts, planFlags())
	for _, w := range ws {
		bosuntest.Eventually(t, func(ctx context.Context) error { return ready(ctx, cp.Client, w, 6) })
	}
	if err := r.stop(time.Minute); err != nil {
		t.Fatal(err)
	}

	edited := &testapi.Widget{}
	if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(ws["a"]), edited); err != nil {
		t.Fatal(err)
	}
	edited.APIVersion, edited.Kind = testapi.GroupVersion.String(), "Widget"
	edited.Spec.Value = 5
	file := writeEdit(t, edited)

	before := snapshot(ctx, t, cp.Client, ns)
	flags := planFlags()
	flags.PlanEdit = file
	report := runPlanWith(t, opts, flags)
	if diff := cmp.Diff(before, snapshot(ctx, t, cp.Client, ns)); diff != "" {
		t.Errorf("the plan of an edit changed the server (-before +after):\n%s", diff)
	}
	for _, want := range []string{
		"Widget " + ns + "/a (controller edit)",
		"  edit: spec.value: 3 -> 5",
		"ConfigMap " + ns + "/a-value",
		`data.value: "3" -> "5"`,
		"status.result: 6 -> 10",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the plan of an edit lacks %q", want)
		}
	}
	if strings.Contains(report, ns+"/b ") {
		t.Errorf("the plan of an edit of a covers b too:\n%s", report)
	}
	if strings.Contains(report, "edit: metadata") || strings.Contains(report, "edit: status") {
		t.Errorf("the edit reports what an edit does not set:\n%s", report)
	}

	refused := edited.DeepCopy()
	refused.Spec.Mode = "sideways"
	missing := edited.DeepCopy()
	missing.Name = "nowhere"
	other := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a-value"}}
	for _, tc := range []struct {
		obj  client.Object
		want string
	}{
		{refused, "the API server refuses the edit of Widget " + ns + "/a"},
		{missing, "Widget " + ns + "/nowhere is not in the cluster"},
		{other, "the operator reconciles no ConfigMap"},
	} {
		flags.PlanEdit = writeEdit(t, tc.obj)
		flags.Plan = true
		out := &syncBuffer{}
		err := operator.Run(ctx, opts, flags, out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("plan of %s: %v, want an error saying %q", tc.obj.GetName(), err, tc.want)
		}
	}
	if diff := cmp.Diff(before, snapshot(ctx, t, cp.Client, ns)); diff != "" {
		t.Errorf("the refused plans changed the server (-before +after):\n%s", diff)
	}
}

// writeEdit writes obj as YAML into a file of the test's and returns its
// path.
func writeEdit(t *testing.T, obj client.Object) string {
	t.Helper()
	data, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "edited.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// planEditEnv returns the shared control plane, which the operators of
// the test reach through KUBECONFIG, and a namespace of the test's.
func planEditEnv(t *testing.T) (*controlplane.ControlPlane, string) {
	t.Helper()
	cp := shared.ControlPlane(t)
	useKubeconfig(t, cp)
	return cp, bosuntest.Namespace(t, cp.Client)
}
