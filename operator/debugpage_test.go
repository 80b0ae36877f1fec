package operator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/operator"
)

// TestRunDebugPage: with --debug-page the metrics server serves the debug
// page, which lists the operator's reconciler and the passes of an object
// it just reconciled.
func TestRunDebugPage(t *testing.T) {
	cp := shared.ControlPlane(t)
	useKubeconfig(t, cp)
	ns := bosuntest.Namespace(t, cp.Client)
	flags := operator.DefaultFlags()
	flags.ProbeAddr = "0"
	flags.MetricsAddr = freeAddr(t)
	flags.SecureMetrics = false
	flags.DebugPage = true
	start(t, widgets("paged", ns), flags)
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 3}}
	if err := cp.Client.Create(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	base := "http://" + flags.MetricsAddr + "/debug/bosun/"
	bosuntest.Eventually(t, func(ctx context.Context) error {
		body, err := getBody(ctx, base+"object?controller=paged&namespace="+ns+"&name=w&format=json")
		if err != nil {
			return err
		}
		var passes []bosun.PassReport
		if err := json.Unmarshal(body, &passes); err != nil {
			return err
		}
		if len(passes) == 0 {
			return errors.New("no pass of w on the debug page yet")
		}
		return nil
	})
	index, err := getBody(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"paged", "<svg"} {
		if !strings.Contains(string(index), want) {
			t.Errorf("the debug page's index lacks %q", want)
		}
	}
}

// TestDebugPageNeedsMetrics: --debug-page without a metrics server is a
// flag error.
func TestDebugPageNeedsMetrics(t *testing.T) {
	flags := operator.DefaultFlags()
	flags.DebugPage = true
	err := operator.Run(t.Context(), widgets("nopage", ""), flags, io.Discard)
	if !errors.Is(err, operator.ErrFlags) {
		t.Fatalf("Run with --debug-page and no metrics address: %v, want an error wrapping ErrFlags", err)
	}
}

// getBody GETs url and returns the body of a 200 OK.
func getBody(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return body, nil
}
