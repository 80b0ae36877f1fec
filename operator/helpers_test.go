package operator_test

import (
	"flag"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/bosunkit/bosun/internal/testapi"
)

func ptrTo[T any](v T) *T { return &v }

func flagLookup(name string) *flag.Flag { return flag.CommandLine.Lookup(name) }

func clientConfig(path string) (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", path)
}

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := testapi.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}
