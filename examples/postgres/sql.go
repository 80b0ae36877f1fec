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

// ErrReservedName is wrapped by the errors of ValidName for the names
// PostgreSQL keeps for itself.
var ErrReservedName = errors.New("reserved name")

// reservedNames are names PostgreSQL keeps for itself, or for its
// superuser and template databases, in lower case. Names starting with
// "pg_" are reserved too.
var reservedNames = map[string]bool{
	"postgres": true, "template0": true, "template1": true,
	"public": true, "none": true, "current_user": true, "current_role": true, "session_user": true,
}

// Reserved reports whether PostgreSQL keeps name for itself: the
// superuser postgres, the databases template0 and template1, the role
// names public, none, current_user, current_role and session_user, and
// every name starting with "pg_"; in any case of letters, since a name
// that differs from one of them only in case would mislead a reader.
func Reserved(name string) bool {
	lower := strings.ToLower(name)
	return reservedNames[lower] || strings.HasPrefix(lower, "pg_")
}

// ValidName reports, with an error wrapping ErrInvalidIdentifier or
// ErrReservedName, whether s cannot name a role or a database the operator
// manages: it must be a valid identifier (ValidIdentifier) and not
// Reserved. Like ValidIdentifier, the error does not repeat s.
func ValidName(s string) error {
	if err := ValidIdentifier(s); err != nil {
		return err
	}
	if Reserved(s) {
		return fmt.Errorf("%w: PostgreSQL keeps postgres, template0, template1, public, none, current_user, "+
			"current_role, session_user and the names starting with pg_ for itself", ErrReservedName)
	}
	return nil
}

// nameHashLength is the number of hexadecimal digits of the hash in the
// hashed form of SQLName: 48 bits.
const nameHashLength = 12

// nameSeparator separates the namespace from the name in the plain form of
// SQLName. Neither part holds it, and the hashed form never does.
const nameSeparator = "__"

// SQLName returns the PostgreSQL name of the Role or Database name in
// namespace: the external name the operator gives it. It is unique per
// namespace and name, a valid identifier of at most MaxIdentifierLength
// bytes, and never Reserved:
//
//   - the plain form "<namespace>__<name>" with every '-' made '_', such as
//     "shop_a__orders_owner", when both parts are made of lower-case ASCII
//     letters, digits and single inner dashes, the namespace starts with a
//     letter, the result fits and does not start with "pg_";
//   - otherwise the hashed form: namespace and name joined by '_', every
//     character but lower-case ASCII letters and digits made '_', runs of
//     '_' made one, prefixed with "x_" when it would start with a digit or
//     "pg_", cut to fit, then '_' and the first 12 hexadecimal digits of
//     the SHA-256 of "<namespace>/<name>", such as
//     "shop_has_dot_6803478f42cc" for the object has.dot in namespace
//     shop.
//
// A plain name holds "__" exactly once, where the namespace ends, so two
// objects never get the same plain name; a hashed name never holds "__",
// so it is never a plain one, and two hashed names are the same only when
// 48 bits of their hashes are. Even then no object takes another's role or
// database: the operator marks what it creates with the object's UID and
// reports the second object's as a conflict.
func SQLName(namespace, name string) string {
	if plainPart(namespace) && plainPart(name) && namespace[0] >= 'a' && namespace[0] <= 'z' {
		plain := dashesToUnderscores(namespace) + nameSeparator + dashesToUnderscores(name)
		if len(plain) <= MaxIdentifierLength && !Reserved(plain) {
			return plain
		}
	}
	return hashedName(namespace, name)
}

// plainPart reports whether s may be a part of a plain SQLName: lower-case
// ASCII letters, digits and dashes, with no dash first, last or next to
// another.
func plainPart(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if c != '-' && (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// dashesToUnderscores returns s with every '-' replaced by '_'.
func dashesToUnderscores(s string) string { return strings.ReplaceAll(s, "-", "_") }

// hashedName returns the hashed form of SQLName.
func hashedName(namespace, name string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	hash := hex.EncodeToString(sum[:])[:nameHashLength]
	var b strings.Builder
	for _, c := range []byte(namespace + "_" + name) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		} else if s := b.String(); s != "" && s[len(s)-1] != '_' {
			b.WriteByte('_')
		}
	}
	readable := b.String()
	if readable == "" || readable[0] >= '0' && readable[0] <= '9' || strings.HasPrefix(readable, "pg_") {
		readable = "x_" + readable
	}
	readable = strings.TrimRight(readable[:min(len(readable), MaxIdentifierLength-1-nameHashLength)], "_")
	return readable + "_" + hash
}

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

// newCredentials returns a new password and its SCRAM verifier.
func newCredentials() (password, verifier string, err error) {
	password, err = newPassword()
	if err != nil {
		return "", "", err
	}
	verifier, err = scramVerifier(password)
	if err != nil {
		return "", "", err
	}
	return password, verifier, nil
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
