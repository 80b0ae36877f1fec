package postgres

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgconn"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/unit"
	"github.com/bosunkit/bosun/conditions"
	pgv1 "github.com/bosunkit/bosun/examples/postgres/api/v1alpha1"
	"github.com/bosunkit/bosun/managed"
	"github.com/bosunkit/bosun/ref"
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
	d := &pgv1.Database{Spec: pgv1.DatabaseSpec{Owner: "app"}, Status: pgv1.DatabaseStatus{OwnerRole: "x;y"}}
	managed.SetExternalName(d, "db")
	err := validateDatabase(d)
	reason, sev, _ := conditions.FromError(err)
	if diff := cmp.Diff([]string{string(managed.ReasonInvalidSpec), string(conditions.SeverityError)}, []string{string(reason), string(sev)}); diff != "" {
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

// TestValidateNames checks objects by the external name they carry, or
// before one is recorded (the first pass) by the name the managed step
// will record: SQLName of namespace and name, always valid.
func TestValidateNames(t *testing.T) {
	tests := []struct {
		name, externalName string
		wantErr            error
	}{
		{name: "orders"},
		{name: "1st"},
		{name: "a.b"},
		{name: strings.Repeat("r", 70)},
		{name: "postgres"},
		{name: "adopter", externalName: "legacy_app"},
		{name: "adopter", externalName: "1st", wantErr: ErrInvalidIdentifier},
		{name: "adopter", externalName: "a-b", wantErr: ErrInvalidIdentifier},
		{name: "adopter", externalName: "postgres", wantErr: ErrReservedName},
		{name: "adopter", externalName: "Template1", wantErr: ErrReservedName},
		{name: "adopter", externalName: "pg_monitor", wantErr: ErrReservedName},
		{name: "adopter", externalName: "public", wantErr: ErrReservedName},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.externalName, func(t *testing.T) {
			meta := metav1.ObjectMeta{Namespace: "shop", Name: tt.name}
			d := &pgv1.Database{ObjectMeta: meta, Spec: pgv1.DatabaseSpec{Owner: "app"}}
			r := &pgv1.Role{ObjectMeta: meta}
			if tt.externalName != "" {
				managed.SetExternalName(d, tt.externalName)
				managed.SetExternalName(r, tt.externalName)
			}
			for what, err := range map[string]error{"validateDatabase": validateDatabase(d), "validateRole": validateRole(r)} {
				if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("%s: %v, want %v", what, err, tt.wantErr)
				}
				if reason, _, _ := conditions.FromError(err); err != nil && reason != "InvalidSpec" {
					t.Errorf("%s: reason %s, want %s", what, reason, "InvalidSpec")
				}
			}
		})
	}
}

// TestSQLName checks the external names of objects: plain where the
// namespace and name allow, hashed elsewhere, and for every pair, tricky
// ones included, a valid identifier of at most 63 bytes that is not
// reserved and that no other pair gets.
func TestSQLName(t *testing.T) {
	plain := []struct{ namespace, name, want string }{
		{"shop-a", "orders", "shop_a__orders"},
		{"shop-a", "orders-owner", "shop_a__orders_owner"},
		{"team1", "app-user", "team1__app_user"},
		{"shop", "1digit", "shop__1digit"},
	}
	for _, tt := range plain {
		if got := SQLName(tt.namespace, tt.name); got != tt.want {
			t.Errorf("SQLName(%q, %q) = %q, want %q", tt.namespace, tt.name, got, tt.want)
		}
	}
	pairs := [][2]string{
		{"a-b", "c"}, {"a", "b-c"}, {"a_b", "c"}, {"a--b", "c"}, {"a", "b--c"}, {"a-b-c", "d"},
		{"pg", "x"}, {"pg-x", "db"}, {"pg", "pg-x"}, {"1team", "db"}, {"x", "1team-db"},
		{"shop", "has.dot"}, {"shop", "has-dot"}, {"shop", "has_dot"}, {"shop", "has.dot-6803478f42cc"},
		{"ns", strings.Repeat("r", 70)}, {"ns", strings.Repeat("r", 71)}, {strings.Repeat("n", 63), "x"},
		{"ns", strings.Repeat("a-", 30) + "a"}, {"ns", "postgres"}, {"ns", "template1"}, {"", "x"}, {"x", ""},
		{"UPPER", "case"}, {"upper", "case"},
	}
	for _, p := range plain {
		pairs = append(pairs, [2]string{p.namespace, p.name})
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		got := SQLName(p[0], p[1])
		if err := ValidName(got); err != nil {
			t.Errorf("SQLName(%q, %q) = %q: %v", p[0], p[1], got, err)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("SQLName(%q, %q) = %q, the name of %q too", p[0], p[1], got, other)
		}
		seen[got] = p
		if got != SQLName(p[0], p[1]) {
			t.Errorf("SQLName(%q, %q) is not stable", p[0], p[1])
		}
	}
}

// TestOwnerMark checks reading the owner mark back from a comment and
// describing how it differs from an object's.
func TestOwnerMark(t *testing.T) {
	obj := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{UID: "uid-1"}}
	tests := []struct {
		comment, owner, diff string
	}{
		{"bosun-owner:uid-1", "uid-1", ""},
		{"bosun-owner:uid-2", "uid-2", "the owner mark names another object"},
		{"", "", "the owner mark is missing"},
		{"made by hand", "", "the owner mark is missing"},
		{"bosun-owner:", "", "the owner mark is missing"},
	}
	for _, tt := range tests {
		owner := ownerOf(tt.comment)
		if diff := cmp.Diff([]string{tt.owner, tt.diff}, []string{owner, markDiff(owner, obj)}); diff != "" {
			t.Errorf("comment %q: owner, diff (-want +got):\n%s", tt.comment, diff)
		}
	}
	if got, want := markStatement("ROLE", "a\"b", obj), `COMMENT ON ROLE "a""b" IS 'bosun-owner:uid-1'`; got != want {
		t.Errorf("markStatement = %s, want %s", got, want)
	}
}

// TestCreateError checks which errors of a create leave its outcome
// unknown: those the server did not answer, after the request may have
// been sent.
func TestCreateError(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		unknown bool
	}{
		{"server answered", &pgconn.PgError{Code: "42710", Message: "role exists"}, false},
		{"connection lost", io.ErrUnexpectedEOF, true},
		{"deadline", context.DeadlineExceeded, true},
	}
	for _, tt := range tests {
		err := createError("creating role", tt.err)
		if got := errors.Is(err, managed.ErrOutcomeUnknown); got != tt.unknown {
			t.Errorf("%s: outcome unknown = %t, want %t", tt.name, got, tt.unknown)
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("%s: %v does not wrap %v", tt.name, err, tt.err)
		}
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

// The unit tests below run the Role and Database reconcilers through the
// engine against the in-memory client of package bosuntest/unit, with a
// server address where nothing listens: what they check happens before, or
// instead of, any connection to PostgreSQL. A pass that did connect would
// fail with ConnectFailed, as the case "a server that cannot be reached"
// shows. The tests against a real server are in envtest_test.go.

// unreachable is the DSN of a server that refuses every connection.
const unreachable = "host=127.0.0.1 port=1 connect_timeout=1"

// reservedMessage is the end of the message of a reserved name.
const reservedMessage = "reserved name: PostgreSQL keeps postgres, template0, template1, public, none, current_user, current_role, session_user and the names starting with pg_ for itself"

// named returns obj with external name name.
func named[T client.Object](obj T, name string) T {
	managed.SetExternalName(obj, name)
	return obj
}

// cond returns a condition of generation 1.
func cond(typ string, status metav1.ConditionStatus, reason conditions.Reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: string(reason), Message: message, ObservedGeneration: 1}
}

// isTerminal is a Case.Check: the error is terminal, or not.
func isTerminal[T client.Object](want bool) func(bosuntest.TB, *unit.Outcome[T]) {
	return func(t bosuntest.TB, out *unit.Outcome[T]) {
		t.Helper()
		if got := errors.Is(out.Err, reconcile.TerminalError(nil)); got != want {
			t.Errorf("error %v: terminal %t, want %t", out.Err, got, want)
		}
	}
}

// TestUnitRole runs the Role reconciler on Roles it refuses, which it
// never connects for, and on one whose server cannot be reached.
func TestUnitRole(t *testing.T) {
	role := func() *pgv1.Role {
		return &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "app", UID: "uid-app"}}
	}
	limited := role()
	limited.Spec.ConnectionLimit = new(int32)
	*limited.Spec.ConnectionLimit = -2
	const connecting = "connecting to the external system: "
	refused := func(message string) unit.Case[*pgv1.Role] {
		return unit.Case[*pgv1.Role]{
			ExpectErr:    message,
			ExpectWrites: []string{"patch Role shop/app", "patch status Role shop/app"},
			ExpectEvents: []string{"Normal " + string(conditions.ReasonClaimed) + ` claimed by finalizer "postgres.bosun.dev/role"`, "Warning " + string(managed.ReasonInvalidSpec) + " " + connecting + message},
			ExpectConditions: []metav1.Condition{
				cond("Synced", metav1.ConditionFalse, "InvalidSpec", connecting+message),
				cond(conditions.TypeReady, metav1.ConditionFalse, "InvalidSpec", connecting+message),
			},
			Check: isTerminal[*pgv1.Role](true),
		}
	}
	reserved := refused("role name: " + reservedMessage)
	reserved.Name = "a reserved name is refused"
	reserved.Object = named(role(), "pg_monitor")
	invalid := refused("role name: invalid identifier: byte 1 is not an ASCII letter, digit or underscore")
	invalid.Name = "an invalid name is refused"
	invalid.Object = named(role(), "a-b")
	limit := refused("spec.connectionLimit is -2, want -1 or more")
	limit.Name = "a connection limit below -1 is refused"
	limit.Object = limited

	unit.Run(t, unit.Scheme(t, AddToScheme), func() *bosun.Reconciler[*pgv1.Role] { return NewRoleReconciler(Options{DSN: unreachable}) },
		reserved, invalid, limit,
		unit.Case[*pgv1.Role]{
			Name:         "a deleted Role with a reserved name is let go at once",
			Object:       named(role(), "postgres"),
			Deleting:     true,
			ExpectWrites: []string{"patch Role shop/app"},
			ExpectEvents: []string{`Normal CleanedUp cleaned up and released finalizer "postgres.bosun.dev/role"`},
			ExpectGone:   []client.Object{role()},
		},
		unit.Case[*pgv1.Role]{
			Name:         "a server that cannot be reached is reported on Synced",
			Object:       role(),
			ExpectErr:    connecting + "connecting to postgresql at 127.0.0.1:1: ",
			ExpectWrites: []string{"patch Role shop/app", "patch status Role shop/app"},
			ExpectConditions: []metav1.Condition{
				{Type: "Synced", Status: metav1.ConditionFalse, Reason: string(managed.ReasonConnectFailed)},
				{Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(managed.ReasonConnectFailed)},
			},
			Check: isTerminal[*pgv1.Role](false),
		},
		unit.Case[*pgv1.Role]{
			Name:         "a deleted Role that never named a role is let go without the server",
			Object:       role(),
			Deleting:     true,
			ExpectWrites: []string{"patch Role shop/app"},
			ExpectEvents: []string{`Normal CleanedUp cleaned up and released finalizer "postgres.bosun.dev/role"`},
			ExpectGone:   []client.Object{role()},
		},
		unit.Case[*pgv1.Role]{
			Name:         "a deleted Role whose server cannot be reached keeps its finalizer",
			Object:       named(role(), "shop__app"),
			Deleting:     true,
			ExpectErr:    connecting + "connecting to postgresql at 127.0.0.1:1: ",
			ExpectWrites: []string{"patch status Role shop/app"},
			ExpectConditions: []metav1.Condition{
				{Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(managed.ReasonConnectFailed)},
			},
			ExpectObjects: []client.Object{&pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "app", Finalizers: []string{RoleFinalizer}}}},
		},
	)
}

// TestUnitDatabase runs the Database reconciler while its owner Role is
// missing, not Ready or unreadable, on Databases it refuses, and on one
// whose server cannot be reached.
func TestUnitDatabase(t *testing.T) {
	database := func() *pgv1.Database {
		return &pgv1.Database{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders", UID: "uid-orders"}, Spec: pgv1.DatabaseSpec{Owner: "app"}}
	}
	// owner returns Role shop/app, Ready for generation observed, with
	// external name name.
	owner := func(ready metav1.ConditionStatus, observed int64, name string) *pgv1.Role {
		r := &pgv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "app", Generation: 2}}
		r.Status.ObservedGeneration = observed
		r.Status.Conditions = []metav1.Condition{{Type: conditions.TypeReady, Status: ready, Reason: "Test", LastTransitionTime: metav1.Now()}}
		if name != "" {
			managed.SetExternalName(r, name)
		}
		return r
	}
	readyOwner := owner(metav1.ConditionTrue, 2, "shop__app")
	badEncoding := database()
	badEncoding.Spec.Encoding = "UTF-8"
	const connecting = "connecting to the external system: "
	claimAndStatus := []string{"patch Database shop/orders", "patch status Database shop/orders"}
	claimed := "Normal " + string(conditions.ReasonClaimed) + ` claimed by finalizer "postgres.bosun.dev/database"`
	waiting := func(name string, reason conditions.Reason, message string, given ...client.Object) unit.Case[*pgv1.Database] {
		return unit.Case[*pgv1.Database]{
			Name:         name,
			Object:       database(),
			Given:        given,
			ExpectResult: ctrl.Result{RequeueAfter: DefaultWaitInterval},
			ExpectWrites: claimAndStatus,
			ExpectEvents: []string{claimed},
			ExpectConditions: []metav1.Condition{
				cond(ConditionRoleReady, metav1.ConditionFalse, reason, message),
				cond("Synced", metav1.ConditionUnknown, conditions.ReasonInitializing, conditions.MessageInitializing),
				cond(conditions.TypeReady, metav1.ConditionFalse, reason, message),
			},
		}
	}
	refused := func(name, message string, obj *pgv1.Database) unit.Case[*pgv1.Database] {
		return unit.Case[*pgv1.Database]{
			Name:         name,
			Object:       obj,
			Given:        []client.Object{readyOwner},
			ExpectErr:    message,
			ExpectWrites: claimAndStatus,
			ExpectEvents: []string{claimed, "Warning " + string(managed.ReasonInvalidSpec) + " " + message},
			ExpectConditions: []metav1.Condition{
				cond(ConditionRoleReady, metav1.ConditionUnknown, conditions.ReasonInitializing, conditions.MessageInitializing),
				cond("Synced", metav1.ConditionFalse, "InvalidSpec", message),
				cond(conditions.TypeReady, metav1.ConditionFalse, "InvalidSpec", message),
			},
			Check: isTerminal[*pgv1.Database](true),
		}
	}
	serverError := apierrors.NewInternalError(errors.New("etcd is down"))

	unit.Run(t, unit.Scheme(t, AddToScheme), func() *bosun.Reconciler[*pgv1.Database] { return NewDatabaseReconciler(Options{DSN: unreachable}) },
		waiting("a missing owner Role is waited for", "ReferenceNotFound", `Role "shop/app" does not exist`),
		waiting("an owner Role not Ready is waited for", "ReferenceNotReady", `Role "shop/app" is not ready: its Ready condition is not True`,
			owner(metav1.ConditionFalse, 2, "shop__app")),
		waiting("an owner Role Ready for an older generation is waited for", "ReferenceNotReady", `Role "shop/app" is not ready: it has not been reconciled yet`,
			owner(metav1.ConditionTrue, 1, "shop__app")),
		waiting("an owner Role without an external name is waited for", "ReferenceNotReady", `Role "shop/app" is not ready: it has not been reconciled yet`,
			owner(metav1.ConditionTrue, 2, "")),
		unit.Case[*pgv1.Database]{
			Name:   "an owner Role that cannot be read fails the pass",
			Object: database(),
			Given:  []client.Object{readyOwner},
			Interceptor: interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, ok := obj.(*pgv1.Role); ok {
					return serverError
				}
				return c.Get(ctx, key, obj, opts...)
			}},
			ExpectErr:    "reading Role shop/app: Internal error occurred: etcd is down",
			ExpectWrites: claimAndStatus,
			ExpectEvents: []string{claimed, "Warning " + string(ref.ReasonReferenceReadFailed) + " reading Role shop/app: Internal error occurred: etcd is down"},
			ExpectConditions: []metav1.Condition{
				cond(conditions.TypeReady, metav1.ConditionFalse, "ReferenceReadFailed", "reading Role shop/app: Internal error occurred: etcd is down"),
			},
			Check: isTerminal[*pgv1.Database](false),
		},
		refused("a reserved name is refused", "database name: "+reservedMessage, named(database(), "template1")),
		refused("an invalid encoding is refused", "spec.encoding: invalid identifier: byte 3 is not an ASCII letter, digit or underscore", badEncoding),
		unit.Case[*pgv1.Database]{
			Name:         "an owner Role that stands for a reserved role is refused",
			Object:       database(),
			Given:        []client.Object{owner(metav1.ConditionTrue, 2, "pg_monitor")},
			ExpectErr:    "the role of Role app: " + reservedMessage,
			ExpectWrites: claimAndStatus,
			ExpectEvents: []string{claimed, "Warning " + string(managed.ReasonInvalidSpec) + " the role of Role app: " + reservedMessage},
			ExpectConditions: []metav1.Condition{
				cond(conditions.TypeReady, metav1.ConditionFalse, "InvalidSpec", "the role of Role app: "+reservedMessage),
				cond(ConditionRoleReady, metav1.ConditionFalse, "InvalidSpec", "the role of Role app: "+reservedMessage),
			},
			Check: isTerminal[*pgv1.Database](true),
		},
		unit.Case[*pgv1.Database]{
			Name:         "a deleted Database with a reserved name is let go at once",
			Object:       named(database(), "postgres"),
			Deleting:     true,
			ExpectWrites: []string{"patch Database shop/orders"},
			ExpectEvents: []string{`Normal CleanedUp cleaned up and released finalizer "postgres.bosun.dev/database"`},
			ExpectGone:   []client.Object{database()},
		},
		unit.Case[*pgv1.Database]{
			Name:         "a server that cannot be reached is reported on Synced, once the owner is known",
			Object:       database(),
			Given:        []client.Object{readyOwner},
			ExpectErr:    connecting + "connecting to postgresql at 127.0.0.1:1: ",
			ExpectWrites: claimAndStatus,
			ExpectConditions: []metav1.Condition{
				cond(ConditionRoleReady, metav1.ConditionTrue, "Resolved", `resolved to Role "shop/app"`),
				{Type: "Synced", Status: metav1.ConditionFalse, Reason: string(managed.ReasonConnectFailed)},
				{Type: conditions.TypeReady, Status: metav1.ConditionFalse, Reason: string(managed.ReasonConnectFailed)},
			},
			Check: func(t bosuntest.TB, out *unit.Outcome[*pgv1.Database]) {
				isTerminal[*pgv1.Database](false)(t, out)
				if out.Object.Status.OwnerRole != "shop__app" {
					t.Errorf("status.ownerRole = %q, want shop__app", out.Object.Status.OwnerRole)
				}
			},
		},
	)
}

func TestApproxSize(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0"},
		{1023, "1023"},
		{1024, "1Ki"},
		{1536, "1.5Ki"},
		{7_561_711, "7.2Mi"},
		{7_600_000, "7.2Mi"}, // a change under the rounding writes nothing
		{10 * 1024 * 1024, "10Mi"},
		{512*1024*1024 + 1, "512Mi"},
		{3 << 40, "3Ti"},
		{-5, "0"},
	} {
		if got := approxSize(tc.n); got != tc.want {
			t.Errorf("approxSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
