// Package trim drops metadata.managedFields from the JSON answers of the
// Kubernetes API server before a client decodes them.
//
// The managedFields of a small custom resource are about half its JSON
// and more than half the CPU of decoding it, and a tuning.LeanCache drops
// them from every object it caches. Reads wraps the HTTP client of such a
// cache so that its list and watch answers arrive without them; Marked
// wraps the HTTP client of a manager's client so that the answers to the
// requests made with a context from Mark (the engine's own writes, whose
// object it reads from that cache) do too. The objects labelled KeepLabel
// keep theirs. What the trimming does not understand passes as it came.
package trim
