package dsl

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{{
		name: "empty",
		src:  "",
		want: "",
	}, {
		name: "scopes, set-based selectors and writes",
		src: "alias   T  example.com/v1/T   cluster // cluster-scoped\n" +
			"decl M for T {state{l []Pod{\n" +
			"namespace = ${target.Name}\n" +
			"labels/a  in(x,\"y z\" ,${target.Name}) // set\n" +
			"labels/b notin ( w )\n" +
			"labels/c != d\n" +
			"labels/e\n" +
			"  !labels/f // gone\n" +
			"}}action{A(l)   writes Job( create ,delete),ConfigMap(patch) // writes\n" +
			"}}\n",
		want: "alias T example.com/v1/T cluster // cluster-scoped\n" +
			"\n" +
			"decl M for T {\n" +
			"\tstate {\n" +
			"\t\tl []Pod {\n" +
			"\t\t\tnamespace=${target.Name}\n" +
			"\t\t\tlabels/a in (x, \"y z\", ${target.Name}) // set\n" +
			"\t\t\tlabels/b notin (w)\n" +
			"\t\t\tlabels/c!=d\n" +
			"\t\t\tlabels/e\n" +
			"\t\t\t!labels/f // gone\n" +
			"\t\t}\n" +
			"\t}\n" +
			"\n" +
			"\taction {\n" +
			"\t\tA(l) writes Job(create, delete), ConfigMap(patch) // writes\n" +
			"\t}\n" +
			"}\n",
	}, {
		name: "only comments",
		src:  "// a   \n\n\n\n// b\n",
		want: "// a\n\n// b\n",
	}, {
		name: "spacing and indentation",
		src: "  bind   v1    k8s.io/api/core/v1\n" +
			"alias   P   v1/Pod\n" +
			"decl M   for P{state{s Service{name = x}\n" +
			"l[]Job{owned}}action{A( s ,l,) B()}}\n",
		want: "bind v1 k8s.io/api/core/v1\n" +
			"\n" +
			"alias P v1/Pod\n" +
			"\n" +
			"decl M for P {\n" +
			"\tstate {\n" +
			"\t\ts Service {\n" +
			"\t\t\tname=x\n" +
			"\t\t}\n" +
			"\t\tl []Job {\n" +
			"\t\t\towned\n" +
			"\t\t}\n" +
			"\t}\n" +
			"\n" +
			"\taction {\n" +
			"\t\tA(s, l)\n" +
			"\t\tB()\n" +
			"\t}\n" +
			"}\n",
	}, {
		name: "groups in order, source order kept within a group",
		src: "decl B for Pod {}\n" +
			"alias Y v1/Pod\n" +
			"bind v1 example.com/core\n" +
			"decl A for Pod {}\n" +
			"alias X v1/Pod\n" +
			"bind apps/v1 example.com/apps\n",
		want: "bind v1 example.com/core\n" +
			"bind apps/v1 example.com/apps\n" +
			"\n" +
			"alias Y v1/Pod\n" +
			"alias X v1/Pod\n" +
			"\n" +
			"decl B for Pod {}\n" +
			"\n" +
			"decl A for Pod {}\n",
	}, {
		name: "blank lines kept, at most one",
		src: "bind v1 a.io/core\n\n\n\nbind apps/v1 a.io/apps\nbind batch/v1 a.io/batch\n" +
			"decl M for Pod {\n\n\taction {\n\n\t\tA()\n\n\n\t\tB()\n\t\tC()\n\n\t}\n\n}\n",
		want: "bind v1 a.io/core\n\nbind apps/v1 a.io/apps\nbind batch/v1 a.io/batch\n\n" +
			"decl M for Pod {\n\taction {\n\t\tA()\n\n\t\tB()\n\t\tC()\n\t}\n}\n",
	}, {
		name: "comments kept in place",
		src: "// Header.\n" +
			"\n" +
			"// About the decl.\n" +
			"decl M for Pod { // M\n" +
			"\t// About the state block.\n" +
			"\tstate { // states\n" +
			"\t\t// About s.\n" +
			"\t\ts Service { name=a } // s\n" +
			"\t\tl []Job {\n" +
			"\t\t\towned // only mine\n" +
			"\t\t\t// last in l\n" +
			"\t\t}\n" +
			"\t}\n" +
			"\taction {\n" +
			"\t\tA(s) // does A\n" +
			"\t\t// nothing after\n" +
			"\t}\n" +
			"} // end of M\n" +
			"// before the bind\n" +
			"bind v1 a.io/core // core\n" +
			"\n" +
			"// the end\n",
		want: "// Header.\n" +
			"\n" +
			"// before the bind\n" +
			"bind v1 a.io/core // core\n" +
			"\n" +
			"// About the decl.\n" +
			"decl M for Pod { // M\n" +
			"\t// About the state block.\n" +
			"\tstate { // states\n" +
			"\t\t// About s.\n" +
			"\t\ts Service {\n" +
			"\t\t\tname=a\n" +
			"\t\t} // s\n" +
			"\t\tl []Job {\n" +
			"\t\t\towned // only mine\n" +
			"\t\t\t// last in l\n" +
			"\t\t}\n" +
			"\t}\n" +
			"\n" +
			"\taction {\n" +
			"\t\tA(s) // does A\n" +
			"\t\t// nothing after\n" +
			"\t}\n" +
			"} // end of M\n" +
			"\n" +
			"// the end\n",
	}, {
		name: "empty bodies with comments stay open",
		src:  "decl M for Pod { // c\n}\ndecl N for Pod {\n// inside\n}\ndecl O for Pod {} // after\n",
		want: "decl M for Pod { // c\n}\n\ndecl N for Pod {\n\t// inside\n}\n\ndecl O for Pod {} // after\n",
	}, {
		name: "values as written",
		src: "decl M for Pod { state { l []Job {\n" +
			"labels/a = \"x y\\t${target.Name}\"\n" +
			"fields/.spec.x=a//b\n" +
			"name=${target.Name}}}}\n",
		want: "decl M for Pod {\n\tstate {\n\t\tl []Job {\n" +
			"\t\t\tlabels/a=\"x y\\t${target.Name}\"\n" +
			"\t\t\tfields/.spec.x=a//b\n" +
			"\t\t\tname=${target.Name}\n" +
			"\t\t}\n\t}\n}\n",
	}, {
		name: "decl without target",
		src:  "decl M{}",
		want: "decl M {}\n",
	}, {
		name: "carriage returns",
		src:  "bind v1 a.io/core // c \r\nalias P v1/Pod\r\n",
		want: "bind v1 a.io/core // c\n\nalias P v1/Pod\n",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("", []byte(tt.src))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := string(Format(f))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Format (-want +got):\n%s", diff)
			}
			f2, err := Parse("", []byte(got))
			if err != nil {
				t.Fatalf("Parse of the output: %v", err)
			}
			if diff := cmp.Diff(got, string(Format(f2))); diff != "" {
				t.Errorf("Format is not idempotent (-first +second):\n%s", diff)
			}
		})
	}
}

func TestFormatCronJob(t *testing.T) {
	src, err := os.ReadFile("testdata/cronjob.bosun")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("cronjob.bosun", src)
	if err != nil {
		t.Fatal(err)
	}
	want := "bind v1 k8s.io/api/core/v1\n" +
		"bind batch/v1 k8s.io/api/batch/v1\n" +
		"bind cronjob.bosun.dev/v1 github.com/bosunkit/bosun/examples/cronjob/api/v1\n" +
		"\n" +
		"alias CronJob cronjob.bosun.dev/v1/CronJob\n" +
		"alias Job batch/v1/Job\n" +
		"\n" +
		"// CronJobControllerManager declares all the actions needed by the CronJobController.\n" +
		"decl CronJobControllerManager for CronJob {\n" +
		"\tstate {\n" +
		"\t\tjobs []Job {\n" +
		"\t\t\tlabels/cronjob=${target.Name}\n" +
		"\t\t\tfields/.metadata.controller=${target.Name}\n" +
		"\t\t\towned\n" +
		"\t\t}\n" +
		"\t}\n" +
		"\n" +
		"\taction {\n" +
		"\t\t// List all active jobs, and update the status.\n" +
		"\t\tListActiveJobsAndUpdateStatus(jobs)\n" +
		"\n" +
		"\t\t// Clean up old jobs according to the history limit.\n" +
		"\t\tCleanUpOldJobsExceedsHistoryLimits(jobs)\n" +
		"\n" +
		"\t\t// Run the next job if it's on time, or otherwise we should wait\n" +
		"\t\t// until the next scheduled time.\n" +
		"\t\tRunNextScheduledJob()\n" +
		"\n" +
		"\t\t// Update status of CronJob.\n" +
		"\t\tUpdateCronJobStatus()\n" +
		"\t}\n" +
		"}\n"
	got := string(Format(f))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Format (-want +got):\n%s", diff)
	}
	f2, err := Parse("cronjob.bosun", []byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, string(Format(f2))); diff != "" {
		t.Errorf("Format is not idempotent (-first +second):\n%s", diff)
	}
}

func TestFormatNil(t *testing.T) {
	if got := Format(nil); got != nil {
		t.Errorf("Format(nil) = %q, want nil", got)
	}
}

func TestFormatBuiltFile(t *testing.T) {
	f := &File{
		binds: []*bindNode{{GroupVersion: ident{Name: "v1"}, Package: ident{Name: "k8s.io/api/core/v1"}}},
		decls: []*declNode{{
			Name:   ident{Name: "M"},
			Target: ident{Name: "Pod"},
			States: []*stateNode{{
				Name: ident{Name: "s"},
				Kind: ident{Name: "Service"},
				Selectors: []*selectorNode{
					{Kind: selName, Value: &Value{Raw: "${target.Name}"}},
					{Kind: selOwned},
				},
			}},
			Actions: []*actionNode{{Name: ident{Name: "A"}, States: []ident{{Name: "s"}}}},
		}},
	}
	want := "bind v1 k8s.io/api/core/v1\n" +
		"\n" +
		"decl M for Pod {\n" +
		"\tstate {\n" +
		"\t\ts Service {\n" +
		"\t\t\tname=${target.Name}\n" +
		"\t\t\towned\n" +
		"\t\t}\n" +
		"\t}\n" +
		"\n" +
		"\taction {\n" +
		"\t\tA(s)\n" +
		"\t}\n" +
		"}\n"
	if diff := cmp.Diff(want, string(Format(f))); diff != "" {
		t.Errorf("Format (-want +got):\n%s", diff)
	}
}
