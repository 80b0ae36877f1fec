package debugpage_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/debugpage"
)

// A Page keeps the passes it is told of and serves them. In an operator,
// debugpage.Register(mgr) makes it observe the manager's reconcilers.
func Example() {
	page := debugpage.New(debugpage.Options{PassesPerObject: 5})
	page.ObservePass(context.Background(), bosun.PassReport{
		Controller: "shop",
		Object:     types.NamespacedName{Namespace: "default", Name: "corner"},
		Trigger:    bosun.Trigger{Kind: "Resync"},
		Start:      time.Now(),
		Steps:      []bosun.StepReport{{Name: "deployment", Phase: "do"}},
	})
	srv := httptest.NewServer(page)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + debugpage.Path + "object?controller=shop&namespace=default&name=corner")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(strings.Contains(string(body), "Resync"), strings.Contains(string(body), "deployment"))
	// Output: true true
}
