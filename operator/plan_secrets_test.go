package operator_test

import (
	"context"
	"encoding/base64"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/managed"
	"github.com/bosunkit/bosun/operator"
)

// vaultCloud is an external system whose resources have an endpoint,
// which Observe returns as a connection detail, and a password, which
// Create returns.
type vaultCloud struct {
	mu       sync.Mutex
	endpoint string
	values   map[string]int64
	owners   map[string]string
}

func (v *vaultCloud) setEndpoint(e string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.endpoint = e
}

func (v *vaultCloud) connector() managed.Connector[*testapi.Widget] {
	return managed.ConnectorFunc[*testapi.Widget](func(context.Context, *testapi.Widget) (managed.ExternalClient[*testapi.Widget], error) {
		return managed.ExternalClientFuncs[*testapi.Widget]{
			ObserveFn: func(_ context.Context, w *testapi.Widget) (managed.Observation, error) {
				v.mu.Lock()
				defer v.mu.Unlock()
				n, ok := v.values[managed.ExternalName(w)]
				if !ok {
					return managed.Observation{}, nil
				}
				return managed.Observation{
					Exists: true, UpToDate: n == w.Spec.Value, Available: true,
					Owner:             v.owners[managed.ExternalName(w)],
					ConnectionDetails: managed.ConnectionDetails{"endpoint": []byte(v.endpoint)},
				}, nil
			},
			CreateFn: func(_ context.Context, w *testapi.Widget) (managed.Creation, error) {
				v.mu.Lock()
				defer v.mu.Unlock()
				v.values[managed.ExternalName(w)] = w.Spec.Value
				v.owners[managed.ExternalName(w)] = managed.Identity(w)
				return managed.Creation{ConnectionDetails: managed.ConnectionDetails{"password": []byte("pw-first-Qx81")}}, nil
			},
			UpdateFn: func(_ context.Context, w *testapi.Widget) (managed.UpdateResult, error) {
				v.mu.Lock()
				defer v.mu.Unlock()
				v.values[managed.ExternalName(w)] = w.Spec.Value
				return managed.UpdateResult{}, nil
			},
			DeleteFn: func(_ context.Context, w *testapi.Widget) error {
				v.mu.Lock()
				defer v.mu.Unlock()
				delete(v.values, managed.ExternalName(w))
				return nil
			},
		}, nil
	})
}

// vaultChildren is the children step of a version of an operator: each
// Widget has a Secret "<name>-token" whose keys are those of token, and a
// ConfigMap "<name>-notes" with data key note.
func vaultChildren(token map[string]string, note string, metadataOnly bool) bosun.Step[*testapi.Widget] {
	desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
		name := req.Object.Name
		data := map[string][]byte{}
		for k, v := range token {
			data[k] = []byte(v)
		}
		return []client.Object{
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-token"}, Data: data},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-notes"}, Data: map[string]string{"note": note}},
		}, nil
	}
	return children.NewStep("vault", desired, []children.Kind{
		{Object: &corev1.Secret{}, MetadataOnly: metadataOnly},
		{Object: &corev1.ConfigMap{}, MetadataOnly: metadataOnly},
	})
}

// TestPlanHidesSecretValues runs version 1 of an operator whose Widgets
// have a Secret child, a ConfigMap child and a connection Secret, then,
// after the Widget's spec and the external system's endpoint changed,
// plans version 2, which changes a key of the Secret child, adds one and
// changes the ConfigMap, which it marks sensitive (Options.Sensitive). The
// plan names every key that would change, and prints none of their
// values, old or new, plain or in base64.
func TestPlanHidesSecretValues(t *testing.T) { planHidesSecretValues(t, false) }

// TestPlanHidesSecretValuesOfMetadataOnlyChildren is
// TestPlanHidesSecretValues with the children's kinds cached as metadata
// only (children.Kind.MetadataOnly), whose applies ask the API server for
// the metadata of the child only: the plan still names every key that
// would change, and prints no value.
func TestPlanHidesSecretValuesOfMetadataOnlyChildren(t *testing.T) { planHidesSecretValues(t, true) }

func planHidesSecretValues(t *testing.T, metadataOnly bool) {
	cp := shared.ControlPlane(t)
	useKubeconfig(t, cp)
	ns := bosuntest.Namespace(t, cp.Client)
	ctx := t.Context()
	cloud := &vaultCloud{endpoint: "endpoint-one-Lm42", values: map[string]int64{}, owners: map[string]string{}}
	connection := managed.NewStep[*testapi.Widget](cloud.connector(),
		managed.WithConnectionSecret(func(w *testapi.Widget) string { return w.Name + "-conn" }))

	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 1}}
	if err := cp.Client.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	v1 := start(t, stepsOperator("vault", ns, vaultChildren(map[string]string{"token": "token-one-Hv27"}, "note-one-Rk55", metadataOnly), connection), planFlags())
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := ready(ctx, cp.Client, w, 0); err != nil {
			return err
		}
		var sec corev1.Secret
		return cp.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "w-conn"}, &sec)
	})
	if err := v1.stop(time.Minute); err != nil {
		t.Fatal(err)
	}

	// While no operator runs, the spec changes (so that the managed
	// step observes at once) and so does the endpoint.
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return err
		}
		w.Spec.Value = 2
		return cp.Client.Update(ctx, w)
	})
	cloud.setEndpoint("endpoint-two-Pw93")

	opts := stepsOperator("vault", ns, vaultChildren(map[string]string{"token": "token-two-Jc64", "extra": "extra-two-Ub18"}, "note-two-Yt70", metadataOnly), connection)
	opts.Sensitive = map[schema.GroupKind][]string{{Kind: "ConfigMap"}: {"data"}}
	report := runPlan(t, opts)

	section := planSection(report, "Widget "+ns+"/w ")
	for _, line := range []string{
		"apply Secret " + ns + "/w-token",
		"data.token: (sensitive value) -> (sensitive value)",
		"data.extra: <none> -> (sensitive value)",
		`metadata.annotations["bosun.dev/applied-hash"]: (sensitive value) -> (sensitive value)`,
		"apply ConfigMap " + ns + "/w-notes",
		"data.note: (sensitive value) -> (sensitive value)",
		"update Secret " + ns + "/w-conn",
		"data.endpoint: (sensitive value) -> (sensitive value)",
	} {
		if !strings.Contains(section, line) {
			t.Errorf("the plan of Widget w lacks %q:\n%s", line, section)
		}
	}
	checkNoValues(t, report, "token-one-Hv27", "token-two-Jc64", "extra-two-Ub18", "note-one-Rk55", "note-two-Yt70",
		"endpoint-one-Lm42", "endpoint-two-Pw93", "pw-first-Qx81")
}

// checkNoValues fails the test for each of values that report holds, as
// it is or in base64.
func checkNoValues(t *testing.T, report string, values ...string) {
	t.Helper()
	var found []string
	for _, v := range values {
		for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
			if strings.Contains(report, form) {
				found = append(found, form)
			}
		}
	}
	if diff := cmp.Diff([]string(nil), found); diff != "" {
		t.Errorf("the plan prints sensitive values (-want +got):\n%s\nthe plan:\n%s", diff, report)
	}
}

// TestSensitiveFieldsAreCheckedFirst: a field path of Options.Sensitive
// that cannot be read stops the operator before it connects to a cluster,
// naming the option, the kind and the path.
func TestSensitiveFieldsAreCheckedFirst(t *testing.T) {
	for _, fields := range []map[schema.GroupKind][]string{
		{{Group: "test.bosun.dev", Kind: "Widget"}: {"spec.users[0].token"}},
		{{Group: "test.bosun.dev", Kind: "Widget"}: {"spec..token"}},
		{{Group: "test.bosun.dev"}: {"spec.token"}},
	} {
		opts := stepsOperator("sensitive", "default")
		opts.Sensitive = fields
		err := operator.Run(t.Context(), opts, planFlags(), io.Discard)
		if err == nil || !strings.Contains(err.Error(), `operator "sensitive": Options.Sensitive: `) {
			t.Errorf("Sensitive %v: Run returned %v, want an error naming Options.Sensitive", fields, err)
		}
	}
}
