package managed

import (
	"context"

	"github.com/bosunkit/bosun/internal/plan"
)

// planned reports whether the call op of the step named step for the
// external resource name is one that the plan mode of package operator records instead of making: a
// Create, Update, Delete or RepairCredentials (which would set new
// credentials on the resource), when ctx carries a plan. The step then goes on as if the call had
// succeeded with an empty answer; Connect, Observe and the polls of long
// operations, which only read, are made as usual.
func planned(ctx context.Context, step, op, name string) bool {
	rec := plan.From(ctx)
	if rec == nil || op != opCreate && op != opUpdate && op != opDelete && op != opRepairCredentials {
		return false
	}
	rec.External(ctx, step, op, name)
	return true
}
