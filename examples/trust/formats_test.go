package trust

import (
	"bytes"
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"

	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// testPool is a pool of n new CA certificates, and its certificates in
// order.
func testPool(t *testing.T, names ...string) []*x509.Certificate {
	t.Helper()
	p := newCertPool(false, false)
	for _, n := range names {
		if err := p.addPEM([]byte(newTestCert(t, n, false, time.Time{}).pem)); err != nil {
			t.Fatal(err)
		}
	}
	return p.certificates()
}

// TestJKS: the store opens with its password and holds each certificate
// as a trusted entry under its alias, dated by its NotBefore; the same
// certificates and password give the same bytes; another password does
// not open it.
func TestJKS(t *testing.T) {
	certs := testPool(t, "a", "b", "c")
	data, err := encodeJKS(certs, trustv1alpha1.DefaultJKSPassword)
	if err != nil {
		t.Fatal(err)
	}
	again, err := encodeJKS(certs, trustv1alpha1.DefaultJKSPassword)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Error("the same certificates and password give another JKS store")
	}
	ks := keystore.New()
	if err := ks.Load(bytes.NewReader(data), []byte(trustv1alpha1.DefaultJKSPassword)); err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, c := range certs {
		// JKS aliases are case-insensitive: the store keeps them in lower
		// case.
		want = append(want, strings.ToLower(alias(c)))
		entry, err := ks.GetTrustedCertificateEntry(alias(c))
		if err != nil {
			t.Errorf("entry %s: %v", alias(c), err)
			continue
		}
		if !bytes.Equal(entry.Certificate.Content, c.Raw) || !entry.CreationTime.Equal(c.NotBefore) {
			t.Errorf("entry %s holds another certificate, or another date (%s, want %s)", alias(c), entry.CreationTime, c.NotBefore)
		}
	}
	got = ks.Aliases()
	if !sameSet(got, want) {
		t.Errorf("aliases %v, want %v", got, want)
	}
	if err := keystore.New().Load(bytes.NewReader(data), []byte("wrong")); err == nil {
		t.Error("another password opens the JKS store")
	}
}

// TestPKCS12: for each profile, and without a password, the store opens
// with its password and holds the certificates in their order; the same
// inputs give the same bytes.
func TestPKCS12(t *testing.T) {
	certs := testPool(t, "a", "b")
	tests := []struct {
		name     string
		password string
		profile  trustv1alpha1.PKCS12Profile
	}{
		{name: "default profile", password: "s3cret"},
		{name: "LegacyRC2", password: "s3cret", profile: trustv1alpha1.LegacyRC2PKCS12Profile},
		{name: "LegacyDES", password: "s3cret", profile: trustv1alpha1.LegacyDESPKCS12Profile},
		{name: "Modern2023", password: "s3cret", profile: trustv1alpha1.Modern2023PKCS12Profile},
		{name: "no password", password: trustv1alpha1.DefaultPKCS12Password, profile: trustv1alpha1.Modern2023PKCS12Profile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := encodePKCS12(certs, tt.password, tt.profile)
			if err != nil {
				t.Fatal(err)
			}
			again, err := encodePKCS12(certs, tt.password, tt.profile)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, again) {
				t.Error("the same certificates, password and profile give another store")
			}
			decoded, err := pkcs12.DecodeTrustStore(data, tt.password)
			if err != nil {
				t.Fatal(err)
			}
			var got, want [][]byte
			for _, c := range decoded {
				got = append(got, c.Raw)
			}
			for _, c := range certs {
				want = append(want, c.Raw)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the store's certificates (-want +got):\n%s", diff)
			}
			if tt.password != "" {
				if _, err := pkcs12.DecodeTrustStore(data, "wrong"); err == nil {
					t.Error("another password opens the store")
				}
			}
		})
	}
}
