package pgserver

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Superuser is the database superuser initdb creates; Server.DSN connects
// as it.
const Superuser = "postgres"

// DefaultStartTimeout bounds initdb plus the wait for a started server when
// Options.StartTimeout is zero.
const DefaultStartTimeout = time.Minute

// stopTimeout is how long a fast shutdown may take before the server is
// shut down immediately, and then killed.
const stopTimeout = 30 * time.Second

// portAttempts is how often Start picks another port when the one it chose
// was taken before postgres could bind it.
const portAttempts = 3

// ErrStopped reports a call to Down or Up after Stop.
var ErrStopped = errors.New("server is stopped")

// errPortTaken marks a start that failed because the port was in use.
var errPortTaken = errors.New("port already in use")

// Options configures Start. The zero value is a usable configuration.
type Options struct {
	// BinDir is the directory with initdb and postgres. Empty means the
	// BOSUN_POSTGRES_BIN environment variable, else the newest
	// /usr/lib/postgresql/<version>/bin, else PATH.
	BinDir string

	// LogStatements makes the server log every statement it receives
	// (log_statement = all), which Server.Statements reads back.
	LogStatements bool

	// PasswordAuth makes every role but the superuser prove its password
	// (SCRAM-SHA-256) when it connects over TCP, so that a test can check
	// that a password really logs in. The superuser and the unix socket
	// stay trusted, and Server.DSN still needs no password. Without it
	// every connection is trusted.
	PasswordAuth bool

	// Settings are extra server settings (postgresql.conf parameters), for
	// example {"max_connections": "20"}. They override pgserver's defaults
	// but may not name the settings pgserver owns: port, listen_addresses,
	// unix_socket_directories, the log destination and prefix, and
	// log_statement (use LogStatements).
	Settings map[string]string

	// Output, when set, receives one line per step (initdb, ready,
	// stopped). The server's own log goes to Server.LogPath.
	Output io.Writer

	// StartTimeout bounds Start (initdb included) and Up; zero means
	// DefaultStartTimeout. The context passed to them can end it earlier.
	StartTimeout time.Duration

	// OSUser is the unprivileged user that runs the server when the calling
	// process is root; empty means DefaultOSUser. Ignored for other users.
	OSUser string

	// TempDir is the directory in which the server's temporary directory is
	// created; empty means os.TempDir(). When the server runs as OSUser,
	// that user must be able to reach it.
	TempDir string
}

// Server is a running PostgreSQL server started by Start. Its methods are
// safe for concurrent use.
type Server struct {
	// Host is the address the server listens on, 127.0.0.1.
	Host string
	// Port is the server's TCP port; it stays the same across Down and Up.
	Port int
	// SocketDir is the directory of the server's unix socket.
	SocketDir string
	// Dir is the temporary directory holding the data, socket and log; Stop
	// removes it.
	Dir string
	// BinDir is the directory the server binaries were taken from.
	BinDir string
	// Version is what `postgres --version` printed, for example
	// "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)".
	Version string

	opts    Options
	who     *runAs
	dataDir string
	logPath string

	mu      sync.Mutex
	proc    *process // nil while down
	stopped bool
}

// process is a running postgres postmaster.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
	err  error         // the exit status, valid once done is closed
}

// Start creates a fresh cluster in a new temporary directory, starts
// postgres on a free port of 127.0.0.1 and returns once it accepts
// connections. The caller must call Stop. ctx bounds only the start; the
// server runs until Stop.
//
// When the binaries cannot be found the error wraps ErrNotInstalled and
// says how to install them; when the caller is root and the server user
// does not exist, it wraps ErrNoServerUser.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if err := validateSettings(opts.Settings); err != nil {
		return nil, err
	}
	binDir, err := findBinDir(opts.BinDir, os.Getenv(EnvBinDir), debianRoot)
	if err != nil {
		return nil, err
	}
	who, err := serverUser(os.Geteuid(), opts.OSUser)
	if err != nil {
		return nil, err
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	version, err := exec.CommandContext(ctx, filepath.Join(binDir, "postgres"), "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("run %s --version: %w", filepath.Join(binDir, "postgres"), err)
	}
	dir, err := os.MkdirTemp(opts.TempDir, "bosun-pg-")
	if err != nil {
		return nil, fmt.Errorf("create server directory: %w", err)
	}
	s := &Server{
		Host:      "127.0.0.1",
		SocketDir: filepath.Join(dir, "socket"),
		Dir:       dir,
		BinDir:    binDir,
		Version:   strings.TrimSpace(string(version)),
		opts:      opts,
		who:       who,
		dataDir:   filepath.Join(dir, "data"),
		logPath:   filepath.Join(dir, "postgres.log"),
	}
	if err := s.create(ctx); err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err == nil {
			s.Port = port
			err = s.launch(ctx)
		}
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, errPortTaken) || attempt == portAttempts {
			return nil, errors.Join(err, os.RemoveAll(dir))
		}
		s.logf("port %d was taken, trying another", port)
	}
}

// create runs initdb and writes the configuration.
func (s *Server) create(ctx context.Context) error {
	if err := os.Mkdir(s.SocketDir, 0o700); err != nil {
		return fmt.Errorf("create socket directory: %w", err)
	}
	if s.who != nil {
		for _, d := range []string{s.Dir, s.SocketDir} {
			if err := os.Chown(d, int(s.who.uid), int(s.who.gid)); err != nil {
				return fmt.Errorf("hand %s to user %s: %w", d, s.who.name, err)
			}
		}
	}
	s.logf("initdb %s (%s)", s.dataDir, s.Version)
	cmd := exec.CommandContext(ctx, filepath.Join(s.BinDir, "initdb"),
		"--pgdata", s.dataDir,
		"--username", Superuser,
		"--auth", "trust",
		"--encoding", "UTF8",
		"--locale", "C",
		"--no-sync",
	)
	cmd.Dir = s.Dir
	cmd.Env = childEnv()
	attr, err := sysProcAttr(s.who, false)
	if err != nil {
		return err
	}
	cmd.SysProcAttr = attr
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		hint := ""
		if s.who != nil {
			hint = fmt.Sprintf(" (initdb ran as user %s, which must be able to reach %s; set Options.TempDir or TMPDIR to a place it can)", s.who.name, s.Dir)
		}
		return fmt.Errorf("initdb failed%s: %w\n%s", hint, err, strings.TrimSpace(out.String()))
	}
	conf, err := os.OpenFile(filepath.Join(s.dataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open postgresql.conf: %w", err)
	}
	_, werr := io.WriteString(conf, serverConf(s.opts))
	if err := errors.Join(werr, conf.Close()); err != nil {
		return err
	}
	if !s.opts.PasswordAuth {
		return nil
	}
	// initdb's file trusts everything; replace it. Writing to the existing
	// file keeps its owner, the server's user.
	hba, err := os.OpenFile(filepath.Join(s.dataDir, "pg_hba.conf"), os.O_TRUNC|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open pg_hba.conf: %w", err)
	}
	_, werr = io.WriteString(hba, hbaConf(s.Host))
	return errors.Join(werr, hba.Close())
}

// hbaConf renders the pg_hba.conf of Options.PasswordAuth: the unix
// socket and the superuser from host are trusted, every other role from
// host gives its password.
func hbaConf(host string) string {
	return "# Written by bosun pgserver (Options.PasswordAuth).\n" +
		"local all all trust\n" +
		"host all " + Superuser + " " + host + "/32 trust\n" +
		"host all all " + host + "/32 scram-sha-256\n"
}

// launch starts postgres on s.Port and waits until it accepts connections.
// The caller holds s.mu or has not published s yet.
func (s *Server) launch(ctx context.Context) error {
	logFile, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open server log: %w", err)
	}
	defer logFile.Close() // the server keeps its own descriptor
	logStart, err := logFile.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("open server log: %w", err)
	}
	cmd := exec.Command(filepath.Join(s.BinDir, "postgres"),
		"-D", s.dataDir,
		"-p", strconv.Itoa(s.Port),
		"-h", s.Host,
		"-k", s.SocketDir,
	)
	cmd.Dir = s.Dir
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = logFile, logFile
	attr, err := sysProcAttr(s.who, true)
	if err != nil {
		return err
	}
	cmd.SysProcAttr = attr
	began := time.Now()
	p, err := startProcess(cmd)
	if err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	if err := s.awaitReady(ctx, p); err != nil {
		return errors.Join(err, p.shutdown(), s.portTaken(logStart))
	}
	s.proc = p
	s.logf("ready on %s:%d after %s", s.Host, s.Port, time.Since(began).Round(time.Millisecond))
	return nil
}

// startProcess starts cmd from a goroutine that stays locked to its OS
// thread until the process exits: the parent-death signal is tied to the
// thread that started the child, so that thread must outlive it.
func startProcess(cmd *exec.Cmd) (*process, error) {
	p := &process{cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// awaitReady polls the server with a pgx connection until it accepts one,
// the process exits or ctx ends.
func (s *Server) awaitReady(ctx context.Context, p *process) error {
	cfg, err := pgx.ParseConfig(s.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("parse server address: %w", err)
	}
	cfg.RuntimeParams["application_name"] = harnessApp
	cfg.ConnectTimeout = 2 * time.Second
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		select {
		case <-p.done:
			return fmt.Errorf("postgres exited before accepting connections: %w; server log:\n%s",
				cmp.Or(p.err, errors.New("exit status 0")), s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("postgres did not accept connections on %s:%d: %w (last attempt: %w); server log:\n%s",
				s.Host, s.Port, ctx.Err(), cmp.Or(lastErr, errors.New("none")), s.logTail())
		case <-tick.C:
		}
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			_ = conn.Close(ctx)
			return nil
		}
		lastErr = err
	}
}

// portTaken returns errPortTaken when the log written since offset says
// the server could not bind its port.
func (s *Server) portTaken(offset int64) error {
	data, err := os.ReadFile(s.logPath)
	if err != nil || int64(len(data)) < offset {
		return nil
	}
	tail := string(data[offset:])
	if strings.Contains(tail, "Address already in use") || strings.Contains(tail, "could not create any TCP/IP sockets") {
		return fmt.Errorf("%w: %d", errPortTaken, s.Port)
	}
	return nil
}

// shutdown asks postgres for a fast shutdown and waits; if that takes
// longer than stopTimeout it escalates to an immediate shutdown and then
// to SIGKILL.
func (p *process) shutdown() error {
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGQUIT, os.Kill} {
		if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("signal postgres: %w", err)
		}
		select {
		case <-p.done:
			if sig != syscall.SIGINT {
				return fmt.Errorf("postgres ignored a fast shutdown for %s and was stopped with %v", stopTimeout, sig)
			}
			return nil
		case <-time.After(stopTimeout):
		}
	}
	return errors.New("postgres did not exit after SIGKILL")
}

// Stop shuts the server down (fast shutdown: open sessions are ended),
// waits for it to exit and removes its directory, log included. Calling it
// again does nothing and returns nil.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	s.stopped = true
	var err error
	if s.proc != nil {
		err = s.proc.shutdown()
		s.proc = nil
	}
	if rmErr := os.RemoveAll(s.Dir); rmErr != nil {
		err = errors.Join(err, fmt.Errorf("remove server directory: %w", rmErr))
	}
	s.logf("stopped %s:%d", s.Host, s.Port)
	return err
}

// Down shuts the server down like Stop but keeps its data, port and log,
// so that Up can bring it back. Clients see connection errors meanwhile.
// Down on a server that is already down does nothing.
func (s *Server) Down() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return ErrStopped
	}
	if s.proc == nil {
		return nil
	}
	err := s.proc.shutdown()
	s.proc = nil
	s.logf("down %s:%d", s.Host, s.Port)
	return err
}

// Up starts a server that Down shut down again, on the same port and
// data, and waits until it accepts connections. Up on a running server does
// nothing. It fails if another process took the port meanwhile.
func (s *Server) Up(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return ErrStopped
	}
	if s.proc != nil {
		return nil
	}
	timeout := s.opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return s.launch(ctx)
}

// DSN returns a connection URL for the superuser and the named database,
// usable by pgx and libpq, for example
// "postgres://postgres@127.0.0.1:5432/app?sslmode=disable". An empty
// database means the one named like the superuser, "postgres".
func (s *Server) DSN(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(Superuser),
		Host:     net.JoinHostPort(s.Host, strconv.Itoa(s.Port)),
		Path:     "/" + database,
		RawPath:  "/" + url.PathEscape(database),
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// LogPath returns the path of the server's log file. It exists until Stop.
func (s *Server) LogPath() string { return s.logPath }

// Log returns the server log written so far.
func (s *Server) Log() (string, error) {
	data, err := os.ReadFile(s.logPath)
	if err != nil {
		return "", fmt.Errorf("read server log: %w", err)
	}
	return string(data), nil
}

// logTail returns the last lines of the server log for error messages.
func (s *Server) logTail() string {
	data, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(unreadable: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Output != nil {
		fmt.Fprintf(s.opts.Output, "pgserver: "+format+"\n", args...)
	}
}

// freePort asks the kernel for a port of 127.0.0.1 that is free right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	return port, nil
}

// childEnv is the environment of initdb and postgres: this process's
// without the PG* variables that could redirect them, in the C locale.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C", "LANG=C")
}

// ownedSettings are the settings pgserver sets itself; Options.Settings
// may not name them.
var ownedSettings = map[string]bool{
	"port": true, "listen_addresses": true, "unix_socket_directories": true,
	"data_directory": true, "config_file": true, "hba_file": true, "ident_file": true,
	"logging_collector": true, "log_destination": true, "log_line_prefix": true,
	"log_statement": true,
}

var settingName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// validateSettings rejects malformed names and the settings pgserver owns.
func validateSettings(settings map[string]string) error {
	for name := range settings {
		if !settingName.MatchString(name) {
			return fmt.Errorf("invalid setting name %q in Options.Settings", name)
		}
		if ownedSettings[strings.ToLower(name)] {
			return fmt.Errorf("setting %q in Options.Settings is managed by pgserver and cannot be overridden", name)
		}
	}
	return nil
}

// serverConf renders the lines appended to postgresql.conf: defaults for a
// throwaway server, then opts.Settings, then the settings pgserver owns.
func serverConf(opts Options) string {
	var b strings.Builder
	b.WriteString("\n# Written by bosun pgserver.\n")
	line := func(name, value string) {
		fmt.Fprintf(&b, "%s = %s\n", name, quoteSetting(value))
	}
	line("fsync", "off")
	line("synchronous_commit", "off")
	line("full_page_writes", "off")
	line("shared_buffers", "32MB")
	line("timezone", "UTC")
	line("log_timezone", "UTC")
	names := make([]string, 0, len(opts.Settings))
	for name := range opts.Settings {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		line(name, opts.Settings[name])
	}
	line("logging_collector", "off")
	line("log_destination", "stderr")
	line("log_line_prefix", logLinePrefix)
	if opts.LogStatements {
		line("log_statement", "all")
	} else {
		line("log_statement", "none")
	}
	return b.String()
}

// quoteSetting quotes a value for postgresql.conf.
func quoteSetting(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `''`, "\n", `\n`, "\r", `\r`)
	return "'" + r.Replace(v) + "'"
}
