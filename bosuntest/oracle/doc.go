// Package oracle checks properties that hold for any correct operator, so
// that a test can assert them after any run: a plain one, or one where
// package bosuntest/faults crashed managers and injected faults. Each
// oracle returns nil when its property holds and otherwise an error that
// names every object, write, log line or resource that breaks it.
//
// # Convergence
//
// Converged lists objects of any kind, typed or unstructured, until each
// passes a check or a bound passes. The default check, CheckReady, asks
// that the object is not being deleted and that its Ready condition is
// True for its current generation: the condition's observedGeneration and
// status.observedGeneration, each when present, equal metadata.generation,
// and one of them is present. WithCheck replaces it. Converged keeps
// polling while no object is listed, unless Count says how many to expect.
// It returns a Convergence: how long until the last object to converge was
// first seen converged (measured from the call), how many objects there
// were and how many converged. On failure it names each object left, with
// its Ready condition's status, reason and message.
//
// # Quiet
//
// Quiet waits an explicit period and returns the writes a WriteLog (a
// *bosuntest.WriteCounter, or a faults process) recorded during it; the
// writes recorded before the call are the baseline and not counted. Writes
// of Events and of Leases are not counted either: an operator at rest still
// records events and renews its leader lease. Any other write is an error:
// an operator whose objects have converged has nothing to write.
//
// # Logs
//
// NoConflictErrors reports the error lines of a bosuntest.LogRecorder that
// are about a 409 Conflict, by the error's type (apierrors.IsConflict,
// through wrapping) or by the API server's message ("the object has been modified"). A
// conflict is a reason to requeue, never an error line.
//
// # Secrets
//
// NoSecrets looks for secret values, and their base64 encodings, in log
// lines (message, error, every key and value), in the Events of given
// namespaces (core/v1 and events.k8s.io/v1: message, note, reason, action)
// and in the status, annotations and labels of objects of given kinds in
// those namespaces. NoSecretsInLogs does the log part alone. Empty values
// are ignored and values shorter than 6 bytes refused, since they
// would be found by chance. The error names each place a value was found
// and shows of the value only its first 2 characters and "…".
//
// # External resources
//
// A test describes what an operator made outside Kubernetes as Externals,
// a list of External, each with an ID and the Owner it was marked with
// (the owning object's UID or key; empty when unmarked), usually from an
// Inventory function it writes for that system. Their methods check them:
// NoDuplicates reports owners with more than one resource; OnePer wants
// exactly one per given owner and nothing else; NoneFor reports resources
// left for owners that were deleted; NoUnmarked reports resources with no
// owner mark, which no one will ever delete. Duplicates counts the extra
// resources, for a figure.
//
// # Deletion
//
// Gone waits until given objects are gone from the API server, their
// finalizers released, and names those still there with their finalizers
// and Ready condition. NoOrphans reports objects that still have an
// ownerReference to deleted owners: without the garbage collector
// (controlplane.Options.ControllerManager) it checks what the operator
// deleted itself; with it, that the collector could do its work.
//
// # Use
//
//	res, err := oracle.Converged(ctx, c, &v1.DatabaseList{}, time.Minute, oracle.ListOptions(client.InNamespace(ns)))
//	if err != nil {
//		t.Fatal(err)
//	}
//	t.Logf("converged in %s", res.Duration)
//	if _, err := oracle.Quiet(ctx, writes, 2*time.Second); err != nil {
//		t.Error(err)
//	}
//	if err := oracle.NoConflictErrors(logs.Entries()); err != nil {
//		t.Error(err)
//	}
//
// Maturity: stable. Every example's battery checks with it.
package oracle
