package gen

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/cmd/bosun/dsl"
)

// checkDoc parses and checks src without Go types.
func checkDoc(t *testing.T, src string) *dsl.Spec {
	t.Helper()
	f, err := dsl.Parse("doc.bosun", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	spec, err := dsl.Check(f, dsl.CheckOptions{})
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	return spec
}

func TestOutputName(t *testing.T) {
	tests := []struct{ source, want string }{
		{"cronjob.bosun", "zz_generated.cronjob.go"},
		{"api/v1/cronjob.bosun", "zz_generated.cronjob.go"},
		{"my.app.bosun", "zz_generated.my.app.go"},
		{"noext", "zz_generated.noext.go"},
	}
	for _, tt := range tests {
		if got := OutputName(tt.source); got != tt.want {
			t.Errorf("OutputName(%q) = %q, want %q", tt.source, got, tt.want)
		}
	}
}

func TestResourceName(t *testing.T) {
	tests := []struct{ kind, want string }{
		{"Pod", "pods"},
		{"Endpoints", "endpoints"},
		{"Ingress", "ingresses"},
		{"NetworkPolicy", "networkpolicies"},
		{"Gateway", "gateways"},
		{"Box", "boxes"},
		{"Batch", "batches"},
		{"Mesh", "meshes"},
		{"CronJob", "cronjobs"},
		{"Y", "ys"},
	}
	for _, tt := range tests {
		if got := resourceName(tt.kind); got != tt.want {
			t.Errorf("resourceName(%q) = %q, want %q", tt.kind, got, tt.want)
		}
	}
}

func TestImportNames(t *testing.T) {
	kinds := []*dsl.Kind{
		{Group: "apps.example.com", Version: "v1", Package: "example.com/apps/v1"},
		{Group: "apps", Version: "v1", Package: "k8s.io/api/apps/v1"},
		{Group: "", Version: "v1", Package: "k8s.io/api/core/v1"},
		{Group: "", Version: "v1", Package: "k8s.io/api/core/v1"},
		{Group: "networking.k8s.io", Version: "v1", Package: "k8s.io/api/networking/v1"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Package: "k8s.io/api/rbac/v1"},
		{Group: "coordination.k8s.io", Version: "v1", Package: "k8s.io/api/coordination/v1"},
		{Group: "batch", Version: "v1", Package: "k8s.io/api/batch/v1"},
		{Group: "cronjob.bosun.dev", Version: "v1beta2", Package: "example.com/cronjob/api"},
		{Group: "meta.example.com", Version: "v1", Package: "example.com/meta"},
		{Group: "3scale.net", Version: "v1", Package: "example.com/threescale"},
		{Group: "my-app.io", Version: "v1", Package: "example.com/myapp"},
		{Group: "apps.example.com", Version: "v1", Package: "example.com/fork/apps/v1"},
	}
	s := newImportSet(kinds)
	want := map[string]string{
		"k8s.io/api/apps/v1":         "appsv1",
		"example.com/apps/v1":        "appsexamplecomv1",
		"example.com/fork/apps/v1":   "appsexamplecomv1x2",
		"k8s.io/api/core/v1":         "corev1",
		"k8s.io/api/networking/v1":   "networkingv1",
		"k8s.io/api/rbac/v1":         "rbacv1",
		"k8s.io/api/coordination/v1": "coordinationv1",
		"k8s.io/api/batch/v1":        "batchv1",
		"example.com/cronjob/api":    "cronjobv1beta2",
		"example.com/meta":           "metaexamplecomv1", // metav1 is taken by the apimachinery import
		"example.com/threescale":     "api3scalev1",
		"example.com/myapp":          "myappv1",
	}
	got := make(map[string]string)
	for path := range want {
		got[path] = s.names[path]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("import names (-want +got):\n%s", diff)
	}
	// The order of the kinds must not matter.
	for i, j := 0, len(kinds)-1; i < j; i, j = i+1, j-1 {
		kinds[i], kinds[j] = kinds[j], kinds[i]
	}
	if diff := cmp.Diff(s.names, newImportSet(kinds).names); diff != "" {
		t.Errorf("import names depend on the order of the kinds (-first +reversed):\n%s", diff)
	}
}

func TestGenerateErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		edit func(*dsl.Spec) // a change Check would refuse
		want string
	}{
		{
			name: "getters clash",
			src: `decl M for Deployment {
	state {
		jobs []Job {
			owned
		}
		jobs2 []Job {
			owned
		}
	}
}
`,
			edit: func(s *dsl.Spec) { s.Decls[0].States[1].Name = "Jobs" },
			want: "doc.bosun:6:3: states jobs and Jobs of decl M both make the getter GetJobs",
		},
		{
			name: "not an identifier",
			src: `decl M for Deployment {
	state {
		jobs []Job {
			owned
		}
	}
	action {
		A()
	}
}
`,
			edit: func(s *dsl.Spec) {
				s.Decls[0].States[0].Name = "my-jobs"
				s.Decls[0].Actions[0].Name = "a.b"
			},
			want: "doc.bosun:3:3: state name my-jobs is not a Go identifier\ndoc.bosun:8:3: action name a.b is not a Go identifier",
		},
		{
			name: "field path without Go types",
			src: `decl M for Deployment {
	state {
		pods []Pod {
			fields/.spec.nodeName=a
		}
	}
}
`,
			want: "doc.bosun:4:4: field .spec.nodeName of state pods has no Go field path; check the document with Go types",
		},
		{
			name: "action named State",
			src: `decl M for Deployment {
	action {
		State()
	}
}
`,
			want: "doc.bosun:3:3: generated name MState of the name constant of action State of decl M is also the name of decl M",
		},
		{
			name: "action named SetupWithBuilder",
			src: `decl M for Deployment {
	action {
		Sync()
		SetupWithBuilder()
	}
}
`,
			want: "doc.bosun:4:3: action SetupWithBuilder of decl M makes the method SetupWithBuilder, as does the steps' SetupWithBuilder method",
		},
		{
			name: "action named all",
			src: `decl M for Deployment {
	action {
		all()
	}
}
`,
			want: "doc.bosun:3:3: action all of decl M makes the method All, as does the steps' All method",
		},
		{
			name: "both reserved names",
			src: `decl M for Deployment {
	action {
		All()
		setupWithBuilder()
	}
}
`,
			want: "doc.bosun:3:3: action All of decl M makes the method All, as does the steps' All method\n" +
				"doc.bosun:4:3: action setupWithBuilder of decl M makes the method SetupWithBuilder, as does the steps' SetupWithBuilder method",
		},
		{
			name: "actions differing in case",
			src: `decl M for Deployment {
	action {
		sync()
		Sync()
	}
}
`,
			want: "doc.bosun:4:3: action Sync of decl M makes the method Sync, as does action sync",
		},
		{
			name: "names across decls",
			src: `decl Web for Deployment {
	action {
		ManagerState()
	}
}

decl WebManager for Deployment {
}
`,
			want: "doc.bosun:7:6: generated name WebManagerState of decl WebManager is also the name of the name constant of action ManagerState of decl Web",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := checkDoc(t, tt.src)
			if tt.edit != nil {
				tt.edit(spec)
			}
			out, err := Generate(spec, Options{Package: "p"})
			if err == nil {
				t.Fatalf("Generate succeeded, want error %q; output:\n%s", tt.want, out)
			}
			var list dsl.ErrorList
			if !errors.As(err, &list) {
				t.Errorf("error %T is not a dsl.ErrorList", err)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGenerateOptions(t *testing.T) {
	spec := checkDoc(t, "decl M for Pod {\n}\n")
	for _, pkg := range []string{"", "_", "func", "my-pkg", "1p"} {
		if _, err := Generate(spec, Options{Package: pkg}); err == nil {
			t.Errorf("Generate with package %q succeeded, want an error", pkg)
		}
	}
	if _, err := Generate(nil, Options{Package: "p"}); err == nil {
		t.Error("Generate(nil) succeeded, want an error")
	}

	out, err := Generate(spec, Options{Package: "p"})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(out), "\n", 4)
	want := []string{header, "// Source: doc.bosun", ""}
	if diff := cmp.Diff(want, lines[:3]); diff != "" {
		t.Errorf("header with the source from the spec (-want +got):\n%s", diff)
	}
	out, err = Generate(spec, Options{Package: "p", Source: "other.bosun"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), header+"\n// Source: other.bosun\n\npackage p\n") {
		t.Errorf("header with Options.Source:\n%s", out[:80])
	}
}

func TestGenerateEmptySpec(t *testing.T) {
	out, err := Generate(&dsl.Spec{}, Options{Package: "empty", Source: "empty.bosun"})
	if err != nil {
		t.Fatal(err)
	}
	want := header + "\n// Source: empty.bosun\n\npackage empty\n"
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestValueExpressions checks how selector values become Go expressions,
// with and without Go types to tell plain strings from named ones.
func TestValueExpressions(t *testing.T) {
	src := `bind cronjob.bosun.dev/v1 github.com/bosunkit/bosun/cmd/bosun/gen/internal/testapi
alias T cronjob.bosun.dev/v1/Target

decl M for T {
	state {
		a Service {
			name=${target.Name}-${target.Spec.ServiceName}
		}
		b Service {
			name="x${target.Status.Phase}"
		}
		d Service {
			name=${target.ObjectMeta.Namespace}
		}
	}
}
`
	f, err := dsl.Parse("doc.bosun", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := dsl.Check(f, dsl.CheckOptions{Types: goTypes})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		types *GoTypes
		want  []string
	}{
		{nil, []string{
			`t.Name + "-" + string(t.Spec.ServiceName)`,
			`"x" + string(t.Status.Phase)`,
			`t.ObjectMeta.Namespace`,
		}},
		{goTypes, []string{
			`t.Name + "-" + t.Spec.ServiceName`,
			`"x" + string(t.Status.Phase)`,
			`t.ObjectMeta.Namespace`,
		}},
	}
	for _, tt := range tests {
		g := newGenerator(spec)
		g.types = tt.types
		if err := g.plan(); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range g.decls[0].States {
			got = append(got, g.value(g.decls[0], s.Spec.ObjectName, "t"))
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("with types %v (-want +got):\n%s", tt.types != nil, diff)
		}
	}
}

func TestLeadingComments(t *testing.T) {
	src := `// Not the decl's: a blank line follows.

// About M,
// in two lines.
decl M for Deployment {
	state {
		// About pods.
		pods []Pod { // not about pods
			owned
		}
	}
	action {
	// Wrong column: not about A.
		A(pods)
		// About B.
		//
		// With a second paragraph.
		B()
	}
}
`
	out, err := Generate(checkDoc(t, src), Options{Package: "p"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"listed.\n//\n// About M,\n// in two lines.\ntype MSteps struct",
		"reads again.\n//\n// About pods.\nfunc (s *MState) GetPods(",
		"// A implements the action A.\n\tA(",
		"// B implements the action B.\n\t//\n\t// About B.\n\t//\n\t// With a second paragraph.\n\tB(",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, unwanted := range []string{"Not the decl's", "not about pods", "Wrong column"} {
		if strings.Contains(string(out), unwanted) {
			t.Errorf("output has %q", unwanted)
		}
	}
}

// TestImportsUsedBy checks that a generated file imports the packages its
// code refers to, and not the names that comments, strings or selectors
// hold.
func TestImportsUsedBy(t *testing.T) {
	s := newImportSet([]*dsl.Kind{
		{Group: "batch", Version: "v1", Package: "k8s.io/api/batch/v1"},
		{Group: "", Version: "v1", Package: "k8s.io/api/core/v1"},
	})
	tests := []struct {
		name, body string
		want       [][]importSpec
	}{
		{"nothing", "func f() {}\n", nil},
		{
			"three groups",
			"var _ context.Context\nvar _ batchv1.Job\nvar _ bosun.Step\nvar _ = fmt.Sprint\nvar _ = fmt.Sprintln\n",
			[][]importSpec{
				{{Path: "context"}, {Path: "fmt"}},
				{{Name: "batchv1", Path: "k8s.io/api/batch/v1"}},
				{{Path: "github.com/bosunkit/bosun"}},
			},
		},
		{"comments and literals", "// fmt.Sprintf and bosun.Step\nvar _ = \"corev1.Pod\\\" fmt.X\" + `sync.Mutex` /* client.Object */\nvar _ = '.'\n", nil},
		{"selectors", "func f(s S) { _ = s.client.Get; _ = s.metav1 }\n", nil},
		{"names without a period", "func f(client ...int) []int { return append([]int{client[0]}, client...) }\n", nil},
		{"numbers", "var _ = 1.5 + 0x1p-2 + ctrl.X\n", [][]importSpec{{{Path: "sigs.k8s.io/controller-runtime", Name: "ctrl"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, s.usedBy(tt.body)); diff != "" {
				t.Errorf("imports (-want +got):\n%s", diff)
			}
		})
	}
}
