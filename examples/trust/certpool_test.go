package trust

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"
)

// testCert is a self-signed certificate for the tests, as PEM.
type testCert struct {
	cert *x509.Certificate
	pem  string
}

// newTestCert makes a self-signed certificate named cn, a CA unless leaf,
// valid until notAfter (a year from now when zero).
func newTestCert(t *testing.T, cn string, leaf bool, notAfter time.Time) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if notAfter.IsZero() {
		notAfter = time.Now().Add(365 * 24 * time.Hour)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             notAfter.Add(-2 * 365 * 24 * time.Hour).Truncate(time.Second),
		NotAfter:              notAfter,
		IsCA:                  !leaf,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return testCert{cert: cert, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// negativeSerial is a certificate whose serial number is -1, as PEM: a
// copy of a new certificate of serial 1 with that one byte changed (its
// signature no longer holds, which parsing does not check).
func negativeSerial(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "negative"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	// The serial is the first INTEGER of the TBSCertificate after the
	// version's [0] tag: 02 01 01.
	i := bytes.Index(der, []byte{0x02, 0x01, 0x01})
	if i < 0 {
		t.Fatal("no serial number 1 in the certificate")
	}
	der[i+2] = 0xff
	if _, err := x509.ParseCertificate(der); err == nil || !strings.Contains(err.Error(), "negative serial number") {
		t.Fatalf("parsing the changed certificate: %v, want the negative serial number refused", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestCertPool(t *testing.T) {
	a := newTestCert(t, "a", false, time.Time{})
	b := newTestCert(t, "b", false, time.Time{})
	expired := newTestCert(t, "expired", false, time.Now().Add(-time.Hour))
	leaf := newTestCert(t, "leaf", true, time.Time{})
	key := "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
	withHeaders := "-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\nAAAA\n-----END CERTIFICATE-----\n"
	notX509 := "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"

	tests := []struct {
		name        string
		adds        []string
		dropExpired bool
		dropNonCA   bool
		// want are the common names of the pool's certificates, in any
		// order; err, a part of the first add's error, if one fails.
		want []string
		err  string
	}{
		{name: "one", adds: []string{a.pem}, want: []string{"a"}},
		{name: "duplicates kept once", adds: []string{a.pem + b.pem, b.pem, a.pem}, want: []string{"a", "b"}},
		{name: "text around blocks", adds: []string{"# corporate roots\n" + a.pem + "\ntrailing words\n"}, want: []string{"a"}},
		{name: "no block", adds: []string{"not a certificate"}, want: nil},
		{name: "expired kept", adds: []string{expired.pem}, want: []string{"expired"}},
		{name: "expired dropped", adds: []string{expired.pem + a.pem}, dropExpired: true, want: []string{"a"}},
		{name: "non-CA kept", adds: []string{leaf.pem}, want: []string{"leaf"}},
		{name: "non-CA dropped", adds: []string{leaf.pem + a.pem}, dropNonCA: true, want: []string{"a"}},
		{name: "negative serial skipped", adds: []string{negativeSerial(t) + a.pem}, want: []string{"a"}},
		{name: "a key", adds: []string{a.pem + key}, err: "PEM block 2 is a PRIVATE KEY"},
		{name: "headers", adds: []string{withHeaders}, err: "PEM block 1 has headers"},
		{name: "not X.509", adds: []string{notX509}, err: "PEM block 1 is not a valid certificate"},
		{name: "an error adds nothing", adds: []string{b.pem + notX509}, err: "PEM block 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newCertPool(tt.dropExpired, tt.dropNonCA)
			var err error
			for _, data := range tt.adds {
				if err = p.addPEM([]byte(data)); err != nil {
					break
				}
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("addPEM: %v, want an error with %q", err, tt.err)
				}
				if p.len() != 0 {
					t.Errorf("the pool holds %d certificates after the error, want none", p.len())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range p.certificates() {
				got = append(got, c.Subject.CommonName)
			}
			if !sameSet(got, tt.want) {
				t.Errorf("the pool holds %v, want %v", got, tt.want)
			}
		})
	}
}

// TestCertPoolOrder: the same certificates from sources in any order make
// the same bundle, byte for byte, ordered by the SHA-256 of their DER; it
// ends without a newline and parses back to the same certificates.
func TestCertPoolOrder(t *testing.T) {
	certs := []testCert{newTestCert(t, "a", false, time.Time{}), newTestCert(t, "b", false, time.Time{}), newTestCert(t, "c", false, time.Time{})}
	forward, backward := newCertPool(false, false), newCertPool(false, false)
	for i := range certs {
		if err := forward.addPEM([]byte(certs[i].pem)); err != nil {
			t.Fatal(err)
		}
		if err := backward.addPEM([]byte(certs[len(certs)-1-i].pem)); err != nil {
			t.Fatal(err)
		}
	}
	if forward.pem() != backward.pem() {
		t.Fatal("the same certificates added in another order make another bundle")
	}
	var last [sha256.Size]byte
	for i, c := range forward.certificates() {
		sum := sha256.Sum256(c.Raw)
		if i > 0 && bytes.Compare(last[:], sum[:]) >= 0 {
			t.Errorf("certificate %d is not after certificate %d by the SHA-256 of its DER", i, i-1)
		}
		last = sum
	}
	bundle := forward.pem()
	if strings.HasSuffix(bundle, "\n") {
		t.Error("the bundle ends with a newline")
	}
	again := newCertPool(false, false)
	if err := again.addPEM([]byte(bundle)); err != nil || again.pem() != bundle {
		t.Errorf("the bundle read back: %v, and gives another bundle: %t", err, again.pem() != bundle)
	}
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s] == 0 {
			return false
		}
		seen[s]--
	}
	return true
}
