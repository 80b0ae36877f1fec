// Package unit runs a bosun reconciler, or a few steps, against an
// in-memory client in milliseconds, and compares what it did with what a
// table of cases expects: the result and error, the conditions, the
// writes, the events, and the objects left behind.
//
// Each Case gives the object reconciled and the other objects the client
// holds, and may inject faults into the client's calls with the hooks of
// controller-runtime's interceptor package. Reconcile runs one pass of the
// engine, claim and save included, and returns the Outcome; Run runs a
// table of cases as subtests and checks each case's expectations. Steps
// makes a reconciler of a few steps, so a single step is tested through
// the engine too. ChildOf marks an object as a child that a children step
// (package children) made, for the world a case starts from or for what
// it expects.
//
// The in-memory client is controller-runtime's fake client: it has no
// admission, no defaulting and no garbage collection, so tests of how an
// operator behaves against a real API server belong with envtest (see
// package bosuntest). Unit tests here check a step's logic: what it writes
// for a given world, and how it reports a failure.
//
// The helpers take a bosuntest.TB, which both *testing.T and Ginkgo's
// GinkgoT() satisfy; Run, which makes subtests, takes a *testing.T.
//
// Maturity: stable. The unit tests of every example and of the scaffold's
// generated operator use it.
package unit
