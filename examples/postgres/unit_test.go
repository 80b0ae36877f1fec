package postgres

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/conditions"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/managed"
)

func TestValidIdentifier(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"plain", "app_user", true},
		{"upper case and digits", "App2", true},
		{"leading underscore", "_x", true},
		{"63 bytes", strings.Repeat("a", 63), true},
		{"empty", "", false},
		{"64 bytes", strings.Repeat("a", 64), false},
		{"70 bytes", strings.Repeat("a", 70), false},
		{"leading digit", "1role", false},
		{"double quote", `a"b`, false},
		{"single quote", "a'b", false},
		{"semicolon", "a;b", false},
		{"dash", "a-b", false},
		{"space", "a b", false},
		{"non-ASCII letter", "rôle", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidIdentifier(tt.in)
			if got := err == nil; got != tt.want {
				t.Fatalf("ValidIdentifier(%q) = %v, want valid %t", tt.in, err, tt.want)
			}
			if err != nil && !errors.Is(err, ErrInvalidIdentifier) {
				t.Errorf("error %v does not wrap ErrInvalidIdentifier", err)
			}
			if err != nil && tt.in != "" && strings.Contains(err.Error(), tt.in) {
				t.Errorf("error %q repeats the identifier", err)
			}
		})
	}
}

// TestValidateInvalidSpec checks that bad names are terminal InvalidSpec
// errors.
func TestValidateInvalidSpec(t *testing.T) {
	d := &pgv1.Database{Spec: pgv1.DatabaseSpec{Owner: "x;y"}}
	managed.SetExternalName(d, "db")
	err := validateDatabase(d)
	reason, sev, _ := conditions.FromError(err)
	if diff := cmp.Diff([]string{managed.ReasonInvalidSpec, string(conditions.SeverityError)}, []string{reason, string(sev)}); diff != "" {
		t.Errorf("reason, severity (-want +got):\n%s", diff)
	}
	r := &pgv1.Role{}
	managed.SetExternalName(r, "ok_name")
	r.Spec.ConnectionLimit = new(int32)
	*r.Spec.ConnectionLimit = -2
	if err := validateRole(r); err == nil {
		t.Errorf("validateRole accepted connection limit -2")
	}
}

// TestValidateBeforeNameRecorded checks objects whose external name is not
// recorded yet (the first pass): they are judged by the name the managed
// step will record, the object's name with dashes made underscores.
func TestValidateBeforeNameRecorded(t *testing.T) {
	tests := []struct {
		name, owner      string
		roleErr, dataErr bool
	}{
		{name: "orders", owner: "orders-owner"},
		{name: "my-db", owner: "app"},
		{name: "1st", owner: "app", roleErr: true, dataErr: true},
		{name: "a.b", owner: "app", roleErr: true, dataErr: true},
		{name: "orders", owner: "o'wner", dataErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.owner, func(t *testing.T) {
			d := &pgv1.Database{ObjectMeta: metav1.ObjectMeta{Name: tt.name}, Spec: pgv1.DatabaseSpec{Owner: tt.owner}}
			if err := validateDatabase(d); (err != nil) != tt.dataErr {
				t.Errorf("validateDatabase: %v, want an error: %t", err, tt.dataErr)
			}
			r := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Name: tt.name}}
			if err := validateRole(r); (err != nil) != tt.roleErr {
				t.Errorf("validateRole: %v, want an error: %t", err, tt.roleErr)
			}
		})
	}
}

func TestRoleOptions(t *testing.T) {
	limit := int32(7)
	tests := []struct {
		spec pgv1.RoleSpec
		want string
	}{
		{pgv1.RoleSpec{}, "NOLOGIN CONNECTION LIMIT -1"},
		{pgv1.RoleSpec{Login: true, ConnectionLimit: &limit}, "LOGIN CONNECTION LIMIT 7"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, roleOptions(&pgv1.Role{Spec: tt.spec})); diff != "" {
			t.Errorf("roleOptions(%+v) (-want +got):\n%s", tt.spec, diff)
		}
	}
}

func TestQuoteAndLiteral(t *testing.T) {
	if diff := cmp.Diff([]string{`"a""b"`, `'it''s'`}, []string{quote(`a"b`), literal("it's")}); diff != "" {
		t.Errorf("quote, literal (-want +got):\n%s", diff)
	}
}

// checkVerifier checks that verifier is a SCRAM-SHA-256 verifier of
// password, by deriving its stored key again.
func checkVerifier(password, verifier string) error {
	rest, ok := strings.CutPrefix(verifier, "SCRAM-SHA-256$")
	if !ok {
		return fmt.Errorf("not a SCRAM-SHA-256 verifier: %.14q", verifier)
	}
	iterSalt, keys, ok1 := strings.Cut(rest, "$")
	iterText, saltText, ok2 := strings.Cut(iterSalt, ":")
	storedText, _, ok3 := strings.Cut(keys, ":")
	if !ok1 || !ok2 || !ok3 {
		return errors.New("malformed verifier")
	}
	iter, err := strconv.Atoi(iterText)
	if err != nil {
		return fmt.Errorf("iterations: %w", err)
	}
	salt, err := base64.StdEncoding.DecodeString(saltText)
	if err != nil {
		return fmt.Errorf("salt: %w", err)
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, iter, sha256.Size)
	if err != nil {
		return err
	}
	stored := sha256.Sum256(hmacSHA256(salted, "Client Key"))
	want, err := base64.StdEncoding.DecodeString(storedText)
	if err != nil {
		return fmt.Errorf("stored key: %w", err)
	}
	if !hmac.Equal(stored[:], want) {
		return errors.New("stored key differs")
	}
	return nil
}

func TestScramVerifier(t *testing.T) {
	v, err := scramVerifier("secret")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkVerifier("secret", v); err != nil {
		t.Errorf("checkVerifier(own verifier): %v", err)
	}
	if err := checkVerifier("other", v); err == nil {
		t.Errorf("the verifier of %q accepts %q", "secret", "other")
	}
	if strings.Contains(v, "secret") {
		t.Errorf("verifier %q contains the password", v)
	}
}
