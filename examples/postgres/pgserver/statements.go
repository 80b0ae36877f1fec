package pgserver

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// logLinePrefix is the log_line_prefix the server runs with: timestamp,
// process id, user, database and application name, each followed by '|'.
// Statements relies on it to parse the log.
const logLinePrefix = "%m|%p|%u|%d|%a|"

// harnessApp is the application_name of the connections pgserver itself
// makes; Statements leaves their statements out.
const harnessApp = "bosun-pgserver"

// ErrStatementLogOff reports a call to Statements on a server started
// without Options.LogStatements.
var ErrStatementLogOff = errors.New("statement logging is off; start the server with Options.LogStatements")

// Statement is one SQL statement the server received, as written to its
// log by log_statement = all.
type Statement struct {
	// PID is the process id of the backend that ran it, one per connection.
	PID int
	// User is the role the session logged in as.
	User string
	// Database is the database the session is connected to.
	Database string
	// Application is the session's application_name, empty when the
	// client set none.
	Application string
	// Prepared is the name of the prepared statement when the statement
	// came through the extended query protocol ("<unnamed>" for the unnamed
	// one); it is empty for a simple query.
	Prepared string
	// Text is the SQL text, newlines included. A simple query with several
	// statements separated by semicolons is one Statement.
	Text string
	// Parameters holds the bind parameters of an extended-protocol
	// statement as the server prints them ("$1 = 'x', $2 = '3'"), empty
	// when there were none.
	Parameters string
}

// Statements returns the statements the server received since it was
// started, oldest first, except those of pgserver's own readiness checks.
// It fails with ErrStatementLogOff unless Options.LogStatements was set.
// A statement is logged when it is received, before it runs, so it is in
// the result as soon as the client has sent it and got an answer; one the
// server could not parse is not logged.
//
// The parser assumes that user, database and application names contain no
// '|'.
func (s *Server) Statements() ([]Statement, error) {
	if !s.opts.LogStatements {
		return nil, ErrStatementLogOff
	}
	data, err := os.ReadFile(s.logPath)
	if err != nil {
		return nil, fmt.Errorf("read server log: %w", err)
	}
	return parseStatements(string(data)), nil
}

// logEntry is one message of the server log: a prefixed header line plus
// the tab-indented continuation lines the server writes for embedded
// newlines.
type logEntry struct {
	pid                   int
	user, database, app   string
	severity, messageText string
}

// parseStatements extracts the statements from a server log written with
// logLinePrefix.
func parseStatements(log string) []Statement {
	var (
		out  []Statement
		prev *Statement // statement of the entry just before, for its DETAIL
	)
	for _, e := range parseLog(log) {
		switch {
		case e.severity == "LOG":
			st, ok := statementOf(e)
			if !ok || e.app == harnessApp {
				prev = nil
				continue
			}
			out = append(out, st)
			prev = &out[len(out)-1]
		case e.severity == "DETAIL" && prev != nil && prev.PID == e.pid:
			if params, ok := strings.CutPrefix(e.messageText, "parameters: "); ok {
				prev.Parameters = params
			}
			prev = nil
		default:
			prev = nil
		}
	}
	return out
}

// statementOf reads a LOG message written by log_statement.
func statementOf(e logEntry) (Statement, bool) {
	st := Statement{PID: e.pid, User: e.user, Database: e.database, Application: e.app}
	if text, ok := strings.CutPrefix(e.messageText, "statement: "); ok {
		st.Text = text
		return st, true
	}
	if rest, ok := strings.CutPrefix(e.messageText, "execute "); ok {
		name, text, ok := strings.Cut(rest, ": ")
		if !ok {
			return Statement{}, false
		}
		st.Prepared, st.Text = name, text
		return st, true
	}
	return Statement{}, false
}

// parseLog splits a server log into entries. Lines without the prefix
// (written before logging was configured, or by other programs) are
// skipped along with their continuation lines.
func parseLog(log string) []logEntry {
	var (
		entries []logEntry
		current = -1 // index of the entry continuation lines belong to
	)
	for _, line := range strings.Split(log, "\n") {
		if cont, ok := strings.CutPrefix(line, "\t"); ok {
			if current >= 0 {
				entries[current].messageText += "\n" + cont
			}
			continue
		}
		e, ok := parseHeader(line)
		if !ok {
			current = -1
			continue
		}
		entries = append(entries, e)
		current = len(entries) - 1
	}
	return entries
}

// parseHeader reads "time|pid|user|database|app|SEVERITY:  message".
func parseHeader(line string) (logEntry, bool) {
	fields := strings.SplitN(line, "|", 6)
	if len(fields) != 6 {
		return logEntry{}, false
	}
	pid, err := strconv.Atoi(fields[1])
	if err != nil {
		return logEntry{}, false
	}
	severity, msg, ok := strings.Cut(fields[5], ":  ")
	if !ok || severity == "" || strings.ToUpper(severity) != severity {
		return logEntry{}, false
	}
	return logEntry{
		pid:         pid,
		user:        known(fields[2]),
		database:    known(fields[3]),
		app:         known(fields[4]),
		severity:    severity,
		messageText: msg,
	}, true
}

// known maps the placeholder the server prints for an unset user, database
// or application name to "".
func known(field string) string {
	if field == "[unknown]" {
		return ""
	}
	return field
}
