package operator_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
)

// yamlApply is a step that keeps a ConfigMap with server-side apply, its
// body in YAML ("application/apply-patch+yaml", the apply patch's own
// format, as bosun's internal/manifests sends it).
type yamlApply struct{}

func (yamlApply) Do(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	body := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + req.Object.Name + "-yaml\n  namespace: " + req.Object.Namespace + "\ndata:\n  greeting: hello-from-yaml\n"
	cm := &metav1.PartialObjectMetadata{}
	cm.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("ConfigMap"))
	cm.APIVersion, cm.Kind = "v1", "ConfigMap"
	cm.SetNamespace(req.Object.Namespace)
	cm.SetName(req.Object.Name + "-yaml")
	return ctrl.Result{}, req.Client.Patch(ctx, cm, client.RawPatch(types.ApplyYAMLPatchType, []byte(body)), client.FieldOwner("yaml-step"), client.ForceOwnership)
}

// TestPlanOfAYAMLApply: a plan of an operator whose step sends a
// server-side apply with a YAML body (a valid apply patch, which the
// operator itself sends without trouble) shows the ConfigMap it would
// create. Seen failing when the plan read apply patches as JSON only: the
// pass failed with "decoding an apply patch".
func TestPlanOfAYAMLApply(t *testing.T) {
	cp := shared.ControlPlane(t)
	useKubeconfig(t, cp)
	ns := bosuntest.Namespace(t, cp.Client)
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 1}}
	if err := cp.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	report := runPlan(t, stepsOperator("yamlapply", ns, yamlApply{}))
	section := planSection(report, "Widget "+ns+"/w ")
	if strings.Contains(report, "decoding an apply patch") || !strings.Contains(section, "ConfigMap "+ns+"/w-yaml") {
		t.Errorf("the plan of Widget w does not show the ConfigMap its step applies (YAML body):\n%s", report)
	}
}
