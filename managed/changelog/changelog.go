package changelog

import (
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Outcome says how an operation ended.
type Outcome string

// The outcomes of an operation.
const (
	// OutcomeSucceeded: the operation took effect.
	OutcomeSucceeded Outcome = "Succeeded"
	// OutcomeFailed: the operation failed; Entry.Message says why.
	OutcomeFailed Outcome = "Failed"
	// OutcomeUnknown: the call failed in a way after which nobody can
	// tell whether it took effect (a timeout, a lost answer).
	OutcomeUnknown Outcome = "Unknown"
	// OutcomeStarted: the external system accepted a long operation and
	// works on it; a later entry of the same operation says how it ended.
	OutcomeStarted Outcome = "Started"
)

// MaxMessageLength is the longest Entry.Message; Append cuts longer ones.
const MaxMessageLength = 512

// Entry is one operation on an external resource.
type Entry struct {
	// Time is when the operation ended, or, for OutcomeStarted, began.
	Time metav1.Time `json:"time"`
	// Controller is the name of the controller that performed it.
	Controller string `json:"controller"`
	// Instance is the operator instance that performed it
	// (bosun.dev/operator-instance), when there is one.
	//
	// +optional
	Instance string `json:"instance,omitempty"`
	// Operation is what was done: create, update, delete or repair
	// credentials.
	Operation string `json:"operation"`
	// ExternalName names the external resource.
	//
	// +optional
	ExternalName string `json:"externalName,omitempty"`
	// Generation is the object's metadata.generation the operation
	// applied.
	//
	// +optional
	Generation int64 `json:"generation,omitempty"`
	// Outcome is how the operation ended.
	Outcome Outcome `json:"outcome"`
	// Message is the error of an operation that failed, or whose outcome
	// is unknown, at most MaxMessageLength bytes. It never holds
	// connection details.
	//
	// +optional
	Message string `json:"message,omitempty"`
}

// Object is implemented by API types whose status keeps a change log.
//
// +kubebuilder:object:generate=false
type Object interface {
	client.Object
	// GetChangeLog returns the entries, oldest first.
	GetChangeLog() []Entry
	// SetChangeLog replaces the entries.
	SetChangeLog([]Entry)
}

// Append returns log with e added last, keeping at most n entries (the
// newest); n below 1 counts as 1. e's message is cut to MaxMessageLength.
// log itself is not changed.
func Append(log []Entry, e Entry, n int) []Entry {
	n = max(n, 1)
	e.Message = cut(e.Message, MaxMessageLength)
	keep := min(len(log), n-1)
	out := make([]Entry, 0, keep+1)
	out = append(out, log[len(log)-keep:]...)
	return append(out, e)
}

// cut returns s cut to at most n bytes, never inside a UTF-8 sequence,
// ending with "..." when it was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const marker = "..."
	i := n - len(marker)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + marker
}
