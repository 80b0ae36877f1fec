package gen

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	testAPI = "github.com/bosunkit/bosun/cmd/bosun/gen/internal/testapi"
	coreV1  = "k8s.io/api/core/v1"
)

func TestStringField(t *testing.T) {
	tests := []struct {
		pkg, typ string
		path     []string
		wantErr  string // "" for success
	}{
		{testAPI, "Target", []string{"Name"}, ""},
		{testAPI, "Target", []string{"ObjectMeta", "Namespace"}, ""},
		{testAPI, "Target", []string{"Spec", "ServiceName"}, ""},
		{testAPI, "Target", []string{"Spec", "Template", "Queue"}, ""},
		{testAPI, "Target", []string{"Status", "Phase"}, ""},
		{testAPI, "Target", []string{"UID"}, ""},
		{testAPI, "Target", []string{"Spec", "Foo"}, "Target has no field Spec.Foo"},
		{testAPI, "Target", []string{"Spec", "HistoryLimit"}, "Spec.HistoryLimit is int32, not a string"},
		{testAPI, "Target", []string{"Spec", "Suspend"}, "Spec.Suspend is *bool, not a string"},
		{testAPI, "Target", []string{"Spec"}, "Spec is TargetSpec, not a string"},
		{testAPI, "Target", []string{"Status", "LastScheduleTime", "Time"}, "Status.LastScheduleTime is *v1.Time, not a struct; a reference goes through struct fields only"},
		{testAPI, "Target", []string{"Labels", "app"}, "Labels is map[string]string, not a struct; a reference goes through struct fields only"},
		{testAPI, "Target", []string{"spec"}, "Target field spec is not exported"},
		{testAPI, "Target", []string{"DeepCopy"}, "Target has no field DeepCopy"},
		{testAPI, "Target", nil, "empty field path"},
		{testAPI, "Nope", []string{"Name"}, "package " + testAPI + " has no type Nope"},
		{testAPI, "GroupVersion", []string{"Group"}, "package " + testAPI + " has no type GroupVersion"},
		{testAPI, "Phase", []string{"X"}, testAPI + ".Phase is string, not a struct"},
		{coreV1, "Pod", []string{"Spec", "NodeName"}, ""},
		{coreV1, "Pod", []string{"Status", "Phase"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.typ+"."+strings.Join(tt.path, "."), func(t *testing.T) {
			err := goTypes.StringField(tt.pkg, tt.typ, tt.path)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("StringField = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func TestJSONField(t *testing.T) {
	tests := []struct {
		pkg, typ string
		path     []string
		want     []string
		wantErr  string
	}{
		{coreV1, "Pod", []string{"spec", "nodeName"}, []string{"Spec", "NodeName"}, ""},
		{coreV1, "Pod", []string{"status", "phase"}, []string{"Status", "Phase"}, ""},
		{coreV1, "Pod", []string{"metadata", "name"}, []string{"ObjectMeta", "Name"}, ""},
		{coreV1, "Pod", []string{"kind"}, []string{"TypeMeta", "Kind"}, ""},
		{coreV1, "Pod", []string{"spec", "serviceAccountName"}, []string{"Spec", "ServiceAccountName"}, ""},
		{testAPI, "Target", []string{"spec", "template", "queue"}, []string{"Spec", "Template", "Queue"}, ""},
		{coreV1, "Pod", []string{"spec", "NodeName"}, nil, "Pod has no JSON field .spec.NodeName"},
		{coreV1, "Pod", []string{"spec", "replicas"}, nil, "Pod has no JSON field .spec.replicas"},
		{coreV1, "Pod", []string{"spec", "priority"}, nil, ".spec.priority is *int32, not a string"},
		{coreV1, "Pod", []string{"spec", "containers", "name"}, nil, ".spec.containers is []Container, not a struct; a field selector goes through struct fields only"},
		{coreV1, "Pod", []string{"metadata"}, nil, ".metadata is v1.ObjectMeta, not a string"},
		{coreV1, "Pod", nil, nil, "empty field path"},
	}
	for _, tt := range tests {
		t.Run(tt.typ+"."+strings.Join(tt.path, "."), func(t *testing.T) {
			got, err := goTypes.JSONField(tt.pkg, tt.typ, tt.path)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.wantErr {
				t.Errorf("JSONField error = %q, want %q", gotErr, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("JSONField Go path (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGoTypesCannotLoad(t *testing.T) {
	g := NewGoTypes(".")
	err := g.StringField("example.com/no/such/package", "T", []string{"Name"})
	if !errors.Is(err, ErrCannotLoad) {
		t.Fatalf("err = %v, want it to wrap ErrCannotLoad", err)
	}
	if want := "package example.com/no/such/package: cannot load: "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %q, want prefix %q", err, want)
	}
	// The failure is kept: the second question gets the same answer.
	_, err2 := g.JSONField("example.com/no/such/package", "T", []string{"name"})
	if err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second error = %v, want %v", err2, err)
	}
}

func TestGoTypesLoadsEachPackageOnce(t *testing.T) {
	g := NewGoTypes(".")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = g.StringField(testAPI, "Target", []string{"Spec", "ServiceName"}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	p1, err := g.load(testAPI)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := g.load(testAPI)
	if p1 != p2 || len(g.pkgs) != 1 {
		t.Errorf("package loaded more than once: %p, %p, %d cached", p1, p2, len(g.pkgs))
	}
}

func TestGoTypesPlainString(t *testing.T) {
	tests := []struct {
		path []string
		want bool
	}{
		{[]string{"Name"}, true},
		{[]string{"Spec", "ServiceName"}, true},
		{[]string{"Status", "Phase"}, false},
		{[]string{"UID"}, false},
		{[]string{"Spec", "HistoryLimit"}, false},
	}
	for _, tt := range tests {
		if got := goTypes.isPlainString(testAPI, "Target", tt.path); got != tt.want {
			t.Errorf("isPlainString(%v) = %v, want %v", tt.path, got, tt.want)
		}
	}
}
