// Package pgserver runs a throwaway PostgreSQL server for tests and for the
// `bosun demo` command.
//
// Start initialises a fresh cluster with initdb in a new temporary
// directory, starts postgres on a free TCP port of 127.0.0.1 (and on a unix
// socket inside that directory), waits until it accepts connections and
// returns a Server. Every connection from 127.0.0.1 or the socket is trusted,
// so Server.DSN needs no password; with Options.PasswordAuth, roles other
// than the superuser must give their password over TCP. Stop shuts the
// server down and removes the directory.
//
// The binaries come from Debian's packages: Start uses Options.BinDir, else
// the directory named by the BOSUN_POSTGRES_BIN environment variable, else
// the newest /usr/lib/postgresql/<version>/bin holding initdb and postgres,
// else initdb and postgres found on PATH. When none is there, Start fails
// with ErrNotInstalled and a message that says how to install them
// (apt-get install -y postgresql); it never skips.
//
// PostgreSQL refuses to run as root. When the calling process is root,
// initdb and postgres run as the unprivileged `postgres` user that the
// Debian package creates (Options.OSUser names another one), and the
// temporary directory is handed to that user.
//
// With Options.LogStatements the server logs every statement it receives
// (log_statement = all) to its log file with a fixed line prefix, and
// Server.Statements parses them back, which lets a test assert exactly which
// SQL an operator sent. Down and Up stop and restart the server on the same
// port and data, for tests of an unreachable database.
//
// The cluster is tuned for throwaway use: fsync, synchronous_commit and
// full_page_writes are off, and the data does not survive Stop.
package pgserver
