package main

import (
	"testing"

	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
)

// parse binds the command's flags, parses args and builds the operator.
func parse(t *testing.T, args ...string) error {
	t.Helper()
	fs := pflag.NewFlagSet("trust", pflag.ContinueOnError)
	cl := bindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	_, _, err := cl.operator()
	return err
}

// TestCipherSuiteNamesOfTrustManager: trust-manager v0.25.0
// reads --tls-cipher-suites with component-base's cliflag.TLSCipherSuites,
// which keeps the legacy names of the ChaCha20 suites (without _SHA256),
// as kube-apiserver does. The port refuses them: trust-manager's
// Deployment with these arguments exits 2.
func TestCipherSuiteNamesOfTrustManager(t *testing.T) {
	for _, name := range []string{"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305"} {
		if err := parse(t, "--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,"+name); err != nil {
			t.Errorf("--tls-cipher-suites with %s, which trust-manager takes: %v", name, err)
		}
	}
}

// TestCurvePreferencesTrustManagerRefuses: trust-manager v0.25.0
// checks --tls-curve-preferences with cliflag.TLSCurvePreferences and
// refuses to start with an ID out of 1-65535, a duplicate or a curve Go
// does not know; the port takes any int32, truncates it to a tls.CurveID
// (65559 becomes 23, P-256) and starts with it.
func TestCurvePreferencesTrustManagerRefuses(t *testing.T) {
	for _, v := range []string{"0", "65559", "23,23", "1234"} {
		if err := parse(t, "--tls-curve-preferences="+v); err == nil {
			t.Errorf("--tls-curve-preferences=%s is taken; trust-manager refuses it", v)
		}
	}
}

// TestLogLevelTrustManagerTakes: trust-manager maps --log-level
// n to the slog level -n: the higher, the more it logs. The port makes it
// zapcore.Level(-n), an int8: from 129 on it wraps to a positive level
// above Fatal, and the operator logs nothing at all.
func TestLogLevelTrustManagerTakes(t *testing.T) {
	fs := pflag.NewFlagSet("trust", pflag.ContinueOnError)
	cl := bindFlags(fs)
	if err := fs.Parse([]string{"--log-level=200"}); err != nil {
		t.Fatal(err)
	}
	_, flags, err := cl.operator()
	if err != nil {
		t.Fatal(err)
	}
	if flags.Zap.Level == nil || !flags.Zap.Level.Enabled(zapcore.InfoLevel) {
		t.Errorf("--log-level=200 turns off info logs (zap level %v); trust-manager logs everything at it", flags.Zap.Level)
	}
}
