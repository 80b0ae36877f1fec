package pgserver_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/bosunkit/bosun/examples/postgres/pgserver"
)

// A test starts a server with statement logging, works on it through pgx
// and then checks which SQL the server received.
func Example() {
	ctx := context.Background()
	srv, err := pgserver.Start(ctx, pgserver.Options{LogStatements: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		if err := srv.Stop(); err != nil {
			fmt.Println(err)
		}
	}()
	fmt.Println("ready")

	conn, err := pgx.Connect(ctx, srv.DSN("postgres"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE ROLE app LOGIN CONNECTION LIMIT 5"); err != nil {
		fmt.Println(err)
		return
	}

	stmts, err := srv.Statements()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, st := range stmts {
		fmt.Printf("%s on %s: %s\n", st.User, st.Database, st.Text)
	}
	// Output:
	// ready
	// postgres on postgres: CREATE ROLE app LOGIN CONNECTION LIMIT 5
}

// Without the server binaries Start fails and says how to install them.
func ExampleStart_notInstalled() {
	_, err := pgserver.Start(context.Background(), pgserver.Options{BinDir: "/nonexistent/bin"})
	fmt.Println(errors.Is(err, pgserver.ErrNotInstalled))
	fmt.Println(err)
	// Output:
	// true
	// postgresql server binaries (initdb and postgres) not found: Options.BinDir /nonexistent/bin has no executable initdb; install them with `apt-get install -y postgresql` (Debian, Ubuntu) or set BOSUN_POSTGRES_BIN to a directory that holds initdb and postgres
}
