package trust

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"

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
// protection at all when the password is empty. Its salts and IVs come
// from a stream seeded with the certificates, the password and the
// profile, not from the system's randomness: the same inputs give the same
// bytes, so that a pass over an unchanged Bundle has nothing to write. The
// store holds no secret for them to protect: the password guards only its
// integrity.
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
	seed := sha256.New()
	for _, c := range certs {
		seed.Write(c.Raw)
	}
	seed.Write([]byte("\x00" + password + "\x00" + string(profile)))
	out, err := enc.WithRand(&seededStream{seed: seed.Sum(nil)}).EncodeTrustStoreEntries(entries, password)
	if err != nil {
		return nil, fmt.Errorf("writing the PKCS#12 store: %w", err)
	}
	return out, nil
}

// seededStream is a deterministic stream of bytes: the SHA-256 of its seed
// and a counter, block after block.
type seededStream struct {
	seed    []byte
	counter uint64
	buf     []byte
}

// Read fills p from the stream; it never fails.
func (s *seededStream) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(s.buf) == 0 {
			var ctr [8]byte
			binary.BigEndian.PutUint64(ctr[:], s.counter)
			s.counter++
			block := sha256.Sum256(append(slices.Clone(s.seed), ctr[:]...))
			s.buf = block[:]
		}
		c := copy(p[n:], s.buf)
		s.buf = s.buf[c:]
		n += c
	}
	return n, nil
}
