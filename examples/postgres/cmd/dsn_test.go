package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestServerDSN checks where the DSN comes from: --postgres-dsn first, then
// the file --postgres-dsn-file names, then $POSTGRES_DSN; and that no error
// holds the DSN.
func TestServerDSN(t *testing.T) {
	const secret = "postgres://admin:s3cr3t@db:5432/postgres"
	dir := t.TempDir()
	file := filepath.Join(dir, "dsn")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	blank := filepath.Join(dir, "blank")
	if err := os.WriteFile(blank, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, flag, file, env string
		want                  string
		// wantErr is a part of the error's text; empty for no error.
		wantErr string
	}{
		{name: "flag", flag: "postgres://flag", want: "postgres://flag"},
		{name: "flag before file and environment", flag: "postgres://flag", file: file, env: "postgres://env", want: "postgres://flag"},
		{name: "file, newline trimmed", file: file, want: secret},
		{name: "file before environment", file: file, env: "postgres://env", want: secret},
		{name: "environment", env: "postgres://env\n", want: "postgres://env"},
		{name: "missing file", file: filepath.Join(dir, "missing"), env: "postgres://env", wantErr: "--postgres-dsn-file"},
		{name: "empty file", file: blank, wantErr: "is empty"},
		{name: "nothing", wantErr: "POSTGRES_DSN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == envDSN {
					return tt.env
				}
				return ""
			}
			got, err := serverDSN(tt.flag, tt.file, getenv)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
				if strings.Contains(gotErr, "s3cr3t") {
					t.Errorf("error %q holds the password", gotErr)
				}
			}
			if diff := cmp.Diff([]any{tt.want, true}, []any{got, strings.Contains(gotErr, tt.wantErr) && (tt.wantErr == "") == (err == nil)}); diff != "" {
				t.Errorf("serverDSN (-want +got):\n%s\nerror: %v", diff, err)
			}
		})
	}
}
