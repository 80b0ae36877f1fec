package oracle_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/oracle"
)

// password is the secret value the tests look for.
const password = "hunter2-correct-horse"

// credentials is a log value that holds the password behind a pointer.
type credentials struct {
	User string
	Auth *auth
}

type auth struct {
	Password string
	Raw      []byte
}

func TestNoSecretsInLogs(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte(password))
	tests := []struct {
		name    string
		secrets []string
		entries []bosuntest.LogEntry
		wantIs  []error
		want    []string
	}{
		{
			name:    "clean",
			secrets: []string{password},
			entries: []bosuntest.LogEntry{{Message: "role created", Values: []any{"role", "app", "passwordSet", true}}},
		},
		{
			name:    "in the message",
			secrets: []string{password},
			entries: []bosuntest.LogEntry{{Message: "ok"}, {Message: "using " + password}},
			wantIs:  []error{oracle.ErrSecretFound},
			want:    []string{`secret "hu…" in log line 1 ("using hu…") message`},
		},
		{
			name:    "in the error",
			secrets: []string{password},
			entries: []bosuntest.LogEntry{{Error: true, Message: "connect failed", Err: fmt.Errorf("dial: %w", errors.New("bad password "+password))}},
			wantIs:  []error{oracle.ErrSecretFound},
			want:    []string{`secret "hu…" in log line 0 ("connect failed") error`},
		},
		{
			name:    "in a value",
			secrets: []string{password},
			entries: []bosuntest.LogEntry{{Message: "connecting", Values: []any{"dsn", "postgres://app:" + password + "@db"}}},
			wantIs:  []error{oracle.ErrSecretFound},
			want:    []string{`secret "hu…" in log line 0 ("connecting") value of "dsn"`},
		},
		{
			name:    "in a key",
			secrets: []string{password},
			entries: []bosuntest.LogEntry{{Message: "connecting", Values: []any{password, 1}}},
			wantIs:  []error{oracle.ErrSecretFound},
			want:    []string{`secret "hu…" in log line 0 ("connecting") key "hu…"`},
		},
		{
			name:    "behind a pointer in a struct",
			secrets: []string{password},
			entries: []bosuntest.LogEntry{{Message: "connecting", Values: []any{"creds", credentials{User: "app", Auth: &auth{Password: password}}}}},
			wantIs:  []error{oracle.ErrSecretFound},
			want:    []string{`secret "hu…" in log line 0 ("connecting") value of "creds"`},
		},
		{
			name:    "bytes",
			secrets: []string{password},
			entries: []bosuntest.LogEntry{{Message: "read", Values: []any{"data", []byte(password)}}},
			wantIs:  []error{oracle.ErrSecretFound},
			want:    []string{`secret "hu…" in log line 0 ("read") value of "data"`},
		},
		{
			name:    "base64 in a value",
			secrets: []string{password},
			entries: []bosuntest.LogEntry{{Message: "secret data", Values: []any{"data", map[string]string{"password": b64}}}},
			wantIs:  []error{oracle.ErrSecretFound},
			want:    []string{`base64 of secret "hu…" in log line 0 ("secret data") value of "data"`},
		},
		{
			name:    "base64 of bytes in a struct",
			secrets: []string{password},
			entries: []bosuntest.LogEntry{{Message: "creds", Values: []any{"creds", &credentials{Auth: &auth{Raw: []byte(password)}}}}},
			wantIs:  []error{oracle.ErrSecretFound},
			want:    []string{`base64 of secret "hu…" in log line 0 ("creds") value of "creds"`},
		},
		{
			name:    "unpadded url base64",
			secrets: []string{"\xfb\xff\xfe-secret"},
			entries: []bosuntest.LogEntry{{Message: "token " + base64.RawURLEncoding.EncodeToString([]byte("\xfb\xff\xfe-secret"))}},
			wantIs:  []error{oracle.ErrSecretFound},
			want:    []string{`base64 of secret`, `("token -_…") message`},
		},
		{
			name:    "second secret, empty ones ignored",
			secrets: []string{"", password, "s3cr3t-token"},
			entries: []bosuntest.LogEntry{{Message: "token s3cr3t-token"}},
			wantIs:  []error{oracle.ErrSecretFound},
			want:    []string{`secret "s3…" in log line 0 ("token s3…") message`},
		},
		{
			name:    "quoted in the message",
			secrets: []string{`pa"ss\word`},
			entries: []bosuntest.LogEntry{{Message: `login "app" with pa"ss\word`}},
			wantIs:  []error{oracle.ErrSecretFound},
			want:    []string{`secret "pa…" in log line 0 ("login \"app\" with pa…") message`},
		},
		{
			name:    "too short",
			secrets: []string{password, "abc"},
			wantIs:  []error{oracle.ErrShortSecret},
			want:    []string{"secret 1 is 3 bytes long"},
		},
		{
			name:    "nothing to look for",
			secrets: []string{"", ""},
			wantIs:  []error{oracle.ErrNoSecrets},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := oracle.NoSecretsInLogs(tt.secrets, tt.entries)
			checkErr(t, err, tt.wantIs, tt.want)
			var secrets []string
			for _, s := range tt.secrets {
				if len(s) >= oracle.MinSecretLength {
					secrets = append(secrets, s, base64.RawStdEncoding.EncodeToString([]byte(s)))
				}
			}
			unwanted(t, err, secrets)
			for _, s := range secrets {
				unwanted(t, err, []string{strconv.Quote(s)[1 : len(strconv.Quote(s))-1]})
			}
		})
	}
}
