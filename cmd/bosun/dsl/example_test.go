package dsl_test

import (
	"fmt"
	"os"

	"github.com/bosunkit/bosun/cmd/bosun/dsl"
)

func Example() {
	src := []byte(`bind example.com/v1 example.com/api/v1
alias Site example.com/v1/Site

decl SiteManager for Site {
	state {
		service Service {
			name=${target.Name}-web
			owned
		}
		pods []Pod {
			labels/app=${target.Name}
		}
	}
	action {
		EnsureService(service)
		ReportPods(pods, service)
		Cleanup()
	}
}
`)
	f, err := dsl.Parse("site.bosun", src)
	if err != nil {
		dsl.PrintErrors(os.Stdout, err, src)
		return
	}
	spec, err := dsl.Check(f, dsl.CheckOptions{})
	if err != nil {
		dsl.PrintErrors(os.Stdout, err, src)
		return
	}
	for _, d := range spec.Decls {
		fmt.Printf("decl %s for %s (%s)\n", d.Name, d.Target.Kind, d.Target.Package)
		for _, s := range d.States {
			fmt.Printf("state %s: %s/%s list=%v owned=%v\n", s.Name, s.Kind.Version, s.Kind.Kind, s.List, s.Owned)
		}
		for _, a := range d.Actions {
			var names []string
			for _, s := range a.States {
				names = append(names, s.Name)
			}
			fmt.Printf("action %s%v\n", a.Name, names)
		}
	}
	// Output:
	// decl SiteManager for Site (example.com/api/v1)
	// state service: v1/Service list=false owned=true
	// state pods: v1/Pod list=true owned=false
	// action EnsureService[service]
	// action ReportPods[pods service]
	// action Cleanup[]
}

func ExamplePrintErrors() {
	src := []byte("decl M for Pod {\n\tstate {\n\t\tsvc Service {\n\t\t\towned\n\t\t}\n\t}\n}\n")
	f, err := dsl.Parse("m.bosun", src)
	if err == nil {
		_, err = dsl.Check(f, dsl.CheckOptions{})
	}
	dsl.PrintErrors(os.Stdout, err, src)
	// Output:
	// m.bosun:3:3: state svc has no name selector; a single-object state needs name=VALUE
	//		svc Service {
	//		^
}

func ExampleFormat() {
	f, err := dsl.Parse("m.bosun", []byte("decl M for Pod{action{Run( )}} // M runs.\nbind v1   k8s.io/api/core/v1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(dsl.Format(f)))
	// Output:
	// bind v1 k8s.io/api/core/v1
	//
	// decl M for Pod {
	// 	action {
	// 		Run()
	// 	}
	// } // M runs.
}
