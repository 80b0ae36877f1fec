package operator_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/operator"
)

// offDuringPass is a step that, in each pass, looks for what a manager
// under --plan must not run: a listener on any of addrs, and a Lease in
// ns (read with c, a client of its own). It cleans up, so that a pass
// claims the Widget, which records an event when events are on.
type offDuringPass struct {
	c     client.Client
	ns    string
	addrs map[string]string // what listens there when it is on -> address

	mu     *sync.Mutex
	passes *int
	found  *[]string
}

func (s offDuringPass) Do(ctx context.Context, _ *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	var found []string
	for what, addr := range s.addrs {
		d := net.Dialer{Timeout: time.Second}
		if conn, err := d.DialContext(ctx, "tcp", addr); err == nil {
			conn.Close()
			found = append(found, fmt.Sprintf("the %s listens on %s", what, addr))
		}
	}
	var leases coordinationv1.LeaseList
	if err := s.c.List(ctx, &leases, client.InNamespace(s.ns)); err != nil {
		return ctrl.Result{}, err
	}
	for _, l := range leases.Items {
		found = append(found, "Lease "+l.Name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	*s.passes++
	*s.found = append(*s.found, found...)
	return ctrl.Result{}, nil
}

func (offDuringPass) Cleanup(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

// TestPlanRunsNoLeaderElectionProbesOrWebhooks runs --plan of an operator
// with webhooks, with the flags that turn on leader election, the probe
// and metrics servers and set the webhook port: while the controllers
// pass, nothing listens on any of the three addresses and no Lease exists,
// and after the run there is still no Lease and no event. A manager that
// runs them has its servers listening, and its Lease held, before any
// controller starts (controller-runtime starts the HTTP servers and the
// webhook server before the caches, and the controllers of an elected
// manager once it holds the Lease). The webhook certificate directory is
// empty: a webhook server that started would fail, and the run with it.
func TestPlanRunsNoLeaderElectionProbesOrWebhooks(t *testing.T) {
	cp := shared.ControlPlane(t)
	useKubeconfig(t, cp)
	ns := bosuntest.Namespace(t, cp.Client)
	ctx := t.Context()
	w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 1}}
	if err := cp.Client.Create(ctx, w); err != nil {
		t.Fatal(err)
	}

	flags := planFlags()
	flags.Plan = true
	flags.LeaderElect = true
	flags.LeaderElectionID = "plan-" + ns
	flags.LeaderElectionNamespace = ns
	flags.ProbeAddr = freeAddr(t)
	flags.MetricsAddr = freeAddr(t)
	flags.SecureMetrics = false
	webhookAddr := freeAddr(t)
	_, port, err := net.SplitHostPort(webhookAddr)
	if err != nil {
		t.Fatal(err)
	}
	if flags.WebhookPort, err = strconv.Atoi(port); err != nil {
		t.Fatal(err)
	}
	flags.WebhookCertPath = t.TempDir()

	var mu sync.Mutex
	passes, found := 0, []string{}
	step := offDuringPass{
		c:  cp.Client,
		ns: ns,
		addrs: map[string]string{
			"probe server":   flags.ProbeAddr,
			"metrics server": flags.MetricsAddr,
			"webhook server": webhookAddr,
		},
		mu: &mu, passes: &passes, found: &found,
	}
	opts := withWebhooks(stepsOperator("plan-off", ns, step))

	runCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out := &syncBuffer{}
	if err := operator.Run(runCtx, opts, flags, out); err != nil {
		t.Fatalf("--plan: %v\n%s", err, out.String())
	}
	t.Logf("--plan printed:\n%s", out.String())

	mu.Lock()
	defer mu.Unlock()
	if passes == 0 {
		t.Fatal("no pass of the Widget ran under --plan")
	}
	if len(found) > 0 {
		t.Errorf("during --plan's passes: %v; want no listener and no Lease", found)
	}
	var leases coordinationv1.LeaseList
	if err := cp.Client.List(ctx, &leases, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(leases.Items) > 0 {
		t.Errorf("after --plan the namespace holds %d Leases (%s first); want none", len(leases.Items), leases.Items[0].Name)
	}
	var events eventsv1.EventList
	if err := cp.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var coreEvents corev1.EventList
	if err := cp.Client.List(ctx, &coreEvents, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if n := len(events.Items) + len(coreEvents.Items); n > 0 {
		t.Errorf("after --plan the namespace holds %d events; want none", n)
	}
}
