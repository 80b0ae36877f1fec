// Package debugpage serves a page, for people, of what an operator's bosun
// reconcilers are doing: each reconciler with the drawing of its steps,
// and for each object its recent passes, newest first, with why each ran
// (the Trigger), the steps it ran and how long they took, its result, its
// error and the object's conditions after it.
//
// A Page is a bosun.PassObserver that keeps a bounded history in memory
// (Options) and an http.Handler that shows it as HTML, or as JSON with
// ?format=json. It serves everything under Path; mount it there:
//
//	mgr = new(bosun.Observation).Attach(mgr) // what the page observes lives on the manager
//	page := debugpage.Register(mgr)
//	mux.Handle(debugpage.Path, page)
//
// An operator built with package operator turns it on with --debug-page,
// which serves it on the metrics server, behind the same authentication
// and authorization as /metrics when that is secure.
//
// Maturity: experimental. The page is for people; its layout and JSON may change.
package debugpage
