package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/cmd/bosun/internal/explain"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/debugpage"
	"github.com/bosunkit/bosun/examples/memcached"
	cachev1 "github.com/bosunkit/bosun/examples/memcached/api/v1alpha1"
	"github.com/bosunkit/bosun/examples/simple"
	simplev1 "github.com/bosunkit/bosun/examples/simple/api/v1alpha1"
	"github.com/bosunkit/bosun/internal/testapi"
)

// explainFinalizer is the finalizer of the Widget reconciler of the
// explain tests, and explainBuild the build it records on its Widgets.
const (
	explainFinalizer = "test.bosun.dev/explain"
	explainBuild     = "v1.2.3"
)

// stuckCleanup is a step whose Cleanup fails, as an external system that
// refuses a delete would.
type stuckCleanup struct{}

func (stuckCleanup) Do(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, nil
}

func (stuckCleanup) Cleanup(context.Context, *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	return ctrl.Result{}, conditions.Warningf("ExternalRefused", "the external system refuses the delete")
}

// explainCluster is what the explain tests run against: a control plane
// with kube-controller-manager and no nodes (so pods stay Pending), the
// CRDs of the simple and memcached examples and of Widget, their
// controllers in one manager, and the debug page of that manager served
// over HTTP.
type explainCluster struct {
	cp         *controlplane.ControlPlane
	kubeconfig string
	debugURL   string
}

func startExplainCluster(t *testing.T) *explainCluster {
	t.Helper()
	scheme := controlplane.NewScheme()
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, add := range []func() error{
		func() error { return simple.AddToScheme(scheme) },
		func() error { return memcached.AddToScheme(scheme) },
		func() error { return testapi.AddToScheme(scheme) },
		func() error { c, err := simple.CRDs(); crds = append(crds, c...); return err },
		func() error { c, err := memcached.CRDs(); crds = append(crds, c...); return err },
		func() error { c, err := testapi.CRD(); crds = append(crds, c); return err },
	} {
		if err := add(); err != nil {
			t.Fatal(err)
		}
	}
	cp := bosuntest.Start(t, controlplane.Options{Scheme: scheme, CRDs: crds, ControllerManager: true})
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	page := debugpage.New(debugpage.Options{})
	// The manager logs its errors only: the explanations are what a
	// failure must show.
	quiet := func(o *ctrl.Options) { o.Logger = logr.New(errorsOnly{o.Logger.GetSink()}) }
	bosuntest.RunManagerWith(t, cp, bosuntest.ManagerOptions{Configure: quiet}, func(mgr ctrl.Manager) error {
		page.Observe(bosun.ObservationOf(mgr))
		if err := simple.SetupWithManager(mgr); err != nil {
			return err
		}
		if err := memcached.SetupWithManager(mgr); err != nil {
			return err
		}
		return bosun.ControllerManagedBy[*testapi.Widget](mgr).Complete(&bosun.Reconciler[*testapi.Widget]{
			Name:      "explain-widget",
			Finalizer: explainFinalizer,
			Steps:     []bosun.Step[*testapi.Widget]{stuckCleanup{}},
			Options:   bosun.Options{DeletionDeadline: time.Second, KStatus: true, Build: explainBuild},
		})
	})
	mux := http.NewServeMux()
	mux.Handle(debugpage.Path, page)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &explainCluster{cp: cp, kubeconfig: kubeconfig, debugURL: srv.URL}
}

// errorsOnly is a log sink that drops every info line and keeps the
// errors.
type errorsOnly struct{ logr.LogSink }

func (errorsOnly) Enabled(int) bool { return false }

func (s errorsOnly) WithValues(kv ...any) logr.LogSink {
	return errorsOnly{s.LogSink.WithValues(kv...)}
}

func (s errorsOnly) WithName(name string) logr.LogSink { return errorsOnly{s.LogSink.WithName(name)} }

// explain runs `bosun explain` in process against the cluster, with args
// and -n ns.
func (c *explainCluster) explain(t *testing.T, ns string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return run(t, append([]string{"explain", "--kubeconfig", c.kubeconfig, "-n", ns}, args...)...)
}

// waitExplained runs `bosun explain` until its output holds every one of
// want, and returns it.
func (c *explainCluster) waitExplained(t *testing.T, ns string, args []string, want ...string) string {
	t.Helper()
	var out string
	bosuntest.Eventually(t, func(context.Context) error {
		stdout, stderr, err := c.explain(t, ns, args...)
		if err != nil && !errors.Is(err, errReported) {
			return fmt.Errorf("bosun explain: %w\n%s", err, stderr)
		}
		out = stdout
		for _, w := range want {
			if !strings.Contains(stdout, w) {
				return fmt.Errorf("the explanation lacks %q:\n%s", w, stdout)
			}
		}
		return nil
	}, bosuntest.Timeout(time.Minute), bosuntest.Interval(250*time.Millisecond))
	return out
}

// explainWaitCondition waits until obj, read again and again, has a condition
// typ of status and reason.
func explainWaitCondition(t *testing.T, c client.Client, obj client.Object, typ string, status metav1.ConditionStatus, reason conditions.Reason) {
	t.Helper()
	bosuntest.Eventually(t, func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		co, ok := obj.(conditions.Object)
		if !ok {
			return fmt.Errorf("%T keeps no conditions", obj)
		}
		cond := conditions.Find(co.GetConditions(), typ)
		if cond == nil || cond.Status != status || cond.Reason != string(reason) {
			return fmt.Errorf("%s is %+v, want %s (%s)", typ, cond, status, reason)
		}
		return nil
	}, bosuntest.Timeout(time.Minute))
}

// explainCreate creates obj, failing the test if it cannot.
func explainCreate(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(t.Context(), obj); err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
}

// explainMustContain fails the test for every one of want that out lacks.
func explainMustContain(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("the explanation lacks %q:\n%s", w, out)
		}
	}
}

// TestExplain runs `bosun explain` against the examples in failing states
// and checks that each explanation names the cause.
func TestExplain(t *testing.T) {
	c := startExplainCluster(t)

	// A Simple with a zero divisor: Ready False with the reason and message
	// of the step's condition, exit status 1; a good one is Ready, exit 0.
	// Every way kubectl names the kind finds it.
	t.Run("simple zero divisor", func(t *testing.T) {
		t.Parallel()
		ns := bosuntest.Namespace(t, c.cp.Client)
		div := &simplev1.Simple{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "div"}, Spec: simplev1.SimpleSpec{Dividend: 17, Divisor: 0}}
		ok := &simplev1.Simple{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ok"}, Spec: simplev1.SimpleSpec{Dividend: 17, Divisor: 5}}
		explainCreate(t, c.cp.Client, div)
		explainCreate(t, c.cp.Client, ok)
		explainWaitCondition(t, c.cp.Client, div, conditions.TypeReady, metav1.ConditionFalse, simplev1.ReasonZeroDivisor)
		explainWaitCondition(t, c.cp.Client, ok, conditions.TypeReady, metav1.ConditionTrue, conditions.ReasonSucceeded)

		stdout, stderr, err := c.explain(t, ns, "simple/div")
		if !errors.Is(err, errReported) || stderr != "" {
			t.Fatalf("bosun explain simple/div: err %v, want errReported (exit status 1)\nstderr:\n%s", err, stderr)
		}
		t.Logf("bosun explain simple/div:\n%s", stdout)
		explainMustContain(t, stdout,
			"Simple "+ns+"/div: not Ready\n",
			"  Ready: False (ZeroDivisor) for ",
			": spec.divisor is zero; set it to another number\n",
			"  Generation 1: the status describes it.\n",
			"Failing conditions, worst first:\n  DivisorValid: False (ZeroDivisor) for ",
			"Reconcile policy: manage, the default (no bosun.dev/reconcile-policy on the object or on namespace "+ns+").\n",
		)
		// The simple example records no build.
		for _, absent := range []string{"Children", "Deletion", "External", "Debug page", "Last reconciled by"} {
			if strings.Contains(stdout, absent) {
				t.Errorf("the explanation has a %s section, which does not apply:\n%s", absent, stdout)
			}
		}

		stdout, _, err = c.explain(t, ns, "simple/ok")
		if err != nil || !strings.HasPrefix(stdout, "Simple "+ns+"/ok: Ready\n  Ready: True (Succeeded) for ") {
			t.Errorf("bosun explain simple/ok: err %v, want none and Ready:\n%s", err, stdout)
		}

		for _, kind := range []string{"simple", "simples", "Simple", "simp", "simples.simple.bosun.dev", "Simple.simple.bosun.dev", "simples.v1alpha1.simple.bosun.dev"} {
			stdout, _, err := c.explain(t, ns, kind, "div")
			if !errors.Is(err, errReported) || !strings.HasPrefix(stdout, "Simple "+ns+"/div: not Ready\n") {
				t.Errorf("bosun explain %s div: err %v\n%s", kind, err, stdout)
			}
		}

		// The debug page tells the passes over the object, and how they ended.
		stdout = c.waitExplained(t, ns, []string{"simple/div", "--debug-url", c.debugURL},
			"Debug page, reconciler simple, last passes, newest first:\n", " ago, Watch Create ", ": done; step ensureNonZeroDivisor (do) stopped the pass: zero divisor\n")
		t.Logf("bosun explain simple/div --debug-url %s:\n%s", c.debugURL, stdout)
	})

	// A Memcached whose pods cannot run (no node): the Deployment is listed
	// as not ready with its replica count and its pods.
	t.Run("memcached deployment not ready", func(t *testing.T) {
		t.Parallel()
		ns := bosuntest.Namespace(t, c.cp.Client)
		explainCreate(t, c.cp.Client, &cachev1.Memcached{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache"}, Spec: cachev1.MemcachedSpec{Size: 2}})
		stdout := c.waitExplained(t, ns, []string{"mc/cache"},
			"Memcached "+ns+"/cache: not Ready\n",
			"Children not ready (1 of 2):\n  Deployment cache: 0/2 replicas ready\n",
			"    pods: 2 Pending; cache-",
			": not scheduled yet\n",
			"  DeploymentReady: False (NotReady)",
		)
		t.Logf("bosun explain mc/cache:\n%s", stdout)
		if strings.Contains(stdout, "Service cache") {
			t.Errorf("the ready Service is listed as not ready:\n%s", stdout)
		}
	})

	// A Widget whose cleanup fails past the deletion deadline: the build
	// that reconciled it while it lived, the deletion, DeletionBlocked,
	// the way out, the Warning event, and on the debug page the failing
	// step. Released, the Widget is gone, and explain says so.
	t.Run("deletion blocked", func(t *testing.T) {
		t.Parallel()
		ns := bosuntest.Namespace(t, c.cp.Client)
		w := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: testapi.WidgetSpec{Value: 1}}
		explainCreate(t, c.cp.Client, w)
		explainWaitCondition(t, c.cp.Client, w, conditions.TypeReady, metav1.ConditionTrue, conditions.ReasonSucceeded)
		if err := c.cp.Client.Delete(t.Context(), w); err != nil {
			t.Fatal(err)
		}
		stdout := c.waitExplained(t, ns, []string{"widget/w", "--debug-url", c.debugURL},
			"Widget "+ns+"/w: not Ready, being deleted\n",
			"  Last reconciled by (controller=build): explain-widget="+explainBuild+" (bosun.dev/reconciled-by).\n",
			"Deletion asked ", "; finalizers: "+explainFinalizer+"\n",
			"  DeletionBlocked: True (ExternalRefused) for ",
			"kubectl annotate widgets.test.bosun.dev w -n "+ns+" bosun.dev/release-finalizer=true ",
			"kubectl annotate widgets.test.bosun.dev w -n "+ns+" bosun.dev/release-finalizer=orphan ",
			// The step's own ExternalRefused events repeat, so either may
			// be the newest warning.
			"Events, warnings first, newest first:\n  Warning ", "\n  Warning DeletionBlocked ",
			"Debug page, reconciler explain-widget, last passes, newest first:\n",
			"error in step stuckCleanup (cleanup): ", "the external system refuses the delete",
		)
		t.Logf("bosun explain widget/w --debug-url %s:\n%s", c.debugURL, stdout)

		patch := client.MergeFrom(w.DeepCopy())
		w.Annotations = map[string]string{bosun.AnnotationReleaseFinalizer: "orphan"}
		if err := c.cp.Client.Patch(t.Context(), w, patch); err != nil {
			t.Fatal(err)
		}
		bosuntest.Eventually(t, func(context.Context) error {
			_, _, err := c.explain(t, ns, "widget/w")
			if !errors.Is(err, explain.ErrNotFound) {
				return fmt.Errorf("bosun explain widget/w: %w, want not found", err)
			}
			if want := `widgets.test.bosun.dev "w" not found in namespace "` + ns + `"`; err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
			return nil
		}, bosuntest.Timeout(time.Minute))
	})

	// A Simple in a Namespace whose annotation pauses it: the policy, where
	// it comes from, and what it means; an object's own unknown policy is
	// named as such.
	t.Run("paused by its namespace", func(t *testing.T) {
		t.Parallel()
		ns := bosuntest.Namespace(t, c.cp.Client)
		nsObj := &corev1.Namespace{}
		if err := c.cp.Client.Get(t.Context(), client.ObjectKey{Name: ns}, nsObj); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(nsObj.DeepCopy())
		nsObj.Annotations = map[string]string{bosun.AnnotationReconcilePolicy: "skip"}
		if err := c.cp.Client.Patch(t.Context(), nsObj, patch); err != nil {
			t.Fatal(err)
		}
		paused := &simplev1.Simple{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "paused"}, Spec: simplev1.SimpleSpec{Dividend: 1, Divisor: 1}}
		bogus := &simplev1.Simple{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bogus", Annotations: map[string]string{bosun.AnnotationReconcilePolicy: "sometimes"}},
			Spec:       simplev1.SimpleSpec{Dividend: 1, Divisor: 1},
		}
		explainCreate(t, c.cp.Client, paused)
		explainCreate(t, c.cp.Client, bogus)
		explainWaitCondition(t, c.cp.Client, paused, conditions.TypeReady, metav1.ConditionFalse, conditions.ReasonReconcilePaused)
		explainWaitCondition(t, c.cp.Client, bogus, conditions.TypeReady, metav1.ConditionFalse, conditions.ReasonInvalidPolicy)

		stdout, _, err := c.explain(t, ns, "simple/paused")
		if !errors.Is(err, errReported) {
			t.Errorf("bosun explain simple/paused: err %v, want errReported", err)
		}
		t.Logf("bosun explain simple/paused:\n%s", stdout)
		explainMustContain(t, stdout,
			"  Ready: False (ReconcilePaused) for ",
			"Reconcile policy: skip, from namespace "+ns+" (bosun.dev/reconcile-policy).\n",
			"  The object is paused: the operator only observes it and writes nothing but its status.\n",
		)
		stdout, _, _ = c.explain(t, ns, "simple/bogus")
		explainMustContain(t, stdout,
			"  Ready: False (InvalidPolicy) for ",
			"Reconcile policy: sometimes, set on the object (bosun.dev/reconcile-policy).\n",
			`  "sometimes" is not a reconcile policy (manage, skip or detach-on-delete)`,
		)
	})

	// A debug page that does not answer is one line; the rest is said.
	t.Run("debug page unreachable", func(t *testing.T) {
		t.Parallel()
		ns := bosuntest.Namespace(t, c.cp.Client)
		s := &simplev1.Simple{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"}, Spec: simplev1.SimpleSpec{Dividend: 4, Divisor: 2}}
		explainCreate(t, c.cp.Client, s)
		explainWaitCondition(t, c.cp.Client, s, conditions.TypeReady, metav1.ConditionTrue, conditions.ReasonSucceeded)
		closed := explainHangUpAddress(t)
		stdout, stderr, err := c.explain(t, ns, "simple/s", "--debug-url", "http://"+closed)
		if err != nil {
			t.Fatalf("bosun explain: %v\n%s", err, stderr)
		}
		explainMustContain(t, stdout, "Simple "+ns+"/s: Ready\n", "Reconcile policy: manage", "Debug page: cannot read http://"+closed+"/debug/bosun/: ")
		if n := strings.Count(stdout, "Debug page"); n != 1 {
			t.Errorf("the debug page is named on %d lines, want 1:\n%s", n, stdout)
		}
	})

	// What does not exist is an error that names it.
	t.Run("unknown kind and missing object", func(t *testing.T) {
		t.Parallel()
		ns := bosuntest.Namespace(t, c.cp.Client)
		_, _, err := c.explain(t, ns, "gizmo/g")
		if !errors.Is(err, explain.ErrUnknownKind) || err.Error() != `the API server serves no resource type "gizmo"` {
			t.Errorf("bosun explain gizmo/g: %v", err)
		}
		_, _, err = c.explain(t, ns, "simple/nope")
		if !errors.Is(err, explain.ErrNotFound) || err.Error() != `simples.simple.bosun.dev "nope" not found in namespace "`+ns+`"` {
			t.Errorf("bosun explain simple/nope: %v", err)
		}
	})

	// As a user runs it: the exit status is 0 for a Ready object and 1 for
	// one that is not.
	t.Run("exit status", func(t *testing.T) {
		t.Parallel()
		ns := bosuntest.Namespace(t, c.cp.Client)
		good := &simplev1.Simple{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "good"}, Spec: simplev1.SimpleSpec{Dividend: 9, Divisor: 3}}
		bad := &simplev1.Simple{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bad"}, Spec: simplev1.SimpleSpec{Dividend: 9}}
		explainCreate(t, c.cp.Client, good)
		explainCreate(t, c.cp.Client, bad)
		explainWaitCondition(t, c.cp.Client, good, conditions.TypeReady, metav1.ConditionTrue, conditions.ReasonSucceeded)
		explainWaitCondition(t, c.cp.Client, bad, conditions.TypeReady, metav1.ConditionFalse, simplev1.ReasonZeroDivisor)
		dir := t.TempDir()
		for name, want := range map[string]int{"good": 0, "bad": statusNotReady} {
			stdout, stderr, status := runMain(t, dir, "explain", "simp/"+name, "-n", ns, "--kubeconfig", c.kubeconfig)
			if status != want || stderr != "" || !strings.HasPrefix(stdout, "Simple "+ns+"/"+name+": ") {
				t.Errorf("bosun explain simp/%s: status %d, want %d\nstdout:\n%s\nstderr:\n%s", name, status, want, stdout, stderr)
			}
		}
	})
}

// explainHangUpAddress returns the address of a local listener that
// closes every connection it accepts, a debug page that does not answer.
// It keeps its port while the test runs, so nothing else can take it.
func explainHangUpAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			_ = conn.Close()
		}
	}()
	return l.Addr().String()
}

// TestExplainUsage: a command line that cannot be run is refused with
// exit status 2, before any cluster is asked.
func TestExplainUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"nothing", nil, "bosun explain: give one object, as KIND/NAME\n"},
		{"three arguments", []string{"a", "b", "c"}, "bosun explain: give one object, as KIND/NAME\n"},
		{"no name", []string{"simple/"}, `bosun explain: "simple/" is not KIND/NAME` + "\n"},
		{"no kind", []string{"div"}, `bosun explain: "div" is not KIND/NAME` + "\n"},
		{"too many slashes", []string{"simple/a/b"}, `bosun explain: "simple/a/b" is not KIND/NAME` + "\n"},
		{"both forms", []string{"simple/a", "b"}, "bosun explain: give the object as KIND/NAME or as KIND NAME, not both\n"},
		{"unknown flag", []string{"simple/a", "--colour"}, "bosun explain: unknown flag: --colour\n"},
		{"bad debug URL", []string{"simple/a", "--debug-url", "localhost:8443"},
			`bosun explain: --debug-url: "localhost:8443" is not an http or https address of a metrics server, such as http://127.0.0.1:8080` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var status int
			cmd := explainCommand(func(code int) { status = code })
			var out, errOut bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&errOut)
			cmd.SetArgs(tt.args)
			err := cmd.Execute()
			if !errors.Is(err, errReported) || status != statusUsage {
				t.Errorf("err %v, exit status %d; want errReported and %d", err, status, statusUsage)
			}
			if diff := cmp.Diff(tt.want+"Run 'bosun explain --help' for usage.\n", errOut.String()); diff != "" {
				t.Errorf("stderr mismatch (-want +got):\n%s", diff)
			}
			if out.Len() != 0 {
				t.Errorf("stdout is not empty:\n%s", out.String())
			}
		})
	}

	// As a user runs it.
	stdout, stderr, status := runMain(t, t.TempDir(), "explain")
	if status != statusUsage || stdout != "" || !strings.HasPrefix(stderr, "bosun explain: give one object") {
		t.Errorf("bosun explain: status %d, want %d\nstdout:\n%s\nstderr:\n%s", status, statusUsage, stdout, stderr)
	}
}
