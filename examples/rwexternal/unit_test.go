package rwexternal

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun"
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

// TestSecretMapper checks which RWExternals a Secret event reconciles.
func TestSecretMapper(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	rw := func(ns, name, input string) *rwv1.RWExternal {
		return &rwv1.RWExternal{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: rwv1.RWExternalSpec{InputSecret: input}}
	}
	c := fake.NewClientBuilder().WithScheme(s).
		WithIndex(&rwv1.RWExternal{}, InputSecretIndex, func(o client.Object) []string {
			return []string{o.(*rwv1.RWExternal).Spec.InputSecret}
		}).
		WithObjects(rw("a", "one", "creds"), rw("a", "two", "creds"), rw("a", "three", "other"), rw("b", "four", "creds")).
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
			for _, r := range (secretMapper{c: c}).requests(t.Context(), tt.secret) {
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

// TestObserveOutput checks what writeOutput reports under the skip policy,
// for each state the output Secret can be in.
func TestObserveOutput(t *testing.T) {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	data, err := Derive(map[string][]byte{"user": []byte("admin")})
	if err != nil {
		t.Fatal(err)
	}
	secret := func(owner string, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rw-output", Annotations: map[string]string{OwnerAnnotation: owner}},
			Type:       corev1.SecretTypeOpaque,
			Data:       data,
		}
	}
	tests := []struct {
		name   string
		output *corev1.Secret
		want   metav1.Condition
	}{
		{name: "missing", want: metav1.Condition{Status: metav1.ConditionFalse, Reason: rwv1.ReasonOutputMissing,
			Message: `secret "rw-output" does not exist`}},
		{name: "someone else's", output: secret("other", data), want: metav1.Condition{Status: metav1.ConditionFalse, Reason: rwv1.ReasonOutputNotOwned,
			Message: `secret "rw-output" exists and was not written for this RWExternal (no rwexternal.bosun.dev/owner annotation naming it)`}},
		{name: "out of date", output: secret("rw", map[string][]byte{"USER": []byte("old")}), want: metav1.Condition{Status: metav1.ConditionFalse, Reason: rwv1.ReasonOutputOutOfDate,
			Message: `secret "rw-output" does not hold the output of the current input`}},
		{name: "up to date", output: secret("rw", data), want: metav1.Condition{Status: metav1.ConditionTrue, Reason: rwv1.ReasonOutputUpToDate,
			Message: `secret "rw-output" holds the output of the current input`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(s)
			if tt.output != nil {
				b = b.WithObjects(tt.output)
			}
			c := b.Build()
			rw := &rwv1.RWExternal{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rw", Generation: 3}, Spec: rwv1.RWExternalSpec{InputSecret: "in"}}
			req := &bosun.Pass[*rwv1.RWExternal]{Object: rw, Client: c, Values: &bosun.Values{}}
			outputData.Set(req.Values, data)
			res, err := writeOutput{}.Observe(t.Context(), req)
			if err != nil || !res.IsZero() {
				t.Fatalf("Observe = %+v, %v; want a zero result and no error", res, err)
			}
			got := conditions.Find(rw.Status.Conditions, rwv1.ConditionOutputReady)
			if got == nil {
				t.Fatal("no OutputReady condition")
			}
			want := tt.want
			want.Type, want.ObservedGeneration = rwv1.ConditionOutputReady, 3
			if diff := cmp.Diff(want, *got, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
				t.Errorf("OutputReady (-want +got):\n%s", diff)
			}
			// Observing writes nothing.
			if tt.output != nil {
				after := &corev1.Secret{}
				if err := c.Get(t.Context(), client.ObjectKeyFromObject(tt.output), after); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.output.Data, after.Data); diff != "" {
					t.Errorf("output data changed (-before +after):\n%s", diff)
				}
			}
		})
	}
}
