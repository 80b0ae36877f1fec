package postgres_test

import (
	"fmt"

	"github.com/bosunkit/bosun/examples/postgres"
)

// Object names become PostgreSQL names with dashes turned into underscores;
// what is still not a plain identifier is refused before it reaches SQL.
func ExampleValidIdentifier() {
	for _, name := range []string{"app-user", "orders", "1st", "a.b", `x"; DROP ROLE postgres; --`} {
		sql := postgres.SQLName(name)
		if err := postgres.ValidIdentifier(sql); err != nil {
			fmt.Printf("%s: %v\n", sql, err)
			continue
		}
		fmt.Printf("%s: ok\n", sql)
	}
	// Output:
	// app_user: ok
	// orders: ok
	// 1st: invalid identifier: starts with a digit
	// a.b: invalid identifier: byte 1 is not an ASCII letter, digit or underscore
	// x"; DROP ROLE postgres; __: invalid identifier: byte 1 is not an ASCII letter, digit or underscore
}
