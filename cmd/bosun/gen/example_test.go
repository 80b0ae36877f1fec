package gen_test

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/bosunkit/bosun/cmd/bosun/dsl"
	"github.com/bosunkit/bosun/cmd/bosun/gen"
)

// OutputName names the file the generated code of a document belongs in.
func ExampleOutputName() {
	fmt.Println(gen.OutputName("api/cronjob.bosun"))
	// Output:
	// zz_generated.cronjob.go
}

// Generate turns a checked document into Go source. This one names only
// built-in kinds, so it needs neither binds nor Go types; the example prints
// the declarations of the generated file.
func ExampleGenerate() {
	src := []byte(`decl FrontendManager for Deployment {
	state {
		svc Service {
			name=${target.Name}-svc
			owned
		}
	}
	action {
		SyncService(svc) writes Service(create, patch)
	}
}
`)
	f, err := dsl.Parse("frontend.bosun", src)
	if err != nil {
		fmt.Println(err)
		return
	}
	spec, err := dsl.Check(f, dsl.CheckOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := gen.Generate(spec, gen.Options{Package: "frontend"})
	if err != nil {
		fmt.Println(err)
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "func ") || strings.HasPrefix(line, "type ") || strings.HasPrefix(line, "// +kubebuilder") {
			fmt.Println(strings.TrimSuffix(line, " {"))
		}
	}
	// Output:
	// // +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
	// // +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
	// // +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;update;patch
	// // +kubebuilder:rbac:groups=apps,resources=deployments/finalizers,verbs=update
	// // +kubebuilder:rbac:groups=apps,resources=deployments/status,verbs=get;update;patch
	// // +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
	// type FrontendManagerState struct
	// func NewFrontendManagerState(reader client.Reader, target *appsv1.Deployment) *FrontendManagerState
	// func (s *FrontendManagerState) Target() *appsv1.Deployment { return s.target }
	// func (s *FrontendManagerState) GetSvc(ctx context.Context) (*corev1.Service, error)
	// func (s *FrontendManagerState) fetchSvc(ctx context.Context) (*corev1.Service, error)
	// func (s *FrontendManagerState) Reset()
	// type FrontendManagerImpl interface
	// func IndexFrontendManagerFields(ctx context.Context, indexer client.FieldIndexer) error
	// func WatchFrontendManagerStates(b *bosun.Builder[*appsv1.Deployment]) *bosun.Builder[*appsv1.Deployment]
	// type FrontendManagerSteps struct
	// func NewFrontendManagerSteps(newImpl func(req *bosun.Pass[*appsv1.Deployment], state *FrontendManagerState) FrontendManagerImpl) *FrontendManagerSteps
	// func (s *FrontendManagerSteps) All() []bosun.Step[*appsv1.Deployment]
	// func (s *FrontendManagerSteps) SyncService() bosun.Step[*appsv1.Deployment]
	// func (s *FrontendManagerSteps) SetupWithBuilder(b *bosun.Builder[*appsv1.Deployment]) error
	// type frontendManagerPass struct
	// type frontendManagerStep struct
	// func (st frontendManagerStep) Name() string { return st.name }
	// func (st frontendManagerStep) Do(ctx context.Context, req *bosun.Pass[*appsv1.Deployment]) (ctrl.Result, error)
	// func (st frontendManagerStep) SetupWithBuilder(b *bosun.Builder[*appsv1.Deployment]) error
	// func (st frontendManagerStep) PolicyRules(*runtime.Scheme) ([]rbacv1.PolicyRule, error)
}

// GoTypes answers dsl.Check's questions about Go types by loading packages
// as the go command would in the given directory.
func ExampleGoTypes() {
	types := gen.NewGoTypes(".")
	fmt.Println(types.StringField("k8s.io/api/core/v1", "Pod", []string{"Spec", "NodeName"}))
	fmt.Println(types.StringField("k8s.io/api/core/v1", "Pod", []string{"Spec", "Priority"}))
	fmt.Println(types.JSONField("k8s.io/api/core/v1", "Pod", []string{"status", "phase"}))
	// Output:
	// <nil>
	// Spec.Priority is *int32, not a string
	// [Status Phase] <nil>
}
