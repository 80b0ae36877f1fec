package pgserver

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jackc/pgx/v5"
)

// testApp is the application_name of the tests' own connections.
const testApp = "pgserver-test"

// startServer starts a server that is stopped when the test ends.
func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	srv, err := Start(t.Context(), opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return srv
}

// connect opens a pgx connection to database, closed when the test ends.
func connect(t *testing.T, srv *Server, database string) *pgx.Conn {
	t.Helper()
	conn, err := tryConnect(t.Context(), srv, database)
	if err != nil {
		t.Fatalf("connect to %s: %v", database, err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func tryConnect(ctx context.Context, srv *Server, database string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(srv.DSN(database))
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["application_name"] = testApp
	// The unnamed prepared statement makes the logged statements
	// predictable; pgx's default names them after a hash.
	cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
	return pgx.ConnectConfig(ctx, cfg)
}

func mustExec(t *testing.T, conn *pgx.Conn, sql string) {
	t.Helper()
	if _, err := conn.Exec(t.Context(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func queryString(t *testing.T, conn *pgx.Conn, sql string, args ...any) string {
	t.Helper()
	var s string
	if err := conn.QueryRow(t.Context(), sql, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

func TestStartStop(t *testing.T) {
	t.Parallel()
	var progress bytes.Buffer
	srv, err := Start(t.Context(), Options{
		LogStatements: true,
		Output:        &progress,
		Settings:      map[string]string{"max_connections": "20"},
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = srv.Stop()
		}
	})

	admin := connect(t, srv, "postgres")
	mustExec(t, admin, "CREATE ROLE app_owner LOGIN")
	mustExec(t, admin, "CREATE DATABASE app OWNER app_owner")
	if got := queryString(t, admin, "SHOW max_connections"); got != "20" {
		t.Errorf("max_connections = %q, want the value from Options.Settings, 20", got)
	}

	app := connect(t, srv, "app")
	owner := queryString(t, app, "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()")
	if owner != "app_owner" {
		t.Errorf("owner of database app = %q, want app_owner", owner)
	}
	if got := queryString(t, app, "SELECT $1::text || current_database()", "in "); got != "in app" {
		t.Errorf("parameterised query = %q, want %q", got, "in app")
	}

	stmts, err := srv.Statements()
	if err != nil {
		t.Fatalf("Statements: %v", err)
	}
	var mine []Statement
	for _, st := range stmts {
		if st.Application == testApp {
			mine = append(mine, st)
		}
	}
	want := []Statement{
		{User: "postgres", Database: "postgres", Application: testApp, Text: "CREATE ROLE app_owner LOGIN"},
		{User: "postgres", Database: "postgres", Application: testApp, Text: "CREATE DATABASE app OWNER app_owner"},
		{User: "postgres", Database: "postgres", Application: testApp, Prepared: "<unnamed>", Text: "SHOW max_connections"},
		{User: "postgres", Database: "app", Application: testApp,
			Prepared: "<unnamed>",
			Text:     "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()"},
		{User: "postgres", Database: "app", Application: testApp,
			Prepared: "<unnamed>", Text: "SELECT $1::text || current_database()", Parameters: "$1 = 'in '"},
	}
	if diff := cmp.Diff(want, mine, cmpopts.IgnoreFields(Statement{}, "PID")); diff != "" {
		t.Errorf("Statements() mismatch (-want +got):\n%s", diff)
	}
	if len(mine) == 5 && (mine[0].PID != mine[1].PID || mine[0].PID == mine[4].PID || mine[0].PID == 0) {
		t.Errorf("PIDs = %d, %d, %d: want one non-zero backend per connection", mine[0].PID, mine[1].PID, mine[4].PID)
	}
	if len(stmts) != len(mine) {
		t.Errorf("Statements() has %d statements of other applications, want none: %+v", len(stmts)-len(mine), stmts)
	}

	log, err := srv.Log()
	if err != nil {
		t.Fatalf("Log: %v", err)
	}
	if !strings.Contains(log, "database system is ready to accept connections") {
		t.Errorf("server log lacks the ready line:\n%s", log)
	}

	dir, port := srv.Dir, srv.Port
	stopped = true
	if err := srv.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("server directory %s after Stop: %v, want it removed", dir, err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Errorf("port %d is not free after Stop: %v", port, err)
	} else {
		_ = l.Close()
	}
	if err := srv.Stop(); err != nil {
		t.Errorf("second Stop: %v, want nil", err)
	}
	if err := srv.Down(); !errors.Is(err, ErrStopped) {
		t.Errorf("Down after Stop: %v, want ErrStopped", err)
	}
	if err := srv.Up(t.Context()); !errors.Is(err, ErrStopped) {
		t.Errorf("Up after Stop: %v, want ErrStopped", err)
	}
	for _, line := range []string{"pgserver: initdb ", "pgserver: ready on 127.0.0.1:", "pgserver: stopped 127.0.0.1:"} {
		if !strings.Contains(progress.String(), line) {
			t.Errorf("Output lacks %q:\n%s", line, progress.String())
		}
	}
}

func TestDownUp(t *testing.T) {
	t.Parallel()
	srv := startServer(t, Options{})
	conn := connect(t, srv, "postgres")
	mustExec(t, conn, "CREATE ROLE survivor")
	port := srv.Port

	if err := srv.Down(); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if err := srv.Down(); err != nil {
		t.Errorf("second Down: %v, want nil", err)
	}
	if c, err := tryConnect(t.Context(), srv, "postgres"); err == nil {
		_ = c.Close(t.Context())
		t.Fatal("connected to a server that is down")
	}
	if err := srv.Up(t.Context()); err != nil {
		t.Fatalf("Up: %v", err)
	}
	if err := srv.Up(t.Context()); err != nil {
		t.Errorf("second Up: %v, want nil", err)
	}
	if srv.Port != port {
		t.Errorf("port after Up = %d, want %d", srv.Port, port)
	}
	again := connect(t, srv, "postgres")
	if got := queryString(t, again, "SELECT rolname::text FROM pg_roles WHERE rolname = 'survivor'"); got != "survivor" {
		t.Errorf("role after Up = %q, want survivor", got)
	}
	if _, err := srv.Statements(); !errors.Is(err, ErrStatementLogOff) {
		t.Errorf("Statements without LogStatements: %v, want ErrStatementLogOff", err)
	}
}

func TestTwoServers(t *testing.T) {
	t.Parallel()
	servers := make([]*Server, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range servers {
		wg.Go(func() { servers[i], errs[i] = Start(t.Context(), Options{}) })
	}
	wg.Wait()
	for i, srv := range servers {
		if srv != nil {
			t.Cleanup(func() {
				if err := srv.Stop(); err != nil {
					t.Errorf("Stop: %v", err)
				}
			})
		}
		if errs[i] != nil {
			t.Fatalf("Start %d: %v", i, errs[i])
		}
	}
	a, b := servers[0], servers[1]
	if a.Port == b.Port || a.Dir == b.Dir {
		t.Fatalf("servers share port or directory: %d %s, %d %s", a.Port, a.Dir, b.Port, b.Dir)
	}
	mustExec(t, connect(t, a, "postgres"), "CREATE ROLE only_in_a")
	var n int
	if err := connect(t, b, "postgres").QueryRow(t.Context(),
		"SELECT count(*) FROM pg_roles WHERE rolname = 'only_in_a'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("second server sees the first one's role")
	}
	if err := a.Stop(); err != nil {
		t.Fatalf("Stop a: %v", err)
	}
	if got := queryString(t, connect(t, b, "postgres"), "SELECT 'still up'"); got != "still up" {
		t.Errorf("second server after the first stopped: %q", got)
	}
}

// fakeBin writes shell scripts standing in for initdb and postgres into a
// directory every user can read, and returns it.
func fakeBin(t *testing.T, postgres string) string {
	t.Helper()
	dir := publicDir(t)
	initdb := "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --pgdata ]; then mkdir -p \"$2\" && : > \"$2/postgresql.conf\"; fi; shift; done\n"
	for name, body := range map[string]string{"initdb": initdb, "postgres": postgres} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// publicDir makes a directory that the server user can reach even when the
// tests run as root, unlike t.TempDir.
func publicDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgserver-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

const fakeVersion = "if [ \"$1\" = --version ]; then echo 'postgres (PostgreSQL) 99.0'; exit 0; fi\n"

func TestStartFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		postgres   string
		want       []string
		wantTaken  bool
		wantOutput int // lines about a taken port
	}{{
		name:     "server exits",
		postgres: "#!/bin/sh\n" + fakeVersion + "echo 'FATAL:  fake configuration error' >&2\nexit 1\n",
		want:     []string{"postgres exited before accepting connections", "FATAL:  fake configuration error"},
	}, {
		name: "port taken every time",
		postgres: "#!/bin/sh\n" + fakeVersion +
			"echo 'LOG:  could not bind IPv4 address \"127.0.0.1\": Address already in use' >&2\n" +
			"echo 'FATAL:  could not create any TCP/IP sockets' >&2\nexit 1\n",
		want:       []string{"port already in use"},
		wantTaken:  true,
		wantOutput: portAttempts - 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tmp := publicDir(t)
			var out bytes.Buffer
			srv, err := Start(t.Context(), Options{BinDir: fakeBin(t, tt.postgres), TempDir: tmp, Output: &out})
			if err == nil {
				_ = srv.Stop()
				t.Fatal("Start succeeded with a failing postgres")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if got := errors.Is(err, errPortTaken); got != tt.wantTaken {
				t.Errorf("errors.Is(err, errPortTaken) = %v, want %v", got, tt.wantTaken)
			}
			if got := strings.Count(out.String(), "was taken, trying another"); got != tt.wantOutput {
				t.Errorf("Output has %d retries, want %d:\n%s", got, tt.wantOutput, out.String())
			}
			left, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			if len(left) != 0 {
				t.Errorf("failed Start left %v in %s", left, tmp)
			}
		})
	}
}

func TestStartNotInstalled(t *testing.T) {
	empty := t.TempDir()
	onlyInitdb := t.TempDir()
	if err := os.WriteFile(filepath.Join(onlyInitdb, "initdb"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
		env  string
		want string
	}{
		{name: "missing BinDir", opts: Options{BinDir: filepath.Join(empty, "nope")}, want: "Options.BinDir " + filepath.Join(empty, "nope") + " has no executable initdb"},
		{name: "empty env dir", env: empty, want: EnvBinDir + "=" + empty + " has no executable initdb"},
		{name: "env dir without postgres", env: onlyInitdb, want: "has no executable postgres"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvBinDir, tt.env)
			srv, err := Start(t.Context(), tt.opts)
			if err == nil {
				_ = srv.Stop()
				t.Fatal("Start succeeded without binaries")
			}
			if !errors.Is(err, ErrNotInstalled) {
				t.Errorf("error %v does not wrap ErrNotInstalled", err)
			}
			for _, w := range []string{tt.want, "apt-get install -y postgresql", EnvBinDir} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestStartRejectsOwnedSettings(t *testing.T) {
	_, err := Start(t.Context(), Options{BinDir: "/nonexistent", Settings: map[string]string{"Port": "1"}})
	if err == nil || !strings.Contains(err.Error(), `setting "Port" in Options.Settings is managed by pgserver`) {
		t.Errorf("Start with an owned setting: %v, want it rejected before anything else", err)
	}
}

// TestPasswordAuth starts a server with PasswordAuth: a role logs in over
// TCP with its password and is refused with another one or none, while the
// superuser still connects without one.
func TestPasswordAuth(t *testing.T) {
	t.Parallel()
	srv := startServer(t, Options{PasswordAuth: true})
	conn := connect(t, srv, "postgres")
	mustExec(t, conn, "SET password_encryption = 'scram-sha-256'")
	mustExec(t, conn, "CREATE ROLE app LOGIN PASSWORD 'right-password'")

	login := func(password string) error {
		cfg, err := pgx.ParseConfig(srv.DSN("postgres"))
		if err != nil {
			t.Fatalf("parse DSN: %v", err)
		}
		cfg.User, cfg.Password = "app", password
		c, err := pgx.ConnectConfig(t.Context(), cfg)
		if err != nil {
			return err
		}
		return c.Close(t.Context())
	}
	if err := login("right-password"); err != nil {
		t.Errorf("login with the role's password: %v", err)
	}
	for _, wrong := range []string{"wrong-password", ""} {
		if err := login(wrong); err == nil {
			t.Errorf("login with password %q succeeded, want it refused", wrong)
		}
	}
}
