package oracle

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/bosunkit/bosun/bosuntest"
)

// ConflictMessage is the text the API server gives a 409 Conflict caused
// by a stale resourceVersion.
const ConflictMessage = "the object has been modified; please apply your changes to the latest version and try again"

// ErrConflictLogged is wrapped by the error of NoConflictErrors.
var ErrConflictLogged = errors.New("conflict logged as an error")

// NoConflictErrors reports the error lines of entries that are about a 409
// Conflict: those whose Err is, or wraps, an API error for which
// apierrors.IsConflict holds, and those whose rendered text (message,
// error and values; see bosuntest.LogEntry.String) holds ConflictMessage.
// A conflict is a reason to requeue, not an error worth a log line. Info
// lines are not looked at.
//
// The error is nil when there is no such line; otherwise it wraps
// ErrConflictLogged and gives each line, in order.
func NoConflictErrors(entries []bosuntest.LogEntry) error {
	var lines []string
	for i, e := range entries {
		if !e.Error {
			continue
		}
		if apierrors.IsConflict(e.Err) || strings.Contains(e.String(), ConflictMessage) {
			lines = append(lines, fmt.Sprintf("line %d: %s", i, e))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("oracle: %w in %s:\n\t%s", ErrConflictLogged, count(len(lines), "line"), joinOrdered(lines))
}
