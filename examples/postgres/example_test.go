package postgres_test

import (
	"fmt"

	"github.com/bosunkit/bosun/examples/postgres"
)

// Roles and Databases get PostgreSQL names made of their namespace and
// name: plain when that is a short identifier, hashed otherwise, unique
// either way.
func ExampleSQLName() {
	for _, o := range []struct{ namespace, name string }{
		{"shop-a", "orders"},
		{"shop-b", "orders"},
		{"team-a", "analytics.events.2024"},
	} {
		fmt.Printf("%s/%s: %s\n", o.namespace, o.name, postgres.SQLName(o.namespace, o.name))
	}
	// Output:
	// shop-a/orders: shop_a__orders
	// shop-b/orders: shop_b__orders
	// team-a/analytics.events.2024: team_a_analytics_events_2024_4915924a44cd
}

// A name set by hand in the external-name annotation must be a plain
// identifier that PostgreSQL does not keep for itself.
func ExampleValidName() {
	for _, name := range []string{"legacy_app", "1st", `x"; DROP ROLE postgres; --`, "postgres", "pg_monitor"} {
		if err := postgres.ValidName(name); err != nil {
			fmt.Printf("%s: %v\n", name, err)
			continue
		}
		fmt.Printf("%s: ok\n", name)
	}
	// Output:
	// legacy_app: ok
	// 1st: invalid identifier: starts with a digit
	// x"; DROP ROLE postgres; --: invalid identifier: byte 1 is not an ASCII letter, digit or underscore
	// postgres: reserved name: PostgreSQL keeps postgres, template0, template1, public, none, current_user, current_role, session_user and the names starting with pg_ for itself
	// pg_monitor: reserved name: PostgreSQL keeps postgres, template0, template1, public, none, current_user, current_role, session_user and the names starting with pg_ for itself
}
