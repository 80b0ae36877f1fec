package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// DefaultPackage is a default CA package, the certificates a Bundle's
// source useDefaultCAs stands for: a JSON file with the package's name,
// version and PEM bundle, in the format of trust-manager's
// --default-package-location (its trust-packages images write one).
type DefaultPackage struct {
	// Name names the package, such as cert-manager-debian.
	Name string `json:"name"`
	// Version is the package's version.
	Version string `json:"version"`
	// Bundle holds the package's certificates as PEM.
	Bundle string `json:"bundle"`
}

// ReadDefaultPackage reads the default CA package at path, and checks it:
// a name, a version, and a bundle of valid certificates.
func ReadDefaultPackage(path string) (*DefaultPackage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the default CA package: %w", err)
	}
	defer f.Close()
	return decodeDefaultPackage(f)
}

// decodeDefaultPackage reads and checks a default CA package.
func decodeDefaultPackage(r io.Reader) (*DefaultPackage, error) {
	p := &DefaultPackage{}
	if err := json.NewDecoder(r).Decode(p); err != nil {
		return nil, fmt.Errorf("decoding the default CA package: %w", err)
	}
	switch {
	case p.Name == "":
		return nil, errors.New("the default CA package has no name")
	case p.Version == "":
		return nil, errors.New("the default CA package has no version")
	}
	pool := newCertPool(false, false)
	if err := pool.addPEM([]byte(p.Bundle)); err != nil {
		return nil, fmt.Errorf("the default CA package's bundle: %w", err)
	}
	if pool.len() == 0 {
		return nil, errors.New("the default CA package's bundle holds no certificate")
	}
	return p, nil
}

// versionID is what a Bundle's status.defaultCAVersion reports of the
// package: its name, its version and the first 16 hex digits of the
// SHA-256 of its bundle, joined by dashes, so that a package rebuilt
// under the same version is told apart.
func (p *DefaultPackage) versionID() string {
	sum := sha256.Sum256([]byte(p.Bundle))
	return p.Name + "-" + p.Version + "-" + hex.EncodeToString(sum[:8])
}
