package conditions

import (
	"errors"
	"fmt"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Severity tells the engine whether a failure is worth retrying.
type Severity string

const (
	// SeverityError marks a terminal failure: retrying cannot help, so the engine does
	// not requeue the object until it changes.
	SeverityError Severity = "Error"
	// SeverityWarning marks a failure that may go away: the engine retries with
	// backoff.
	SeverityWarning Severity = "Warning"
)

// Error is an error that carries the condition it is about, a condition reason and a
// Severity. Steps build one with Terminal, Warning, Terminalf or Warningf, or as a
// struct literal to name a condition other than Ready; FromError and TypeOf read it back
// through any wrapping.
type Error struct {
	// Type is the condition type the failure is about; empty means TypeReady.
	Type string
	// Reason is the condition reason, a CamelCase word such as "InvalidSpec"; empty
	// means ReasonError.
	Reason Reason
	// Severity tells whether the failure is terminal; empty means SeverityWarning.
	Severity Severity
	// Err is the failure itself; its text becomes the condition message.
	Err error
}

// Error returns the text of the wrapped error, or the reason when there is none.
func (e *Error) Error() string {
	if e.Err == nil {
		if e.Reason == "" {
			return string(ReasonError)
		}
		return string(e.Reason)
	}
	return e.Err.Error()
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// Terminal returns an error with the given reason and SeverityError: the engine sets
// the Ready condition False with reason and the text of err, and does not retry until
// the object changes. The result is never nil, even for a nil err.
func Terminal(reason Reason, err error) error {
	return &Error{Reason: reason, Severity: SeverityError, Err: err}
}

// Warning returns an error with the given reason and SeverityWarning: the engine sets
// the Ready condition False with reason and the text of err, and retries with backoff.
// The result is never nil, even for a nil err.
func Warning(reason Reason, err error) error {
	return &Error{Reason: reason, Severity: SeverityWarning, Err: err}
}

// Terminalf is Terminal with an error formatted by fmt.Errorf, so %w works.
func Terminalf(reason Reason, format string, args ...any) error {
	return Terminal(reason, fmt.Errorf(format, args...))
}

// Warningf is Warning with an error formatted by fmt.Errorf, so %w works.
func Warningf(reason Reason, format string, args ...any) error {
	return Warning(reason, fmt.Errorf(format, args...))
}

// terminalMarker matches errors made with reconcile.TerminalError.
var terminalMarker = reconcile.TerminalError(nil)

// FromError tells how err should show in a condition: its reason, its severity and the
// message, which is the error text (cut to MaxMessageLength). A nil err gives empty
// values.
//
// The reason is ReasonPanic when err holds a *PanicError, else the Reason of the
// first *Error in err's tree (ReasonError when that is empty or not a valid condition
// reason), else ReasonError.
//
// The severity is SeverityError when err is terminal: an *Error with SeverityError, an
// error made with reconcile.TerminalError, or anything wrapping one of these. A
// recovered panic and any other error give SeverityWarning. An error that joins several
// (errors.Join, the flow joins) is terminal only when all of them are, so that a
// failure worth retrying is retried. The outermost *Error decides for what it wraps.
func FromError(err error) (reason Reason, severity Severity, message string) {
	if err == nil {
		return "", "", ""
	}
	reason = ReasonError
	var pe *PanicError
	var te *Error
	switch {
	case errors.As(err, &pe):
		reason = ReasonPanic
	case errors.As(err, &te):
		if validReason(string(te.Reason)) {
			reason = te.Reason
		}
	}
	severity = SeverityWarning
	if isTerminal(err) {
		severity = SeverityError
	}
	return reason, severity, truncate(err.Error(), MaxMessageLength)
}

// TypeOf returns the condition type the first *Error in err's tree names, or
// TypeReady when there is none or it names none. A nil err gives TypeReady.
func TypeOf(err error) string {
	var te *Error
	if errors.As(err, &te) && te.Type != "" {
		return te.Type
	}
	return TypeReady
}

// isTerminal reports whether err, or what it wraps, is terminal; a joined error is
// terminal when every part is.
func isTerminal(err error) bool {
	for err != nil {
		switch e := err.(type) { //nolint:errorlint // walks the chain one level at a time on purpose
		case *Error:
			return e.Severity == SeverityError
		case *PanicError:
			return false
		case interface{ Unwrap() []error }:
			errs := e.Unwrap()
			if len(errs) == 0 {
				return false
			}
			for _, part := range errs {
				if !isTerminal(part) {
					return false
				}
			}
			return true
		}
		if m, ok := err.(interface{ Is(error) bool }); ok && m.Is(terminalMarker) {
			return true
		}
		err = errors.Unwrap(err)
	}
	return false
}

// validReason reports whether s passes the API server's check of a condition reason:
// 1 to 1024 characters, a letter first, then letters, digits, '_', ',' or ':', and
// not ending in ',' or ':'.
func validReason(s string) bool {
	if s == "" || len(s) > 1024 || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !isDigit(c) && c != '_' && c != ',' && c != ':' {
			return false
		}
	}
	last := s[len(s)-1]
	return last != ',' && last != ':'
}

func isLetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ErrorCondition returns the condition that reports err: of type TypeOf(err), False,
// with the reason and message FromError gives, observing generation, and a zero
// LastTransitionTime for Set to fill in. For a nil err it returns a zero Condition.
func ErrorCondition(err error, generation int64) metav1.Condition {
	if err == nil {
		return metav1.Condition{}
	}
	reason, _, message := FromError(err)
	return metav1.Condition{
		Type:               TypeOf(err),
		Status:             metav1.ConditionFalse,
		Reason:             string(reason),
		Message:            message,
		ObservedGeneration: generation,
	}
}

// PanicError is a panic recovered from a step or another piece of user code
// (a desired-state function, an external call, a handler): the engine
// reports it with ReasonPanic and retries with backoff, and the other
// objects go on. When the panic value is an error, errors.Is and errors.As
// reach it.
type PanicError struct {
	// Step names what panicked: the step, or the call inside it.
	Step string
	// Value is the value passed to panic.
	Value any
	// Stack is the stack of the panicking goroutine, as debug.Stack formats
	// it; Error leaves it out.
	Stack []byte
}

// Error names what panicked and the panic value.
func (e *PanicError) Error() string {
	return fmt.Sprintf("panic in %s: %v", e.Step, e.Value)
}

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}
