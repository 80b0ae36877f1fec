package trust

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"fmt"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"

	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
)

// alias names a certificate in a JKS or PKCS#12 store: the first eight hex
// digits of the SHA-256 of its DER encoding, a bar, and its subject, so
// that two certificates with one subject get two names.
func alias(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	return hex.EncodeToString(sum[:4]) + "|" + c.Subject.String()
}

// encodeJKS writes certs as a Java keystore of trusted certificate
// entries, in their order, each dated by its NotBefore so that the same
// certificates and password give the same bytes, protected by password.
func encodeJKS(certs []*x509.Certificate, password string) ([]byte, error) {
	ks := keystore.New(keystore.WithOrderedAliases())
	for _, c := range certs {
		entry := keystore.TrustedCertificateEntry{
			CreationTime: c.NotBefore,
			Certificate:  keystore.Certificate{Type: "X509", Content: c.Raw},
		}
		if err := ks.SetTrustedCertificateEntry(alias(c), entry); err != nil {
			return nil, fmt.Errorf("adding %s to the JKS store: %w", c.Subject, err)
		}
	}
	var b bytes.Buffer
	if err := ks.Store(&b, []byte(password)); err != nil {
		return nil, fmt.Errorf("writing the JKS store: %w", err)
	}
	return b.Bytes(), nil
}

// encodePKCS12 writes certs as a PKCS#12 trust store with the algorithms
// of profile (LegacyRC2 when empty), protected by password, or with no
// protection at all when the password is empty. Its salts are random: the
// same certificates give other bytes each time.
func encodePKCS12(certs []*x509.Certificate, password string, profile trustv1alpha1.PKCS12Profile) ([]byte, error) {
	entries := make([]pkcs12.TrustStoreEntry, len(certs))
	for i, c := range certs {
		entries[i] = pkcs12.TrustStoreEntry{Cert: c, FriendlyName: alias(c)}
	}
	enc := pkcs12.LegacyRC2
	switch {
	case password == "":
		enc = pkcs12.Passwordless
	case profile == trustv1alpha1.LegacyDESPKCS12Profile:
		enc = pkcs12.LegacyDES
	case profile == trustv1alpha1.Modern2023PKCS12Profile:
		enc = pkcs12.Modern2023
	}
	out, err := enc.EncodeTrustStoreEntries(entries, password)
	if err != nil {
		return nil, fmt.Errorf("writing the PKCS#12 store: %w", err)
	}
	return out, nil
}
