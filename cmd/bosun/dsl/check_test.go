package dsl

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCheckErrors(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		types Types
		want  []string
	}{{
		name: "binds",
		src: "bind v1 k8s.io/api/core/v1\n" +
			"bind Apps/v1 example.com/apps\n" +
			"bind apps/v1x example.com/apps\n" +
			"bind a/b/v1 example.com/apps\n" +
			"bind /v1 example.com/apps\n" +
			"bind batch/v1 example.com/a@b\n" +
			"bind cache/v1 .example.com/cache\n" +
			"bind v1 example.com/core\n",
		want: []string{
			"2:6: invalid group/version Apps/v1: group Apps is not a lower-case DNS subdomain",
			"3:6: invalid group/version apps/v1x: version v1x is not like v1, v1beta1 or v2alpha3",
			"4:6: invalid group/version a/b/v1: want GROUP/VERSION, or VERSION for the core group",
			"5:6: invalid group/version /v1: group is empty",
			"6:15: invalid Go package path example.com/a@b",
			"7:15: invalid Go package path .example.com/cache",
			"8:6: duplicate bind v1; first bound at line 1",
		},
	}, {
		name: "aliases",
		src: "bind example.com/v1 example.com/api/v1\n" +
			"alias Foo example.com/v1/Foo\n" +
			"alias foo-bar example.com/v1/Foo\n" +
			"alias A Pod\n" +
			"alias B a/b/c/d\n" +
			"alias C example.com/vx/Foo\n" +
			"alias D example.com/v1/foo\n" +
			"alias E other.com/v1/E\n" +
			"alias Foo example.com/v1/Bar\n" +
			"alias Pod v1/Pod\n" +
			"alias Job apps/v1/Job\n",
		want: []string{
			"3:7: invalid alias name foo-bar; want a Go identifier",
			"4:9: invalid group/version/kind Pod; want GROUP/VERSION/KIND, or VERSION/KIND for the core group",
			"5:9: invalid group/version/kind a/b/c/d; want GROUP/VERSION/KIND, or VERSION/KIND for the core group",
			"6:9: invalid group/version/kind example.com/vx/Foo: version vx is not like v1, v1beta1 or v2alpha3",
			"7:9: invalid kind foo in example.com/v1/foo; want an exported Go identifier",
			"8:9: group/version other.com/v1 of alias E is not bound; add bind other.com/v1 GO-PACKAGE",
			"9:7: duplicate alias Foo; first declared at line 2",
		},
	}, {
		name: "unknown kinds",
		src: "alias Broken nope/v1/Broken\n" +
			"decl M for Nope {\n" +
			"\tstate {\n" +
			"\t\tl []Other {}\n" +
			"\t\tb []Broken {}\n" +
			"\t}\n" +
			"}\n",
		want: []string{
			"1:14: group/version nope/v1 of alias Broken is not bound; add bind nope/v1 GO-PACKAGE",
			"2:12: unknown kind Nope; add alias Nope GROUP/VERSION/KIND",
			"4:7: unknown kind Other; add alias Other GROUP/VERSION/KIND",
		},
	}, {
		name: "decls",
		src: "decl M for Pod {}\n" +
			"decl M for Pod {}\n" +
			"decl N {}\n" +
			"decl my-decl for Pod {}\n" +
			"decl func for Pod {}\n",
		want: []string{
			"2:6: duplicate decl M; first declared at line 1",
			"3:6: decl N has no target; write `decl N for KIND`",
			"4:6: invalid decl name my-decl; want a Go identifier",
			"5:6: invalid decl name func; want a Go identifier",
		},
	}, {
		name: "states and actions",
		src: "decl M for Pod {\n" +
			"\tstate {\n" +
			"\t\tjobs []Job {}\n" +
			"\t\tjobs []Job {}\n" +
			"\t\tJobs []Job {}\n" +
			"\t\tmy-jobs []Job {}\n" +
			"\t}\n" +
			"\taction {\n" +
			"\t\tA(jobs)\n" +
			"\t\tA()\n" +
			"\t\tB(pods, jobs, jobs)\n" +
			"\t\tC.D()\n" +
			"\t}\n" +
			"\tstate {\n" +
			"\t\tlate []Pod {}\n" +
			"\t}\n" +
			"\taction {\n" +
			"\t\tE(late)\n" +
			"\t}\n" +
			"}\n" +
			"decl N for Pod {\n" +
			"\taction {\n" +
			"\t\tF(jobs)\n" +
			"\t}\n" +
			"}\n",
		want: []string{
			"4:3: duplicate state jobs in decl M; first declared at line 3",
			"5:3: state Jobs clashes with state jobs at line 3; the names differ only in the case of the first letter",
			"6:3: invalid state name my-jobs; want a Go identifier",
			"10:3: duplicate action A in decl M; first declared at line 9",
			"11:5: unknown state pods in action B",
			"11:17: state jobs named twice in action B",
			"12:3: invalid action name C.D; want a Go identifier",
			"23:5: unknown state jobs in action F",
		},
	}, {
		name: "selectors",
		src: "decl M for Pod {\n" +
			"\tstate {\n" +
			"\t\tl []Job {\n" +
			"\t\t\tname=x\n" +
			"\t\t\tlabels/app=a\n" +
			"\t\t\tlabels/app=b\n" +
			"\t\t\tlabels/-bad=c\n" +
			"\t\t\tlabels/example.com/ok=d\n" +
			"\t\t\tlabels/good=-bad-\n" +
			"\t\t\tlabels/long=\"0123456789012345678901234567890123456789012345678901234567890123\"\n" +
			"\t\t\tlabels/empty=\"\"\n" +
			"\t\t\tfields/.spec.x=1\n" +
			"\t\t\tfields/.spec.x=2\n" +
			"\t\t\tfields/spec=3\n" +
			"\t\t\tfields/.spec..x=4\n" +
			"\t\t\tfields/.metadata.controller=${target.Name}\n" +
			"\t\t\towned\n" +
			"\t\t\towned\n" +
			"\t\t}\n" +
			"\t\ts Service {\n" +
			"\t\t\tlabels/app=a\n" +
			"\t\t\tfields/.spec.x=1\n" +
			"\t\t}\n" +
			"\t\tt Service {\n" +
			"\t\t\tname=a\n" +
			"\t\t\tname=b\n" +
			"\t\t}\n" +
			"\t\tu Service {\n" +
			"\t\t\tname=\"\"\n" +
			"\t\t}\n" +
			"\t}\n" +
			"}\n",
		want: []string{
			"4:4: selector name is only for single-object states; state l is a list",
			"6:4: duplicate label requirement labels/app=b in state l",
			"7:11: invalid label key -bad; want [PREFIX/]NAME: a DNS subdomain prefix and a name of at most 63 letters, digits, -, _ or ., alphanumeric at both ends",
			"9:16: invalid label value -bad-; want at most 63 letters, digits, -, _ or ., alphanumeric at both ends",
			"10:16: invalid label value \"0123456789012345678901234567890...; want at most 63 letters, digits, -, _ or ., alphanumeric at both ends",
			"13:4: duplicate field path .spec.x in state l",
			"14:11: invalid field path spec; want .field.path, for example .spec.nodeName",
			"15:11: invalid field path .spec..x; want .field.path, for example .spec.nodeName",
			"18:4: duplicate owned in state l",
			"20:3: state s has no name selector; a single-object state needs name=VALUE",
			"21:4: selector labels/app is only for list states; state s is a single object",
			"22:4: selector fields/.spec.x is only for list states; state s is a single object",
			"26:4: duplicate name selector in state t",
			"29:9: empty name in state u",
		},
	}, {
		name: "set-based label selectors",
		src: "decl M for Pod {\n" +
			"\tstate {\n" +
			"\t\tl []Job {\n" +
			"\t\t\tlabels/a in (x, -y-, x)\n" +
			"\t\t\tlabels/a notin (z)\n" +
			"\t\t\tlabels/a notin (w)\n" +
			"\t\t\tlabels/b!=-c-\n" +
			"\t\t\tlabels/c\n" +
			"\t\t\t!labels/c\n" +
			"\t\t\t!labels/-d\n" +
			"\t\t}\n" +
			"\t\ts Service {\n" +
			"\t\t\tname=x\n" +
			"\t\t\t!labels/e\n" +
			"\t\t}\n" +
			"\t}\n" +
			"}\n",
		want: []string{
			"4:20: invalid label value -y-; want at most 63 letters, digits, -, _ or ., alphanumeric at both ends",
			"4:25: label value x named twice in labels/a in",
			"6:4: duplicate label requirement labels/a notin (w) in state l",
			"7:14: invalid label value -c-; want at most 63 letters, digits, -, _ or ., alphanumeric at both ends",
			"10:12: invalid label key -d; want [PREFIX/]NAME: a DNS subdomain prefix and a name of at most 63 letters, digits, -, _ or ., alphanumeric at both ends",
			"14:4: selector labels/e is only for list states; state s is a single object",
		},
	}, {
		name: "scopes",
		src: "alias Tenant example.com/v1/Tenant cluster\n" +
			"bind example.com/v1 example.com/api/v1\n" +
			"decl M for Pod {\n" +
			"\tstate {\n" +
			"\t\tnodes []Node {\n" +
			"\t\t\tnamespace=x\n" +
			"\t\t\towned\n" +
			"\t\t}\n" +
			"\t\tcm ConfigMap {\n" +
			"\t\t\tname=a\n" +
			"\t\t\tnamespace=Bad_NS\n" +
			"\t\t\tnamespace=b\n" +
			"\t\t\towned\n" +
			"\t\t}\n" +
			"\t\tjobs []Job {\n" +
			"\t\t\tnamespace=${target.Spec.NodeName}\n" +
			"\t\t\tfields/.metadata.controller=${target.Name}\n" +
			"\t\t}\n" +
			"\t\tempty []Job {\n" +
			"\t\t\tnamespace=\"\"\n" +
			"\t\t}\n" +
			"\t}\n" +
			"}\n" +
			"decl N for Tenant {\n" +
			"\tstate {\n" +
			"\t\tquota ResourceQuota {\n" +
			"\t\t\tname=${target.Name}\n" +
			"\t\t}\n" +
			"\t\tpods []Pod {\n" +
			"\t\t\towned\n" +
			"\t\t}\n" +
			"\t\tcm ConfigMap {\n" +
			"\t\t\tname=${target.Name}\n" +
			"\t\t\tnamespace=${target.Name}\n" +
			"\t\t\towned\n" +
			"\t\t}\n" +
			"\t}\n" +
			"}\n",
		want: []string{
			"6:4: selector namespace is for namespaced kinds; Node is cluster-scoped",
			"7:4: selector owned cannot hold for state nodes, cluster-scoped: a Pod controls only objects in its own namespace; leave out owned, or namespace",
			"11:14: invalid namespace Bad_NS; want a DNS label: at most 63 lower-case letters, digits or -, alphanumeric at both ends",
			"12:4: duplicate namespace selector in state cm",
			"13:4: selector owned cannot hold for state cm, in namespace Bad_NS: a Pod controls only objects in its own namespace; leave out owned, or namespace",
			"17:4: selector fields/.metadata.controller cannot hold for state jobs, in namespace ${target.Spec.NodeName}: a Pod controls only objects in its own namespace",
			"20:14: empty namespace in state empty",
			"26:3: state quota needs namespace=VALUE: ResourceQuota is namespaced and the target Tenant is cluster-scoped, so there is no target namespace to read it in",
		},
	}, {
		name: "writes",
		src: "decl M for Pod {\n" +
			"\taction {\n" +
			"\t\tA() writes Job(create, delete), Nope(create)\n" +
			"\t\tB() writes Job(create, get, create), Job(patch)\n" +
			"\t\tC() writes Job()\n" +
			"\t}\n" +
			"}\n",
		want: []string{
			"3:35: unknown kind Nope; add alias Nope GROUP/VERSION/KIND",
			"4:26: unknown verb get for Job; want one of create, update, patch, delete, deletecollection",
			"4:31: verb create named twice for Job",
			"4:40: kind Job written twice by action B; first at column 14, name every verb there",
			"5:14: no verbs for Job in the writes of action C; want Job(create | update | patch | delete | deletecollection, ...)",
		},
	}, {
		name: "references and field paths with types",
		src: "alias Foo example.com/v1/Foo\n" +
			"bind example.com/v1 example.com/api/v1\n" +
			"decl M for Foo {\n" +
			"\tstate {\n" +
			"\t\tl []Job {\n" +
			"\t\t\tlabels/a=${target.Name}\n" +
			"\t\t\tlabels/b=x-${target.Spec.Count}-${target.Spec.Name}\n" +
			"\t\t\tfields/.spec.nodeName=${target.Spec.Nope}\n" +
			"\t\t\tfields/.spec.missing=x\n" +
			"\t\t\tfields/.metadata.controller=${target.Name}\n" +
			"\t\t}\n" +
			"\t\ts Service {\n" +
			"\t\t\tname=${target.Status}\n" +
			"\t\t}\n" +
			"\t}\n" +
			"}\n" +
			"decl N for Unknown {\n" +
			"\tstate {\n" +
			"\t\ts Service {\n" +
			"\t\t\tname=${target.Anything}\n" +
			"\t\t}\n" +
			"\t}\n" +
			"}\n",
		types: fakeTypes{
			strings: map[string]bool{
				"example.com/api/v1.Foo:Name":      true,
				"example.com/api/v1.Foo:Spec.Name": true,
			},
			fields: map[string][]string{
				"k8s.io/api/batch/v1.Job:spec.nodeName": {"Spec", "NodeName"},
			},
		},
		want: []string{
			"7:15: invalid reference ${target.Spec.Count}: Foo has no string field Spec.Count",
			"8:26: invalid reference ${target.Spec.Nope}: Foo has no string field Spec.Nope",
			"9:11: invalid field path .spec.missing for Job: Job has no string field at spec.missing",
			"13:9: invalid reference ${target.Status}: Foo has no string field Status",
			"17:12: unknown kind Unknown; add alias Unknown GROUP/VERSION/KIND",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("", []byte(tt.src))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			spec, err := Check(f, CheckOptions{Types: tt.types})
			if spec != nil {
				t.Errorf("Check returned a spec with errors")
			}
			if diff := cmp.Diff(tt.want, errorStrings(t, err)); diff != "" {
				t.Errorf("Check errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckWithoutTypesSkipsTypeChecks(t *testing.T) {
	src := "decl M for Pod {\n\tstate {\n\t\tl []Job {\n\t\t\tlabels/a=${target.Nope}\n\t\t\tfields/.spec.nope=x\n\t\t}\n\t}\n}\n"
	f, err := Parse("", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Check(f, CheckOptions{})
	if err != nil {
		t.Fatalf("Check without Types: %v", err)
	}
	if got := spec.Decls[0].States[0].Fields[0].GoPath; got != nil {
		t.Errorf("GoPath without Types = %v, want nil", got)
	}
}

func TestCheckCronJob(t *testing.T) {
	src, err := os.ReadFile("testdata/cronjob.bosun")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("cronjob.bosun", src)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Check(f, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cronJob := &Kind{Name: "CronJob", Group: "cronjob.bosun.dev", Version: "v1", Kind: "CronJob", Package: "github.com/bosunkit/bosun/examples/cronjob/api/v1"}
	job := &Kind{Name: "Job", Group: "batch", Version: "v1", Kind: "Job", Package: "k8s.io/api/batch/v1"}
	d := f.decls[0]
	st := d.States[0]
	jobs := &StateSpec{
		node:      st,
		Pos:       st.Name.Pos,
		Name:      "jobs",
		Kind:      job,
		List:      true,
		Selectors: []string{"labels/cronjob=${target.Name}", "fields/.metadata.controller=${target.Name}", "owned"},
		Labels: []Requirement{
			{Pos: st.Selectors[0].Pos, Key: "cronjob", Value: st.Selectors[0].Value},
		},
		Fields: []Requirement{
			{Pos: st.Selectors[1].Pos, Key: ControllerField, Value: st.Selectors[1].Value},
		},
		Owned: true,
	}
	action := func(i int, name string, states ...*StateSpec) *ActionSpec {
		return &ActionSpec{node: d.Actions[i], Pos: d.Actions[i].Name.Pos, Name: name, States: states}
	}
	want := &Spec{Filename: "cronjob.bosun", Comments: f.comments, Decls: []*DeclSpec{{
		node:    d,
		Pos:     d.Pos,
		NamePos: d.Name.Pos,
		Name:    "CronJobControllerManager",
		Target:  cronJob,
		States:  []*StateSpec{jobs},
		Actions: []*ActionSpec{
			action(0, "ListActiveJobsAndUpdateStatus", jobs),
			action(1, "CleanUpOldJobsExceedsHistoryLimits", jobs),
			action(2, "RunNextScheduledJob"),
			action(3, "UpdateCronJobStatus"),
		},
	}}}
	if diff := cmp.Diff(want, spec, cmp.AllowUnexported(DeclSpec{}, StateSpec{}, ActionSpec{})); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	if got := spec.Decls[0].States[0].Labels[0].Value.Parts; len(got) != 1 || cmp.Diff([]string{"Name"}, got[0].Ref) != "" {
		t.Errorf("label value parts = %+v, want one reference to Name", got)
	}
}

func TestCheckKinds(t *testing.T) {
	src := "bind batch/v1 example.com/mybatch\n" +
		"bind example.com/v1beta2 example.com/api\n" +
		"alias Pod example.com/v1beta2/Widget\n" +
		"alias Svc v1/Service\n" +
		"decl M for Pod {\n" +
		"\tstate {\n" +
		"\t\tjobs []Job {}\n" +
		"\t\tsvc Svc { name=${target.Name} }\n" +
		"\t\tdeploys []Deployment {}\n" +
		"\t}\n" +
		"}\n"
	f, err := Parse("", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	types := fakeTypes{strings: map[string]bool{"example.com/api.Widget:Name": true}}
	spec, err := Check(f, CheckOptions{Types: types})
	if err != nil {
		t.Fatal(err)
	}
	got := []*Kind{spec.Decls[0].Target}
	for _, s := range spec.Decls[0].States {
		got = append(got, s.Kind)
	}
	want := []*Kind{
		{Name: "Pod", Group: "example.com", Version: "v1beta2", Kind: "Widget", Package: "example.com/api"},
		{Name: "Job", Group: "batch", Version: "v1", Kind: "Job", Package: "example.com/mybatch", Builtin: true},
		{Name: "Svc", Version: "v1", Kind: "Service", Package: "k8s.io/api/core/v1"},
		{Name: "Deployment", Group: "apps", Version: "v1", Kind: "Deployment", Package: "k8s.io/api/apps/v1", Builtin: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
}

func TestCheckScopesAndWrites(t *testing.T) {
	src := "alias Tenant example.com/v1/Tenant cluster\n" +
		"bind example.com/v1 example.com/api/v1\n" +
		"decl M for Pod {\n" +
		"\tstate {\n" +
		"\t\tlocal []Pod {\n" +
		"\t\t\tlabels/a in (x, ${target.Name})\n" +
		"\t\t\t!labels/b\n" +
		"\t\t}\n" +
		"\t\tshared ConfigMap {\n" +
		"\t\t\tname=settings\n" +
		"\t\t\tnamespace=${target.Spec.NodeName}\n" +
		"\t\t}\n" +
		"\t\tnode Node {\n" +
		"\t\t\tname=${target.Spec.NodeName}\n" +
		"\t\t}\n" +
		"\t}\n" +
		"\taction {\n" +
		"\t\tA(local) writes Pod(delete, patch), Tenant(update)\n" +
		"\t}\n" +
		"}\n" +
		"decl N for Tenant {\n" +
		"\tstate {\n" +
		"\t\tpods []Pod {\n" +
		"\t\t\towned\n" +
		"\t\t}\n" +
		"\t}\n" +
		"}\n"
	f, err := Parse("", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Check(f, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type state struct {
		Name      string
		Scope     Scope
		Namespace string
		Labels    []string
	}
	var got []state
	for _, d := range spec.Decls {
		for _, s := range d.States {
			st := state{Name: s.Name, Scope: s.Scope}
			if s.Namespace != nil {
				st.Namespace = s.Namespace.Raw
			}
			for _, r := range s.Labels {
				vals := []string{}
				for _, v := range r.Values {
					vals = append(vals, v.Raw)
				}
				st.Labels = append(st.Labels, r.Key+" "+r.Op.String()+" "+strings.Join(vals, ","))
			}
			got = append(got, st)
		}
	}
	want := []state{
		{Name: "local", Scope: TargetScope, Labels: []string{"a in x,${target.Name}", "b !exists "}},
		{Name: "shared", Scope: NamespaceScope, Namespace: "${target.Spec.NodeName}"},
		{Name: "node", Scope: ClusterScope},
		{Name: "pods", Scope: AllNamespacesScope},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if !spec.Decls[1].Target.Cluster {
		t.Errorf("Tenant is not cluster-scoped")
	}
	var writes []string
	for _, w := range spec.Decls[0].Actions[0].Writes {
		writes = append(writes, w.Kind.Name+":"+strings.Join(w.Verbs, ","))
	}
	if diff := cmp.Diff([]string{"Pod:delete,patch", "Tenant:update"}, writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}

func TestCheckGoPath(t *testing.T) {
	src := "decl M for Pod {\n\tstate {\n\t\tl []Pod {\n\t\t\tfields/.spec.nodeName=${target.Spec.NodeName}\n\t\t}\n\t}\n}\n"
	f, err := Parse("", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	types := fakeTypes{
		strings: map[string]bool{"k8s.io/api/core/v1.Pod:Spec.NodeName": true},
		fields:  map[string][]string{"k8s.io/api/core/v1.Pod:spec.nodeName": {"Spec", "NodeName"}},
	}
	spec, err := Check(f, CheckOptions{Types: types})
	if err != nil {
		t.Fatal(err)
	}
	want := []Requirement{{Pos: Pos{Offset: 41, Line: 4, Column: 4}, Key: ".spec.nodeName", GoPath: []string{"Spec", "NodeName"}}}
	if diff := cmp.Diff(want, spec.Decls[0].States[0].Fields, cmpopts.IgnoreFields(Requirement{}, "Value")); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

func TestCheckNil(t *testing.T) {
	if _, err := Check(nil, CheckOptions{}); err == nil {
		t.Error("Check(nil) = nil error, want one")
	}
}

// TestCheckPartialFile checks what Parse kept of a broken document: a decl
// whose name is missing is reported at its decl keyword, once, and not as
// a duplicate of another nameless one.
func TestCheckPartialFile(t *testing.T) {
	src := "decl{\n}\n  decl {\n}\n"
	f, err := Parse("doc.bosun", []byte(src))
	if err == nil {
		t.Fatal("Parse accepted decls without names")
	}
	_, err = Check(f, CheckOptions{})
	want := []string{
		"doc.bosun:1:1: decl has no name; write `decl NAME for KIND`",
		"doc.bosun:3:3: decl has no name; write `decl NAME for KIND`",
	}
	if diff := cmp.Diff(want, errorStrings(t, err)); diff != "" {
		t.Errorf("Check errors (-want +got):\n%s", diff)
	}
}

func TestBuiltins(t *testing.T) {
	var names []string
	for _, k := range builtinList() {
		names = append(names, k.Name)
		if !k.Builtin || k.Name != k.Kind || k.Version != "v1" {
			t.Errorf("built-in kind %+v: want Builtin, Name == Kind, version v1", k)
		}
	}
	want := []string{
		"ClusterRole", "ClusterRoleBinding",
		"ConfigMap", "ControllerRevision", "CronJob", "DaemonSet", "Deployment", "Endpoints", "Event",
		"Ingress", "IngressClass", "Job", "Lease", "LimitRange", "Namespace", "NetworkPolicy", "Node",
		"PersistentVolume", "PersistentVolumeClaim", "Pod",
		"PodTemplate", "ReplicaSet", "ReplicationController", "ResourceQuota", "Role", "RoleBinding",
		"Secret", "Service", "ServiceAccount", "StatefulSet", "StorageClass",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("builtinList names (-want +got):\n%s", diff)
	}
	tests := []struct {
		name string
		want Kind
		ok   bool
	}{
		{"Pod", Kind{Name: "Pod", Version: "v1", Kind: "Pod", Package: "k8s.io/api/core/v1", Builtin: true}, true},
		{"Ingress", Kind{Name: "Ingress", Group: "networking.k8s.io", Version: "v1", Kind: "Ingress", Package: "k8s.io/api/networking/v1", Builtin: true}, true},
		{"RoleBinding", Kind{Name: "RoleBinding", Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding", Package: "k8s.io/api/rbac/v1", Builtin: true}, true},
		{"Lease", Kind{Name: "Lease", Group: "coordination.k8s.io", Version: "v1", Kind: "Lease", Package: "k8s.io/api/coordination/v1", Builtin: true}, true},
		{"Node", Kind{Name: "Node", Version: "v1", Kind: "Node", Package: "k8s.io/api/core/v1", Builtin: true, Cluster: true}, true},
		{"ClusterRole", Kind{Name: "ClusterRole", Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Package: "k8s.io/api/rbac/v1", Builtin: true, Cluster: true}, true},
		{"StorageClass", Kind{Name: "StorageClass", Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass", Package: "k8s.io/api/storage/v1", Builtin: true, Cluster: true}, true},
		{"Widget", Kind{}, false},
	}
	for _, tt := range tests {
		got, ok := lookupBuiltin(tt.name)
		if ok != tt.ok {
			t.Errorf("lookupBuiltin(%q) ok = %v, want %v", tt.name, ok, tt.ok)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("lookupBuiltin(%q) (-want +got):\n%s", tt.name, diff)
		}
	}
}
