package postgres

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// MaxIdentifierLength is the longest identifier PostgreSQL keeps without
// truncating it, in bytes.
const MaxIdentifierLength = 63

// ErrInvalidIdentifier is wrapped by the errors of ValidIdentifier.
var ErrInvalidIdentifier = errors.New("invalid identifier")

// ValidIdentifier reports, with an error wrapping ErrInvalidIdentifier,
// whether s is not a name the operator accepts: 1 to MaxIdentifierLength
// bytes of ASCII letters, digits and underscores, not starting with a
// digit. The error describes what is wrong without repeating s, so that
// the offending text appears nowhere but in the object.
func ValidIdentifier(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%w: empty", ErrInvalidIdentifier)
	case len(s) > MaxIdentifierLength:
		return fmt.Errorf("%w: %d bytes, at most %d allowed", ErrInvalidIdentifier, len(s), MaxIdentifierLength)
	case s[0] >= '0' && s[0] <= '9':
		return fmt.Errorf("%w: starts with a digit", ErrInvalidIdentifier)
	}
	for i := range len(s) {
		c := s[i]
		if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') {
			continue
		}
		return fmt.Errorf("%w: byte %d is not an ASCII letter, digit or underscore", ErrInvalidIdentifier, i)
	}
	return nil
}

// SQLName returns the PostgreSQL name of the object named name: the
// name with every '-' replaced by '_', since Kubernetes names allow dashes
// and not underscores, and plain PostgreSQL identifiers the other way round.
// It is the external name of Roles and Databases, and the role a Database's
// spec.owner stands for. The result may still be invalid (a dot, a leading
// digit, too long); ValidIdentifier says so.
func SQLName(name string) string { return strings.ReplaceAll(name, "-", "_") }

// quote returns name quoted as an SQL identifier.
func quote(name string) string { return pgx.Identifier{name}.Sanitize() }

// passwordBytes is the number of random bytes in a generated password.
const passwordBytes = 24

// newPassword returns a random password of hexadecimal digits.
func newPassword() (string, error) {
	b := make([]byte, passwordBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating a password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// scramIterations is the PBKDF2 iteration count of the verifiers
// scramVerifier makes, PostgreSQL's default.
const scramIterations = 4096

// scramVerifier returns the SCRAM-SHA-256 verifier of password in the form
// PostgreSQL stores and accepts in place of a password:
// SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>.
func scramVerifier(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("generating a salt: %w", err)
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, scramIterations, sha256.Size)
	if err != nil {
		return "", fmt.Errorf("deriving the password key: %w", err)
	}
	clientKey := hmacSHA256(salted, "Client Key")
	storedKey := sha256.Sum256(clientKey)
	serverKey := hmacSHA256(salted, "Server Key")
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", scramIterations, b64(salt), b64(storedKey[:]), b64(serverKey)), nil
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// literal returns s as an SQL string literal. It is used only for values
// made of base64, hexadecimal or identifier characters, which need no
// escaping, but doubles quotes all the same.
func literal(s string) string {
	out := make([]byte, 0, len(s)+2)
	out = append(out, '\'')
	for i := range len(s) {
		if s[i] == '\'' {
			out = append(out, '\'')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}
