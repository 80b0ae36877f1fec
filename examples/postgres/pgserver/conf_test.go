package pgserver

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
)

func TestValidateSettings(t *testing.T) {
	tests := []struct {
		name     string
		settings map[string]string
		wantErr  string
	}{
		{name: "none"},
		{name: "ordinary", settings: map[string]string{"max_connections": "20", "auto_explain.log_min_duration": "0"}},
		{name: "owned", settings: map[string]string{"log_line_prefix": "%m"}, wantErr: `setting "log_line_prefix" in Options.Settings is managed by pgserver`},
		{name: "owned in capitals", settings: map[string]string{"LISTEN_ADDRESSES": "*"}, wantErr: "is managed by pgserver"},
		{name: "malformed", settings: map[string]string{"a = 1\nport": "2"}, wantErr: "invalid setting name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validateSettings(tt.settings)
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("validateSettings() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("validateSettings() = %v, want an error mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestServerConf(t *testing.T) {
	got := serverConf(Options{
		LogStatements: true,
		Settings:      map[string]string{"search_path": `a'b\c` + "\n", "fsync": "on"},
	})
	want := `
# Written by bosun pgserver.
fsync = 'off'
synchronous_commit = 'off'
full_page_writes = 'off'
shared_buffers = '32MB'
timezone = 'UTC'
log_timezone = 'UTC'
fsync = 'on'
search_path = 'a''b\\c\n'
logging_collector = 'off'
log_destination = 'stderr'
log_line_prefix = '%m|%p|%u|%d|%a|'
log_statement = 'all'
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("serverConf() mismatch (-want +got):\n%s", diff)
	}
	if off := serverConf(Options{}); !strings.HasSuffix(off, "log_statement = 'none'\n") {
		t.Errorf("serverConf() without LogStatements ends with\n%s", off)
	}
}

func TestDSN(t *testing.T) {
	srv := &Server{Host: "127.0.0.1", Port: 54321}
	tests := []struct {
		database string
		want     string
	}{
		{database: "app", want: "postgres://postgres@127.0.0.1:54321/app?sslmode=disable"},
		{database: "", want: "postgres://postgres@127.0.0.1:54321/?sslmode=disable"},
		{database: "my db/x?", want: "postgres://postgres@127.0.0.1:54321/my%20db%2Fx%3F?sslmode=disable"},
	}
	for _, tt := range tests {
		got := srv.DSN(tt.database)
		if got != tt.want {
			t.Errorf("DSN(%q) = %s, want %s", tt.database, got, tt.want)
		}
		cfg, err := pgx.ParseConfig(got)
		if err != nil {
			t.Fatalf("pgx.ParseConfig(%s): %v", got, err)
		}
		// An empty database reaches the server as none, which then picks
		// the one named like the user.
		if cfg.Database != tt.database || cfg.User != Superuser || cfg.Host != "127.0.0.1" || cfg.Port != 54321 {
			t.Errorf("pgx reads %s as database %q user %q host %s port %d", got, cfg.Database, cfg.User, cfg.Host, cfg.Port)
		}
	}
}
