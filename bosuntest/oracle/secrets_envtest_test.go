package oracle_test

import (
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/internal/testapi"
)

// coreEvent makes a core/v1 Event about w.
func coreEvent(t *testing.T, c client.Client, w *testapi.Widget, name, reason, message string) {
	t.Helper()
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: w.Namespace, Name: name},
		InvolvedObject: corev1.ObjectReference{APIVersion: testapi.GroupVersion.String(), Kind: "Widget", Namespace: w.Namespace, Name: w.Name, UID: w.UID},
		Type:           corev1.EventTypeNormal,
		Reason:         reason,
		Message:        message,
		Source:         corev1.EventSource{Component: "oracle-test"},
	}
	if err := c.Create(t.Context(), e); err != nil {
		t.Fatalf("creating core event %s: %v", name, err)
	}
}

// newEvent makes an events.k8s.io/v1 Event about w.
func newEvent(t *testing.T, c client.Client, w *testapi.Widget, name, reason, note string) {
	t.Helper()
	e := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: w.Namespace, Name: name},
		EventTime:           metav1.NowMicro(),
		ReportingController: "test.bosun.dev/oracle",
		ReportingInstance:   "oracle-test",
		Action:              "Reconcile",
		Reason:              reason,
		Regarding:           corev1.ObjectReference{APIVersion: testapi.GroupVersion.String(), Kind: "Widget", Namespace: w.Namespace, Name: w.Name, UID: w.UID},
		Note:                note,
		Type:                corev1.EventTypeNormal,
	}
	if err := c.Create(t.Context(), e); err != nil {
		t.Fatalf("creating events.k8s.io event %s: %v", name, err)
	}
}

func TestNoSecrets(t *testing.T) {
	cp := shared.ControlPlane(t)
	c := cp.Client
	b64 := base64.StdEncoding.EncodeToString([]byte(password))

	// A namespace with events and widgets that hold no secret: the oracle
	// passes.
	clean := bosuntest.Namespace(t, c)
	w := createWidget(t, c, clean, "clean")
	setReady(t, c, w, "True", "Succeeded", "role app ready", w.Generation, 0)
	coreEvent(t, c, w, "created", "Created", "created role app")
	newEvent(t, c, w, "synced", "Synced", "password set")
	scope := oracle.Scope{Namespaces: []string{clean}, Lists: []client.ObjectList{&testapi.WidgetList{}}}
	if err := oracle.NoSecrets(t.Context(), c, []string{password}, scope); err != nil {
		t.Fatalf("NoSecrets over a clean namespace: %v", err)
	}

	// A namespace where the password shows in events, a status and an
	// annotation, in clear and in base64.
	ns := bosuntest.Namespace(t, c)
	leaky := createWidget(t, c, ns, "leaky")
	setReady(t, c, leaky, "False", "AuthFailed", "login with "+password+" refused", leaky.Generation, 0)
	base := leaky.DeepCopy()
	leaky.Annotations = map[string]string{"test.bosun.dev/last-password": b64}
	leaky.Labels = map[string]string{"app": "db"}
	if err := c.Patch(t.Context(), leaky, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	tidy := createWidget(t, c, ns, "tidy")
	setReady(t, c, tidy, "True", "Succeeded", "", tidy.Generation, 0)
	coreEvent(t, c, leaky, "core-leak", "Failed", "password "+password+" refused")
	coreEvent(t, c, tidy, "core-tidy", "Created", "created")
	newEvent(t, c, leaky, "new-leak", "Failed", "data "+b64)

	logs := []bosuntest.LogEntry{{Message: "connecting", Values: []any{"password", password}}}
	scope = oracle.Scope{Logs: logs, Namespaces: []string{clean, ns}, Lists: []client.ObjectList{&testapi.WidgetList{}}}
	err := oracle.NoSecrets(t.Context(), c, []string{password}, scope)
	checkErr(t, err, []error{oracle.ErrSecretFound}, []string{
		"in 5 places",
		`secret "hu…" in log line 0 ("connecting") value of "password"`,
		`secret "hu…" in Event ` + ns + `/core-leak note`,
		`base64 of secret "hu…" in Event ` + ns + `/new-leak note`,
		`secret "hu…" in Widget ` + ns + `/leaky status.conditions[0].message`,
		`base64 of secret "hu…" in Widget ` + ns + `/leaky annotation "test.bosun.dev/last-password"`,
	})
	unwanted(t, err, []string{password, base64.RawStdEncoding.EncodeToString([]byte(password)), "tidy", clean})
	// The events are served by both APIs; each is named once.
	for _, name := range []string{"core-leak", "new-leak"} {
		if n := strings.Count(err.Error(), name); n != 1 {
			t.Errorf("%s named %d times, want once:\n%v", name, n, err)
		}
	}

	if err := oracle.NoSecrets(t.Context(), c, []string{password}, oracle.Scope{Lists: scope.Lists}); err == nil {
		t.Error("NoSecrets with lists and no namespaces passed, want it refused")
	}
}
