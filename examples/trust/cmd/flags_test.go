package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/bosunkit/bosun/examples/trust/internal/trustmanager"
)

// trustManagerFlag matches a flag definition in trust-manager's options
// (cmd/trust-manager/app/options): fs.<Type>Var[P](&<field>, "<name>",
// ["<shorthand>",] <default>, ...), or fs.Var(&<field>, "<name>", ...).
var trustManagerFlag = regexp.MustCompile(`fs\.(\w*)Var(P?)\(&[\w.]+,\s*"([a-z0-9-]+)",\s*(?:"(\w)",\s*)?`)

// connectionFlags are the flags genericclioptions.ConfigFlags adds to
// trust-manager's command: kubectl's.
var connectionFlags = []string{
	"kubeconfig", "cache-dir", "certificate-authority", "client-certificate", "client-key", "token",
	"as", "as-group", "as-uid", "username", "password", "cluster", "user", "namespace", "context",
	"server", "tls-server-name", "insecure-skip-tls-verify", "request-timeout", "disable-compression",
}

// TestFlagsOfTrustManager reads the flags trust-manager defines, from its
// module at the pinned version, and finds each on the command line of
// the port, of the same type and shorthand, with the same default: every
// argument trust-manager takes, the port takes too.
func TestFlagsOfTrustManager(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(trustmanager.Dir(t), "cmd", "trust-manager", "app", "options", "options.go"))
	if err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("trust", pflag.ContinueOnError)
	bindFlags(fs)
	// The defaults of trust-manager's flags, as pflag prints them.
	defaults := map[string]string{
		"readiness-probe-port": "6060", "readiness-probe-path": "/readyz", "leader-elect": "true",
		"leader-election-lease-duration": "15s", "leader-election-renew-deadline": "10s", "metrics-port": "9402",
		"trust-namespace": "cert-manager", "default-package-location": "", "secret-targets-enabled": "false",
		"filter-expired-certificates": "false", "filter-non-ca-certs": "false", "target-namespaces": "[]",
		"log-format": "text", "log-level": "1", "webhook-host": "0.0.0.0", "webhook-port": "6443",
		"webhook-certificate-dir": "/tls", "tls-min-version": "", "tls-cipher-suites": "[]", "tls-curve-preferences": "[]",
	}
	seen := 0
	for _, m := range trustManagerFlag.FindAllStringSubmatch(string(src), -1) {
		typ, name, short := m[1], m[3], m[4]
		seen++
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("trust-manager's --%s is not a flag of the port", name)
			continue
		}
		if f.Shorthand != short {
			t.Errorf("--%s: shorthand %q, trust-manager's %q", name, f.Shorthand, short)
		}
		if want := pflagType(typ); want != "" && f.Value.Type() != want {
			t.Errorf("--%s is a %s, trust-manager's a %s", name, f.Value.Type(), want)
		}
		want, ok := defaults[name]
		if !ok {
			t.Errorf("trust-manager's --%s is new to this test: say its default", name)
		} else if f.DefValue != want {
			t.Errorf("--%s defaults to %q, trust-manager's to %q", name, f.DefValue, want)
		}
	}
	if seen != len(defaults) {
		t.Errorf("found %d flags in trust-manager's options, want the %d this test knows", seen, len(defaults))
	}
	for _, name := range connectionFlags {
		if fs.Lookup(name) == nil {
			t.Errorf("kubectl's --%s, which trust-manager takes, is not a flag of the port", name)
		}
	}
}

// pflagType is the pflag type of a flag defined with fs.<typ>Var ("int"
// for IntVar, "stringSlice" for StringSliceVar), or "" for fs.Var (a
// Value of its own).
func pflagType(typ string) string {
	if typ == "" {
		return ""
	}
	return strings.ToLower(typ[:1]) + typ[1:]
}
