package oracle_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/internal/testapi"
)

// An inventory of an external system, as a test reads it after a run with
// crashes: the operator made two databases for one object, and one that it
// never marked.
func ExampleExternals_OnePer() {
	inventory := oracle.Inventory(func(context.Context) (oracle.Externals, error) {
		return oracle.Externals{
			{ID: "db-1", Owner: "uid-a"},
			{ID: "db-2", Owner: "uid-b"},
			{ID: "db-3", Owner: "uid-b"},
			{ID: "db-4"},
		}, nil
	})
	ext, err := inventory(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("duplicates:", ext.Duplicates())
	fmt.Println(ext.NoDuplicates())
	fmt.Println(ext.OnePer([]string{"uid-a", "uid-b", "uid-c"}))
	fmt.Println(ext.NoUnmarked())
	// After uid-a's object is deleted, its database must go too.
	fmt.Println(ext.NoneFor([]string{"uid-a"}))
	// Output:
	// duplicates: 1
	// oracle: owners with more than one external resource:
	// 	owner "uid-b": 2 resources ["db-2" "db-3"]
	// oracle: not one external resource per owner: owners without an external resource:
	// 	"uid-c"
	// owners with more than one external resource:
	// 	owner "uid-b": 2 resources ["db-2" "db-3"]
	// external resources of no expected owner:
	// 	resource "db-4": unmarked
	// oracle: external resources leaked without an owner mark:
	// 	resource "db-4": unmarked
	// oracle: external resources leaked for deleted owners:
	// 	resource "db-1": owner "uid-a"
}

// A conflict is a reason to requeue: an error line about one is reported.
func ExampleNoConflictErrors() {
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "widgets"}, "w1", errors.New(oracle.ConflictMessage))
	var logs bosuntest.LogRecorder
	log := logs.Logger().WithName("widget")
	log.Info("requeue after conflict", "err", conflict) // an info line is fine
	log.Error(errors.New("dial tcp: connection refused"), "reconcile failed")
	log.Error(fmt.Errorf("saving status: %w", conflict), "reconcile failed")
	fmt.Println(oracle.NoConflictErrors(logs.Entries()))
	// Output:
	// oracle: conflict logged as an error in 1 line:
	// 	line 2: ERROR widget: reconcile failed err="saving status: Operation cannot be fulfilled on widgets \"w1\": the object has been modified; please apply your changes to the latest version and try again"
}

// Secrets are named by their first two characters only.
func ExampleNoSecretsInLogs() {
	var logs bosuntest.LogRecorder
	logs.Logger().Info("connecting", "dsn", "postgres://app:s3cret-pass@db:5432/app")
	fmt.Println(oracle.NoSecretsInLogs([]string{"s3cret-pass"}, logs.Entries()))
	fmt.Println(oracle.NoSecretsInLogs([]string{"pw"}, nil))
	// Output:
	// oracle: secret values found in 1 place:
	// 	secret "s3…" in log line 0 ("connecting") value of "dsn"
	// oracle: secret 0 is 2 bytes long, under 6: secret value too short to look for
}

// After a run, a test checks that every Widget converged and that the
// operator then stays quiet.
func ExampleConverged() {
	var shared bosuntest.Shared // with testapi.ControlPlaneOptions, in TestMain
	testWidgets := func(t *testing.T) {
		cp := shared.ControlPlane(t)
		ns := bosuntest.Namespace(t, cp.Client)
		writes := &bosuntest.WriteCounter{} // wrapping the operator's client
		// ... run the operator, create Widgets in ns ...

		res, err := oracle.Converged(t.Context(), cp.Client, &testapi.WidgetList{}, time.Minute,
			oracle.ListOptions(client.InNamespace(ns)))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s", res) // "20/20 converged in 3.2s"
		if _, err := oracle.Quiet(t.Context(), writes, 2*time.Second); err != nil {
			t.Error(err)
		}
	}
	_ = testWidgets
}
