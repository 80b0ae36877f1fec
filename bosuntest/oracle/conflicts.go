package oracle

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/bosunkit/bosun/bosuntest"
)

// conflictMessage is the text the API server gives a 409 Conflict caused
// by a stale resourceVersion.
const conflictMessage = "the object has been modified; please apply your changes to the latest version and try again"

// errConflictLogged is wrapped by the error of NoConflictErrors.
var errConflictLogged = errors.New("conflict logged as an error")

// NoConflictErrors reports the error lines of entries that are about a 409
// Conflict: those whose Err is, or wraps, an API error for which
// apierrors.IsConflict holds, and those whose rendered text (message,
// error and values; see bosuntest.LogEntry.String) holds the API server's
// message of a conflict, "the object has been modified; please apply
// your changes to the latest version and try again".
// A conflict is a reason to requeue, not an error worth a log line. Info
// lines are not looked at.
//
// The error is nil when there is no such line; otherwise it says
// "conflict logged as an error" and gives each line, in order.
func NoConflictErrors(entries []bosuntest.LogEntry) error {
	var lines []string
	for i, e := range entries {
		if !e.Error {
			continue
		}
		if apierrors.IsConflict(e.Err) || strings.Contains(e.String(), conflictMessage) {
			lines = append(lines, fmt.Sprintf("line %d: %s", i, e))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("oracle: %w in %s:\n\t%s", errConflictLogged, count(len(lines), "line"), joinOrdered(lines))
}
