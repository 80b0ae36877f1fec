package trust

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"time"
)

// certPool is the set of certificates of a bundle, keyed by the SHA-256 of
// their DER encoding, so that a certificate given by two sources is kept
// once. Its certificates are ordered by that digest, so the same sources
// always give the same bundle, byte for byte, whatever their order.
type certPool struct {
	certs map[[sha256.Size]byte]*x509.Certificate
	// dropExpired leaves out certificates past their NotAfter at now.
	dropExpired bool
	// dropNonCA leaves out certificates that are not CAs.
	dropNonCA bool
	now       func() time.Time
	// skipped counts the certificates left out: by the filters, or for a
	// negative serial number, which Go's x509 refuses to parse but some
	// long-lived roots have.
	skipped int
}

// newCertPool returns an empty pool with the filters of the operator's
// --filter-expired-certificates and --filter-non-ca-certs.
func newCertPool(dropExpired, dropNonCA bool) *certPool {
	return &certPool{
		certs:       map[[sha256.Size]byte]*x509.Certificate{},
		dropExpired: dropExpired,
		dropNonCA:   dropNonCA,
		now:         time.Now,
	}
}

// addPEM adds the certificates of data, a sequence of PEM blocks. Every
// block must be a CERTIFICATE without headers that parses as X.509;
// anything else is an error naming the block, and adds nothing of data.
// Text around the blocks is ignored, as PEM allows.
func (p *certPool) addPEM(data []byte) error {
	var parsed []*x509.Certificate
	skipped := 0
	for n := 1; ; n++ {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("PEM block %d is a %s: only CERTIFICATE blocks may be in a bundle", n, block.Type)
		}
		if len(block.Headers) > 0 {
			return fmt.Errorf("PEM block %d has headers: a bundle's certificates may have none", n)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			if strings.Contains(err.Error(), "negative serial number") {
				skipped++
				continue
			}
			return fmt.Errorf("PEM block %d is not a valid certificate: %w", n, err)
		}
		parsed = append(parsed, cert)
	}
	for _, c := range parsed {
		if p.dropExpired && p.now().After(c.NotAfter) || p.dropNonCA && !c.IsCA {
			skipped++
			continue
		}
		p.certs[sha256.Sum256(c.Raw)] = c
	}
	p.skipped += skipped
	return nil
}

// len is the number of certificates in the pool.
func (p *certPool) len() int { return len(p.certs) }

// certificates returns the pool's certificates in the order of the
// SHA-256 of their DER encoding.
func (p *certPool) certificates() []*x509.Certificate {
	digests := make([][sha256.Size]byte, 0, len(p.certs))
	for d := range p.certs {
		digests = append(digests, d)
	}
	slices.SortFunc(digests, func(a, b [sha256.Size]byte) int { return bytes.Compare(a[:], b[:]) })
	out := make([]*x509.Certificate, len(digests))
	for i, d := range digests {
		out[i] = p.certs[d]
	}
	return out
}

// pem is the bundle: the pool's certificates as PEM, in order, without a
// newline after the last.
func (p *certPool) pem() string {
	var b bytes.Buffer
	for _, c := range p.certificates() {
		// Encoding to a buffer cannot fail.
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
