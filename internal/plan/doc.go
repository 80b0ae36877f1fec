// Package plan records what an operator would write without writing it,
// for the plan mode of package operator (--plan).
//
// A Recorder hands out a client (Client) that sends every write to the API
// server with dryRun=All and notes what it would change: the object of a
// create, the fields a patch, update or apply would change (the live object
// read before the write against the server's dry-run answer, without
// metadata the server keeps for itself), and deletes. The values of
// sensitive fields (Sensitive: the data of Secrets, and the fields an
// operator names) are never printed: the plan shows their paths, and of a
// map its keys, with "(sensitive value)" for each value, old and new, so
// that it still tells which ones change. Package managed asks
// From whether its context carries a Recorder and, when it does, records
// the Create, Update, Delete and credential repair of an external resource
// (External) instead of calling them.
//
// Writes are told apart by the controller-runtime reconcile ID of their
// context; ObservePass, a bosun.PassObserver, files those of a pass under
// the object the pass reconciled. Only the first pass of each object is
// kept: later ones would repeat it on a cluster where nothing changed.
package plan
