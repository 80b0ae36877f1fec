package plan

// Running reports whether mgr, a manager handed to an operator's setup, is
// the one of a --plan run: package operator's plan manager has the method
// PlanRun. Package shard asks it, so that a plan member takes every object
// of the ring's kind rather than a share its dry-run Lease never holds.
func Running(mgr any) bool {
	_, ok := mgr.(interface{ PlanRun() })
	return ok
}
