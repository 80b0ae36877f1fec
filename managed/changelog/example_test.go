package changelog_test

import (
	"fmt"

	"github.com/bosunkit/bosun/managed/changelog"
)

func ExampleAppend() {
	var log []changelog.Entry
	for _, op := range []string{"create", "update", "update", "delete"} {
		log = changelog.Append(log, changelog.Entry{Operation: op, Outcome: changelog.OutcomeSucceeded}, 3)
	}
	for _, e := range log {
		fmt.Println(e.Operation, e.Outcome)
	}
	// Output:
	// update Succeeded
	// update Succeeded
	// delete Succeeded
}
