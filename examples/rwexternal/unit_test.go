package rwexternal

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/conditions"
	rwv1 "github.com/bosunkit/bosun/examples/rwexternal/api/v1alpha1"
)

func TestDerive(t *testing.T) {
	const (
		emptyDigest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
		abcDigest   = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	)
	tests := []struct {
		name    string
		in      map[string][]byte
		want    map[string]string
		wantErr string
	}{
		{name: "nil", in: nil, want: map[string]string{}},
		{name: "keys upper-cased, values digested", in: map[string][]byte{"user": []byte("abc"), "ca.crt": nil, "API_KEY": []byte("abc")},
			want: map[string]string{"USER": abcDigest, "CA.CRT": emptyDigest, "API_KEY": abcDigest}},
		{name: "collision", in: map[string][]byte{"b": nil, "a": nil, "A": nil, "B": nil},
			wantErr: `input keys collide: "A" and "a" both become "A"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Derive(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrKeyCollision) {
					t.Fatalf("Derive error = %v, want %q wrapping ErrKeyCollision", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Derive: %v", err)
			}
			got := map[string]string{}
			for k, v := range out {
				got[k] = string(v)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Derive (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSecretWatches checks which RWExternals a Secret event reconciles: the
// readers of an input Secret, through the field index the steps set up,
// and the writer of an output Secret.
func TestSecretWatches(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	indexes, err := NewReconciler().FieldIndexes(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(indexes) != 1 || indexes[0].Field != InputSecretIndex {
		t.Fatalf("field indexes %+v, want one, %s", indexes, InputSecretIndex)
	}
	rw := func(ns, name, input string) *rwv1.RWExternal {
		return &rwv1.RWExternal{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: rwv1.RWExternalSpec{InputSecret: input}}
	}
	c := fake.NewClientBuilder().WithScheme(s).
		WithIndex(indexes[0].Object, indexes[0].Field, indexes[0].Extract).
		WithObjects(rw("a", "one", "creds"), rw("a", "two", "creds"), rw("a", "three", "other"), rw("b", "four", "creds"), rw("a", "five", "")).
		Build()
	secret := func(ns, name, owner string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		if owner != "" {
			s.Annotations = map[string]string{OwnerAnnotation: owner}
		}
		return s
	}
	tests := []struct {
		name   string
		secret *corev1.Secret
		want   []string
	}{
		{name: "input of two", secret: secret("a", "creds", ""), want: []string{"a/one", "a/two"}},
		{name: "other namespace", secret: secret("b", "creds", ""), want: []string{"b/four"}},
		{name: "output", secret: secret("a", "three-output", "three"), want: []string{"a/three"}},
		{name: "unrelated", secret: secret("a", "unrelated", ""), want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			var readers rwv1.RWExternalList
			if err := c.List(t.Context(), &readers, client.InNamespace(tt.secret.Namespace), client.MatchingFields{InputSecretIndex: tt.secret.Name}); err != nil {
				t.Fatal(err)
			}
			for _, r := range readers.Items {
				got = append(got, r.Namespace+"/"+r.Name)
			}
			for _, r := range outputOwner(t.Context(), tt.secret) {
				got = append(got, r.String())
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReconcilerIsValid checks the configuration the way setup does.
func TestReconcilerIsValid(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	r := NewReconciler()
	r.Client = fake.NewClientBuilder().WithScheme(s).Build()
	if err := r.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
}

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}
	for _, tt := range []struct {
		obj  runtime.Object
		want schema.GroupVersionKind
	}{
		{&rwv1.RWExternal{}, rwv1.GroupVersion.WithKind("RWExternal")},
		{&rwv1.RWExternalList{}, rwv1.GroupVersion.WithKind("RWExternalList")},
		{&corev1.Secret{}, corev1.SchemeGroupVersion.WithKind("Secret")},
	} {
		gvks, _, err := s.ObjectKinds(tt.obj)
		if err != nil {
			t.Errorf("ObjectKinds(%T): %v", tt.obj, err)
			continue
		}
		if diff := cmp.Diff([]schema.GroupVersionKind{tt.want}, gvks); diff != "" {
			t.Errorf("ObjectKinds(%T) (-want +got):\n%s", tt.obj, diff)
		}
	}
}

func TestCRDs(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatalf("CRDs: %v", err)
	}
	if len(crds) != 1 {
		t.Fatalf("CRDs returned %d definitions, want 1", len(crds))
	}
	c := crds[0]
	type summary struct {
		Name, Group, Kind string
		Scope             apiextensionsv1.ResourceScope
		Versions          []string
		Status            bool
		Required          []string
		Rules             []string
	}
	got := summary{Name: c.Name, Group: c.Spec.Group, Kind: c.Spec.Names.Kind, Scope: c.Spec.Scope}
	for _, v := range c.Spec.Versions {
		got.Versions = append(got.Versions, v.Name)
		got.Status = v.Subresources != nil && v.Subresources.Status != nil
		root := v.Schema.OpenAPIV3Schema
		got.Required = root.Properties["spec"].Required
		for _, r := range root.XValidations {
			got.Rules = append(got.Rules, r.Message)
		}
		for _, r := range root.Properties["spec"].XValidations {
			got.Rules = append(got.Rules, r.Message)
		}
	}
	want := summary{
		Name:     "rwexternals.rwexternal.bosun.dev",
		Group:    rwv1.GroupVersion.Group,
		Kind:     "RWExternal",
		Scope:    apiextensionsv1.NamespaceScoped,
		Versions: []string{rwv1.GroupVersion.Version},
		Status:   true,
		Required: []string{"inputSecret"},
		Rules:    []string{"names longer than 246 characters need spec.outputSecret", "outputSecret is immutable"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CRD (-want +got):\n%s", diff)
	}
}

func TestSamples(t *testing.T) {
	inputs := map[string]bool{}
	for _, s := range SampleInputs("demo") {
		if s.Namespace != "demo" {
			t.Errorf("input %s in namespace %q, want demo", s.Name, s.Namespace)
		}
		inputs[s.Name] = true
		data := map[string][]byte{}
		for k, v := range s.StringData {
			data[k] = []byte(v)
		}
		if _, err := Derive(data); err != nil {
			t.Errorf("input %s cannot be derived: %v", s.Name, err)
		}
	}
	outputs := map[string]bool{}
	for _, obj := range Samples("demo") {
		rw, ok := obj.(*rwv1.RWExternal)
		if !ok {
			t.Fatalf("sample %T, want *v1alpha1.RWExternal", obj)
		}
		if rw.Namespace != "demo" {
			t.Errorf("sample %s in namespace %q, want demo", rw.Name, rw.Namespace)
		}
		if !inputs[rw.Spec.InputSecret] {
			t.Errorf("sample %s reads %s, which SampleInputs does not make", rw.Name, rw.Spec.InputSecret)
		}
		out := rw.OutputSecretName()
		if outputs[out] || inputs[out] {
			t.Errorf("sample %s writes %s, which is used already", rw.Name, out)
		}
		outputs[out] = true
	}
	Samples("demo")[0].SetName("changed")
	if Samples("demo")[0].GetName() == "changed" {
		t.Error("Samples returned shared objects")
	}
}

// The world of the reconcile tests: RWExternal ns/rw reads Secret ns/in,
// which holds user=admin, and writes Secret ns/rw-output.
var (
	inputData = map[string][]byte{"user": []byte("admin")}
	// outputData of inputData: USER is the SHA-256 digest of "admin".
	wantData = map[string][]byte{"USER": []byte("8c6976e5b5410415bde908bd4dee15dfb167a9c873fc4bb8a81f6f2ab448a918")}
)

// rwExternal returns RWExternal ns/rw at generation 3, reading Secret in,
// with annotations.
func rwExternal(annotations map[string]string) *rwv1.RWExternal {
	return &rwv1.RWExternal{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rw", Generation: 3, Annotations: annotations},
		Spec:       rwv1.RWExternalSpec{InputSecret: "in"},
	}
}

// claimed returns rwExternal with the finalizer the engine adds, as a pass
// after the first finds it.
func claimed(annotations map[string]string) *rwv1.RWExternal {
	rw := rwExternal(annotations)
	rw.Finalizers = []string{Finalizer}
	return rw
}

func inputSecret(data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "in"}, Data: data}
}

// outputSecret returns Secret ns/rw-output, marked as written for owner.
func outputSecret(owner string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rw-output", Annotations: map[string]string{OwnerAnnotation: owner}},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// serverError is the error of a failing API server.
var serverError = apierrors.NewInternalError(errors.New("etcd is down"))

// failSecrets returns hooks that fail the given writes of Secrets with err:
// "create", "update" or "delete".
func failSecrets(err error, verb string) interceptor.Funcs {
	fail := func(obj client.Object) bool {
		_, ok := obj.(*corev1.Secret)
		return ok
	}
	var f interceptor.Funcs
	switch verb {
	case "create":
		f.Create = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if fail(obj) {
				return err
			}
			return c.Create(ctx, obj, opts...)
		}
	case "update":
		f.Update = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if fail(obj) {
				return err
			}
			return c.Update(ctx, obj, opts...)
		}
	case "delete":
		f.Delete = func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			if fail(obj) {
				return err
			}
			return c.Delete(ctx, obj, opts...)
		}
	}
	return f
}

// failGet returns hooks that fail reads of the object named name with err.
func failGet(name string, err error) interceptor.Funcs {
	return interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if key.Name == name {
			return err
		}
		return c.Get(ctx, key, obj, opts...)
	}}
}

// cond returns a condition of generation 3.
func cond(typ string, status metav1.ConditionStatus, reason conditions.Reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: string(reason), Message: message, ObservedGeneration: 3}
}

var (
	inputRead  = cond(rwv1.ConditionInputReady, metav1.ConditionTrue, rwv1.ReasonInputFound, `secret "in" read`)
	outputDone = cond(rwv1.ConditionOutputReady, metav1.ConditionTrue, rwv1.ReasonOutputUpToDate, `secret "rw-output" holds the output of the current input`)
	succeeded  = cond(conditions.TypeReady, metav1.ConditionTrue, conditions.ReasonSucceeded, "")
)

// keeps is a Case.Check: the RWExternal is still there, with the
// finalizer, and status.outputSecret is outputSecret.
func keeps(outputSecret string) func(bosuntest.TB, *unit.Outcome[*rwv1.RWExternal]) {
	return func(t bosuntest.TB, out *unit.Outcome[*rwv1.RWExternal]) {
		t.Helper()
		if out.Object == nil {
			t.Errorf("the RWExternal is gone")
			return
		}
		if !controllerutil.ContainsFinalizer(out.Object, Finalizer) {
			t.Errorf("finalizers = %v, want %s", out.Object.Finalizers, Finalizer)
		}
		if out.Object.Status.OutputSecret != outputSecret {
			t.Errorf("status.outputSecret = %q, want %q", out.Object.Status.OutputSecret, outputSecret)
		}
	}
}

// TestReconcile runs the RWExternal reconciler under the default policy on
// one RWExternal in an in-memory client: what it writes, the conditions it
// reports, and how it meets failures of the API server.
func TestReconcile(t *testing.T) {
	converged := claimed(nil)
	converged.Status = rwv1.RWExternalStatus{OutputSecret: "rw-output", ObservedGeneration: 3}
	for _, c := range []metav1.Condition{inputRead, outputDone, succeeded} {
		c.LastTransitionTime = metav1.Now()
		converged.Status.Conditions = append(converged.Status.Conditions, c)
	}
	collision := map[string][]byte{"user": nil, "USER": nil}
	inputError := `read input secret "in": Internal error occurred: etcd is down`
	createError := `create output secret "rw-output": Internal error occurred: etcd is down`
	updateError := `update output secret "rw-output": Internal error occurred: etcd is down`
	deleteError := `delete output secret "rw-output": Internal error occurred: etcd is down`
	failed := func(msg string) metav1.Condition {
		return cond(conditions.TypeReady, metav1.ConditionFalse, conditions.ReasonError, msg)
	}

	unit.Run(t, unit.Scheme(t, AddToScheme), NewReconciler,
		unit.Case[*rwv1.RWExternal]{
			Name:             "first pass claims, writes the output and reports it",
			Object:           rwExternal(nil),
			Given:            []client.Object{inputSecret(inputData)},
			ExpectWrites:     []string{"patch RWExternal ns/rw", "create Secret ns/rw-output", "patch status RWExternal ns/rw"},
			ExpectEvents:     []string{`Normal Claimed claimed by finalizer "rwexternal.bosun.dev/output"`},
			ExpectConditions: []metav1.Condition{inputRead, outputDone, succeeded},
			ExpectObjects:    []client.Object{outputSecret("rw", wantData), inputSecret(inputData)},
			Check:            keeps("rw-output"),
		},
		unit.Case[*rwv1.RWExternal]{
			Name:           "a converged RWExternal writes nothing",
			Object:         converged,
			Given:          []client.Object{inputSecret(inputData), outputSecret("rw", wantData)},
			ExpectNoWrites: true,
		},
		unit.Case[*rwv1.RWExternal]{
			Name:             "an output out of date is updated",
			Object:           claimed(nil),
			Given:            []client.Object{inputSecret(inputData), outputSecret("rw", map[string][]byte{"USER": []byte("old"), "GONE": nil})},
			ExpectWrites:     []string{"update Secret ns/rw-output", "patch status RWExternal ns/rw"},
			ExpectConditions: []metav1.Condition{inputRead, outputDone, succeeded},
			Check: func(t bosuntest.TB, out *unit.Outcome[*rwv1.RWExternal]) {
				keeps("rw-output")(t, out)
				got := &corev1.Secret{}
				if err := out.Client.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "rw-output"}, got); err != nil {
					t.Fatalf("output: %v", err)
				}
				if diff := cmp.Diff(wantData, got.Data); diff != "" {
					t.Errorf("output data (-want +got):\n%s", diff)
				}
			},
		},
		unit.Case[*rwv1.RWExternal]{
			Name:         "a missing input stops the pass without an error",
			Object:       claimed(nil),
			ExpectWrites: []string{"patch status RWExternal ns/rw"},
			ExpectConditions: []metav1.Condition{
				cond(rwv1.ConditionInputReady, metav1.ConditionFalse, rwv1.ReasonInputMissing, `secret "in" not found`),
				cond(conditions.TypeReady, metav1.ConditionFalse, rwv1.ReasonInputMissing, `secret "in" not found`),
			},
			ExpectGone: []client.Object{outputSecret("rw", nil)},
			Check:      keeps(""),
		},
		unit.Case[*rwv1.RWExternal]{
			Name:         "input keys that collide stop the pass without an error",
			Object:       claimed(nil),
			Given:        []client.Object{inputSecret(collision)},
			ExpectWrites: []string{"patch status RWExternal ns/rw"},
			ExpectConditions: []metav1.Condition{
				cond(rwv1.ConditionInputReady, metav1.ConditionFalse, rwv1.ReasonKeyCollision, `secret "in": input keys collide: "USER" and "user" both become "USER"`),
				cond(conditions.TypeReady, metav1.ConditionFalse, rwv1.ReasonKeyCollision, `secret "in": input keys collide: "USER" and "user" both become "USER"`),
			},
			ExpectGone: []client.Object{outputSecret("rw", nil)},
		},
		unit.Case[*rwv1.RWExternal]{
			Name:         "an output name taken by another Secret is left alone and looked at again later",
			Object:       claimed(nil),
			Given:        []client.Object{inputSecret(inputData), outputSecret("other", map[string][]byte{"X": []byte("y")})},
			ExpectResult: ctrl.Result{RequeueAfter: NotOwnedRecheck},
			ExpectWrites: []string{"patch status RWExternal ns/rw"},
			ExpectConditions: []metav1.Condition{
				inputRead,
				cond(rwv1.ConditionOutputReady, metav1.ConditionFalse, rwv1.ReasonOutputNotOwned, notOwned("rw-output")),
				cond(conditions.TypeReady, metav1.ConditionFalse, rwv1.ReasonOutputNotOwned, notOwned("rw-output")),
			},
			ExpectObjects: []client.Object{outputSecret("other", map[string][]byte{"X": []byte("y")})},
			Check:         keeps(""),
		},
		unit.Case[*rwv1.RWExternal]{
			Name:             "an input that cannot be read fails the pass",
			Object:           claimed(nil),
			Given:            []client.Object{inputSecret(inputData)},
			Interceptor:      failGet("in", serverError),
			ExpectErr:        inputError,
			ExpectWrites:     []string{"patch status RWExternal ns/rw"},
			ExpectEvents:     []string{"Warning " + string(conditions.ReasonError) + " " + inputError},
			ExpectConditions: []metav1.Condition{failed(inputError)},
			ExpectGone:       []client.Object{outputSecret("rw", nil)},
		},
		unit.Case[*rwv1.RWExternal]{
			Name:             "an output that cannot be created fails the pass",
			Object:           claimed(nil),
			Given:            []client.Object{inputSecret(inputData)},
			Interceptor:      failSecrets(serverError, "create"),
			ExpectErr:        createError,
			ExpectWrites:     []string{"create Secret ns/rw-output", "patch status RWExternal ns/rw"},
			ExpectEvents:     []string{"Warning " + string(conditions.ReasonError) + " " + createError},
			ExpectConditions: []metav1.Condition{inputRead, failed(createError)},
			ExpectGone:       []client.Object{outputSecret("rw", nil)},
			Check:            keeps(""),
		},
		unit.Case[*rwv1.RWExternal]{
			Name:         "an output the cache has not seen yet is looked at again shortly",
			Object:       claimed(nil),
			Given:        []client.Object{inputSecret(inputData)},
			Interceptor:  failSecrets(apierrors.NewAlreadyExists(corev1.Resource("secrets"), "rw-output"), "create"),
			ExpectResult: ctrl.Result{RequeueAfter: CacheLagDelay},
			ExpectWrites: []string{"create Secret ns/rw-output", "patch status RWExternal ns/rw"},
			ExpectConditions: []metav1.Condition{
				inputRead,
				cond(rwv1.ConditionOutputReady, metav1.ConditionUnknown, conditions.ReasonInitializing, conditions.MessageInitializing),
			},
		},
		unit.Case[*rwv1.RWExternal]{
			Name:             "an output that cannot be updated fails the pass",
			Object:           claimed(nil),
			Given:            []client.Object{inputSecret(inputData), outputSecret("rw", nil)},
			Interceptor:      failSecrets(serverError, "update"),
			ExpectErr:        updateError,
			ExpectWrites:     []string{"update Secret ns/rw-output", "patch status RWExternal ns/rw"},
			ExpectEvents:     []string{"Warning " + string(conditions.ReasonError) + " " + updateError},
			ExpectConditions: []metav1.Condition{inputRead, failed(updateError)},
		},
		unit.Case[*rwv1.RWExternal]{
			Name:         "an update refused with a conflict is a quiet requeue",
			Object:       claimed(nil),
			Given:        []client.Object{inputSecret(inputData), outputSecret("rw", nil)},
			Interceptor:  failSecrets(apierrors.NewConflict(corev1.Resource("secrets"), "rw-output", errors.New("changed")), "update"),
			ExpectResult: ctrl.Result{RequeueAfter: 100 * time.Millisecond},
			ExpectWrites: []string{"update Secret ns/rw-output"},
			Check: func(t bosuntest.TB, out *unit.Outcome[*rwv1.RWExternal]) {
				if len(out.Events) > 0 {
					t.Errorf("events = %q, want none", out.Events)
				}
			},
		},
		unit.Case[*rwv1.RWExternal]{
			Name:          "deleting removes the output and lets the RWExternal go",
			Object:        rwExternal(nil),
			Deleting:      true,
			Given:         []client.Object{inputSecret(inputData), outputSecret("rw", wantData)},
			ExpectWrites:  []string{"delete Secret ns/rw-output", "patch RWExternal ns/rw"},
			ExpectEvents:  []string{`Normal CleanedUp cleaned up and released finalizer "rwexternal.bosun.dev/output"`},
			ExpectGone:    []client.Object{rwExternal(nil), outputSecret("rw", nil)},
			ExpectObjects: []client.Object{inputSecret(inputData)},
		},
		unit.Case[*rwv1.RWExternal]{
			Name:          "deleting leaves a Secret written for someone else",
			Object:        rwExternal(nil),
			Deleting:      true,
			Given:         []client.Object{outputSecret("other", wantData)},
			ExpectWrites:  []string{"patch RWExternal ns/rw"},
			ExpectGone:    []client.Object{rwExternal(nil)},
			ExpectObjects: []client.Object{outputSecret("other", wantData)},
		},
		unit.Case[*rwv1.RWExternal]{
			Name:             "an output that cannot be deleted keeps the finalizer",
			Object:           rwExternal(nil),
			Deleting:         true,
			Given:            []client.Object{outputSecret("rw", wantData)},
			Interceptor:      failSecrets(serverError, "delete"),
			ExpectErr:        deleteError,
			ExpectWrites:     []string{"delete Secret ns/rw-output", "patch status RWExternal ns/rw"},
			ExpectEvents:     []string{"Warning " + string(conditions.ReasonError) + " " + deleteError},
			ExpectConditions: []metav1.Condition{failed(deleteError)},
			ExpectObjects:    []client.Object{outputSecret("rw", wantData)},
			Check:            keeps(""),
		},
		unit.Case[*rwv1.RWExternal]{
			Name:          "under detach-on-delete the output stays behind",
			Object:        rwExternal(map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicyDetachOnDelete)}),
			Deleting:      true,
			Given:         []client.Object{outputSecret("rw", wantData)},
			ExpectWrites:  []string{"patch RWExternal ns/rw"},
			ExpectEvents:  []string{`Normal Detached released finalizer "rwexternal.bosun.dev/output" without cleanup`},
			ExpectGone:    []client.Object{rwExternal(nil)},
			ExpectObjects: []client.Object{outputSecret("rw", wantData)},
		},
	)
}

// TestObserve runs the reconciler under the skip policy, for each state the
// output Secret can be in: it reports what it sees in OutputReady and Ready,
// and writes nothing but the status.
func TestObserve(t *testing.T) {
	skip := map[string]string{bosun.AnnotationReconcilePolicy: string(bosun.PolicySkip)}
	observed := func(status metav1.ConditionStatus, reason conditions.Reason, message string) []metav1.Condition {
		readyReason, readyMessage := reason, `reconcile policy "skip": observed, not changed: `+message
		if status == metav1.ConditionTrue {
			readyReason, readyMessage = conditions.ReasonSucceeded, `reconcile policy "skip": observed, not changed`
		}
		return []metav1.Condition{
			inputRead,
			cond(rwv1.ConditionOutputReady, status, reason, message),
			cond(conditions.TypeReady, status, readyReason, readyMessage),
		}
	}
	observe := func(name string, output *corev1.Secret, want []metav1.Condition) unit.Case[*rwv1.RWExternal] {
		c := unit.Case[*rwv1.RWExternal]{
			Name:             name,
			Object:           rwExternal(skip),
			Given:            []client.Object{inputSecret(inputData)},
			ExpectWrites:     []string{"patch status RWExternal ns/rw"},
			ExpectEvents:     []string{`Normal ReconcileSkipped reconcile policy "skip": only observing`},
			ExpectConditions: want,
			Check: func(t bosuntest.TB, out *unit.Outcome[*rwv1.RWExternal]) {
				if len(out.Object.Finalizers) > 0 {
					t.Errorf("finalizers = %v, want none under skip", out.Object.Finalizers)
				}
			},
		}
		if output == nil {
			c.ExpectGone = []client.Object{outputSecret("rw", nil)}
		} else {
			c.Given = append(c.Given, output)
			c.ExpectObjects = []client.Object{output}
		}
		return c
	}
	unit.Run(t, unit.Scheme(t, AddToScheme), NewReconciler,
		observe("missing", nil,
			observed(metav1.ConditionFalse, rwv1.ReasonOutputMissing, `secret "rw-output" does not exist`)),
		observe("someone else's", outputSecret("other", wantData),
			observed(metav1.ConditionFalse, rwv1.ReasonOutputNotOwned, notOwned("rw-output"))),
		observe("out of date", outputSecret("rw", map[string][]byte{"USER": []byte("old")}),
			observed(metav1.ConditionFalse, rwv1.ReasonOutputOutOfDate, `secret "rw-output" does not hold the output of the current input`)),
		observe("up to date", outputSecret("rw", wantData),
			observed(metav1.ConditionTrue, rwv1.ReasonOutputUpToDate, `secret "rw-output" holds the output of the current input`)),
	)
}
