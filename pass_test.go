package bosun_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// childWidget is the Widget "w" in namespace "ns" that the tests of
// CreateChild and ListChildren reconcile.
func childWidget() *testapi.Widget {
	return &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "w", UID: "uid-w"}}
}

// configMap returns the ConfigMap name in namespace ns, controlled by the
// object of kind Widget and UID owner unless owner is empty, with data
// value=value.
func configMap(ns, name, owner, value string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"value": value}}
	if owner != "" {
		cm.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: testapi.GroupVersion.String(), Kind: "Widget", Name: "w", UID: types.UID(owner), Controller: ptr.To(true),
		}}
	}
	return cm
}

// TestCreateChild runs CreateChild through the engine, against the
// in-memory client: a child is created once, owned and announced; one
// already made by the Widget is taken as it is stored; one of another owner
// is left alone and reported with <Kind>NameTaken; any other failure is
// returned with the kind and name.
func TestCreateChild(t *testing.T) {
	scheme := unit.Scheme(t, corev1.AddToScheme, testapi.AddToScheme)
	ready := metav1.Condition{Type: conditions.TypeReady, Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded)}
	// got is what the step's CreateChild left in its object, for Check.
	var got *corev1.ConfigMap
	step := bosun.NewStep("create", func(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
		got = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "w-child", Labels: map[string]string{"desired": "yes"}}, Data: map[string]string{"value": "desired"}}
		return ctrl.Result{}, req.CreateChild(ctx, got)
	})
	expectGot := func(want *corev1.ConfigMap) func(bosuntest.TB, *unit.Outcome[*testapi.Widget]) {
		return func(t bosuntest.TB, _ *unit.Outcome[*testapi.Widget]) {
			t.Helper()
			g := got.DeepCopy()
			g.ResourceVersion, g.ManagedFields, g.TypeMeta = "", nil, metav1.TypeMeta{}
			if diff := cmp.Diff(want, g); diff != "" {
				t.Errorf("the object CreateChild left (-want +got):\n%s", diff)
			}
		}
	}
	created := configMap("ns", "w-child", "uid-w", "desired")
	created.Labels = map[string]string{"desired": "yes"}
	created.OwnerReferences[0].BlockOwnerDeletion = ptr.To(true)
	unit.Run(t, scheme, func() *bosun.Reconciler[*testapi.Widget] { return unit.Steps[*testapi.Widget](step) },
		unit.Case[*testapi.Widget]{
			Name:             "missing: created in the Widget's namespace, controlled by it, with an event",
			Object:           childWidget(),
			ExpectWrites:     []string{"create ConfigMap ns/w-child", "patch status Widget ns/w"},
			ExpectEvents:     []string{"Normal " + string(conditions.ReasonSuccessfulCreate) + " created configmap w-child"},
			ExpectObjects:    []client.Object{created},
			ExpectConditions: []metav1.Condition{ready},
			Check:            expectGot(created),
		},
		unit.Case[*testapi.Widget]{
			Name:             "made by an earlier pass: taken as stored, no event",
			Object:           childWidget(),
			Given:            []client.Object{configMap("ns", "w-child", "uid-w", "stored")},
			ExpectWrites:     []string{"create ConfigMap ns/w-child", "patch status Widget ns/w"},
			ExpectNoEvents:   true,
			ExpectObjects:    []client.Object{configMap("ns", "w-child", "uid-w", "stored")},
			ExpectConditions: []metav1.Condition{ready},
			// Nothing of the desired object (its label, its data) stays.
			Check: expectGot(configMap("ns", "w-child", "uid-w", "stored")),
		},
		unit.Case[*testapi.Widget]{
			Name:             "held by another owner: left alone, ConfigMapNameTaken",
			Object:           childWidget(),
			Given:            []client.Object{configMap("ns", "w-child", "uid-other", "theirs")},
			ExpectWrites:     []string{"create ConfigMap ns/w-child", "patch status Widget ns/w"},
			ExpectErr:        "configmap w-child exists and is not controlled by this Widget; delete or rename it",
			ExpectEvents:     []string{"Warning ConfigMapNameTaken configmap w-child exists and is not controlled by this Widget; delete or rename it"},
			ExpectObjects:    []client.Object{configMap("ns", "w-child", "uid-other", "theirs")},
			ExpectConditions: []metav1.Condition{{Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: "ConfigMapNameTaken"}},
		},
		unit.Case[*testapi.Widget]{
			Name:   "held by an object without an owner: ConfigMapNameTaken",
			Object: childWidget(),
			Given:  []client.Object{configMap("ns", "w-child", "", "nobody's")},
			ExpectConditions: []metav1.Condition{{
				Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: "ConfigMapNameTaken",
			}},
			ExpectErr: "configmap w-child exists and is not controlled by this Widget",
		},
		unit.Case[*testapi.Widget]{
			Name:   "the API server refuses: the error names the kind and the child",
			Object: childWidget(),
			Interceptor: interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
				return apierrors.NewInternalError(errors.New("etcd is down"))
			}},
			ExpectWrites:     []string{"create ConfigMap ns/w-child", "patch status Widget ns/w"},
			ExpectErr:        "create configmap w-child: Internal error occurred: etcd is down",
			ExpectEvents:     []string{"Warning " + string(conditions.ReasonError) + " create configmap w-child: Internal error occurred: etcd is down"},
			ExpectGone:       []client.Object{configMap("ns", "w-child", "", "")},
			ExpectConditions: []metav1.Condition{{Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(conditions.ReasonError)}},
		},
	)
}

// listReader is a client.Reader whose List fails with err when err is set,
// and otherwise lists through Reader.
type listReader struct {
	client.Reader
	err error
}

// List lists through the wrapped reader, or fails with r.err.
func (r listReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if r.err != nil {
		return r.err
	}
	return r.Reader.List(ctx, list, opts...)
}

// TestListChildren lists ConfigMaps with ListChildren through the engine:
// only those the Widget controls in its namespace, and among them those the
// options select; a failed list is returned with the Widget named.
func TestListChildren(t *testing.T) {
	scheme := unit.Scheme(t, corev1.AddToScheme, testapi.AddToScheme)
	given := []client.Object{
		configMap("ns", "a", "uid-w", "1"),
		configMap("ns", "b", "uid-w", "2"),
		configMap("ns", "theirs", "uid-other", "3"),
		configMap("ns", "nobody", "", "4"),
		configMap("elsewhere", "c", "uid-w", "5"),
	}
	given[1].SetLabels(map[string]string{"pick": "yes"})
	tests := []struct {
		name    string
		opts    []client.ListOption
		fail    error
		want    []string
		wantErr string
	}{
		{name: "the Widget's children only", want: []string{"a", "b"}},
		{name: "selected by the options too", opts: []client.ListOption{client.MatchingLabels{"pick": "yes"}}, want: []string{"b"}},
		{name: "a failed list", fail: errors.New("no route to the API server"),
			wantErr: "listing the children of ns/w: no route to the API server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			var listErr error
			step := bosun.NewStep("list", func(ctx context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
				var list corev1.ConfigMapList
				listErr = req.ListChildren(ctx, listReader{Reader: req.APIReader, err: tt.fail}, &list, tt.opts...)
				for _, cm := range list.Items {
					names = append(names, cm.Name)
				}
				return ctrl.Result{}, nil
			})
			unit.Reconcile(t, scheme, unit.Steps[*testapi.Widget](step), unit.Case[*testapi.Widget]{Name: tt.name, Object: childWidget(), Given: given})
			gotErr := ""
			if listErr != nil {
				gotErr = listErr.Error()
			}
			if gotErr != tt.wantErr {
				t.Errorf("ListChildren error %q, want %q", gotErr, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("children listed (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCreateChildOnTheAPIServer runs CreateChild against a real API
// server, outside of a reconcile: the first call creates the child; a
// second, with other contents, finds it made and takes it as stored,
// nothing of its own object mixed in; a name held by another object is
// reported with ConfigMapNameTaken and that object is left as it is.
func TestCreateChildOnTheAPIServer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	recorder := events.NewFakeRecorder(10)
	req := &bosun.Pass[*testapi.Widget]{Controller: "test", Object: f.create("w", 1, 1, nil), Client: f.c, APIReader: f.c, Recorder: recorder}

	first := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "run-1"}, Data: map[string]string{"value": "first"}}
	if err := req.CreateChild(ctx, first); err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(first, req.Object) || first.Namespace != f.ns || first.UID == "" {
		t.Errorf("created %s/%s (uid %q, owners %v), want it in %s, stored, controlled by the Widget", first.Namespace, first.Name, first.UID, first.OwnerReferences, f.ns)
	}
	again := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "run-1", Labels: map[string]string{"again": "yes"}}, Data: map[string]string{"value": "again", "extra": "x"}}
	if err := req.CreateChild(ctx, again); err != nil {
		t.Fatal(err)
	}
	if again.UID != first.UID || again.Labels["again"] != "" || !cmp.Equal(again.Data, map[string]string{"value": "first"}) {
		t.Errorf("second call left uid %s, labels %v, data %v; want the stored child (uid %s, data %v) and nothing of its own",
			again.UID, again.Labels, again.Data, first.UID, first.Data)
	}

	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "taken"}, Data: map[string]string{"value": "theirs"}}
	if err := f.c.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	err := req.CreateChild(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "taken"}, Data: map[string]string{"value": "ours"}})
	if reason, severity, _ := conditions.FromError(err); reason != "ConfigMapNameTaken" || severity != conditions.SeverityWarning {
		t.Errorf("CreateChild over another's object: error %v (reason %q, severity %s), want a warning with reason ConfigMapNameTaken", err, reason, severity)
	}
	var stored corev1.ConfigMap
	if err := f.c.Get(ctx, client.ObjectKeyFromObject(theirs), &stored); err != nil {
		t.Fatal(err)
	}
	if stored.Data["value"] != "theirs" || len(stored.OwnerReferences) != 0 {
		t.Errorf("the other object became data %v, owners %v; want it left as it was", stored.Data, stored.OwnerReferences)
	}

	close(recorder.Events)
	var got []string
	for e := range recorder.Events {
		got = append(got, e)
	}
	if diff := cmp.Diff([]string{"Normal " + string(conditions.ReasonSuccessfulCreate) + " created configmap run-1"}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
