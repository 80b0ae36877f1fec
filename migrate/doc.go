// Package migrate rewrites the stored objects of a CustomResourceDefinition
// at its current storage version, and then trims the CRD's
// status.storedVersions to that version.
//
// When a CRD's storage version changes, objects already in etcd stay encoded
// at the old version until something writes them again, and the CRD keeps
// listing the old version in status.storedVersions; the old version cannot
// be dropped from spec.versions until it is gone from there. A Migrator
// closes that gap for one CRD: it lists the objects of the kind in pages,
// sends each back unchanged with an update, and finally patches
// status.storedVersions.
//
// # Why an unchanged update is enough
//
// kube-apiserver skips the etcd write of an update only when the newly
// encoded bytes equal the stored ones. An object stored at the old version
// carries the old apiVersion in its stored bytes, so an update that changes
// nothing else still differs and is written, now at the storage version,
// with a new resourceVersion. An object already stored at the storage
// version is left alone (its resourceVersion does not move). The tests check
// both.
//
// # Resuming
//
// Progress is recorded on the CRD itself, in the annotation
// ProgressAnnotation, as JSON holding the target storage version, the
// continue token of the next page and the CRD's metadata.generation when
// the migration started; it is written after every page. A new Migrator
// (after a crash or a change of leader) starts from that page when the
// target is still the storage version and the CRD's spec has not changed
// since (the same generation), and from the beginning otherwise: a storage
// version moved back and forth meanwhile (a rolled-back release) leaves
// objects of the pages already migrated stored at the other version. For
// the same reason a migration whose CRD's spec changes before it ends
// does not trim status.storedVersions; it fails and starts over at the
// next check. A continue token expires with etcd compaction (minutes); when
// the API server answers 410 Gone the migration starts over, which costs
// writes but is still correct. The annotation is removed when the migration
// ends. Keeping the record on the CRD needs no extra object or permission
// beyond patching CRDs, and it disappears with the CRD.
//
// # Running
//
// A migration that finds a storage version to migrate to waits
// Options.Settle (DefaultSettle) before its first rewrite: the API server
// takes a new storage version up only once its own watch of CRDs brings
// the change to its handler of custom resources, and an unchanged update
// served before that is encoded at the old version and written nowhere,
// which no answer tells from an object already stored at the new one. It
// starts over if the CRD's spec changed during the wait; a migration
// resumed from its progress record does not wait again.
//
// Migrator is a manager.Runnable that runs only on the leader. Start
// migrates once, then checks the CRD again every Options.Interval until its
// context ends. Migrate runs one migration to its end and returns, for
// callers (and tests) that want it done synchronously. Under an operator's
// --plan (package operator) Start is not called: the plan calls Migrate
// once, with every write a dry run, and waits for it, so that its report
// lists the rewrites and the trim the migration would make.
//
// Writes are limited to Options.RateLimit per second. A conflict gets the
// object again and retries; an object deleted meanwhile is skipped.
//
// # Metrics
//
// Registered on Options.Metrics, by default controller-runtime's
// metrics.Registry, labelled with the CRD's name ("crd"):
//
//	bosun_migrate_objects_total  counter  objects rewritten
//	bosun_migrate_errors_total   counter  failed migration attempts
//	bosun_migrate_running        gauge    1 while a migration runs, else 0
//
// The client given to New should read from the API server, not a cache
// (client.New, not the manager's client), so pages and re-reads are fresh.
// It needs list, get and update on the kind, and get and patch on the CRD
// and its status.
//
// Maturity: experimental.
package migrate
