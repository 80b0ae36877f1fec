package pgserver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStatements(t *testing.T) {
	tests := []struct {
		name string
		log  string
		want []Statement
	}{{
		name: "server start only",
		log: `2026-11-22 06:42:29.818 UTC|32285||||LOG:  starting PostgreSQL 15.18 on x86_64-pc-linux-gnu, 64-bit
2026-11-22 06:42:29.819 UTC|32285||||LOG:  listening on IPv4 address "127.0.0.1", port 33515
2026-11-22 06:42:29.851 UTC|32285||||LOG:  database system is ready to accept connections
`,
	}, {
		name: "simple query over several lines",
		log: "2026-11-22 06:42:29.908 UTC|32293|postgres|postgres|[unknown]|LOG:  statement: SELECT 1;\n" +
			"\t\tSELECT 'a\n" +
			"\tb'\n",
		want: []Statement{{PID: 32293, User: "postgres", Database: "postgres", Text: "SELECT 1;\n\tSELECT 'a\nb'"}},
	}, {
		name: "prepared statements with parameters",
		log: `2026-11-22 06:42:29.911 UTC|32293|app|appdb|op|LOG:  execute stmtcache_2f56: SELECT $1::text || 'x'
2026-11-22 06:42:29.911 UTC|32293|app|appdb|op|DETAIL:  parameters: $1 = 'it''s'
2026-11-22 06:42:29.912 UTC|32293|app|appdb|op|LOG:  execute <unnamed>: SELECT 2
2026-11-22 06:42:29.913 UTC|32293|app|appdb|op|LOG:  execute S_1/C_2: SELECT $1: $2
2026-11-22 06:42:29.913 UTC|32293|app|appdb|op|DETAIL:  parameters: $1 = '1', $2 = NULL
`,
		want: []Statement{
			{PID: 32293, User: "app", Database: "appdb", Application: "op", Prepared: "stmtcache_2f56", Text: "SELECT $1::text || 'x'", Parameters: "$1 = 'it''s'"},
			{PID: 32293, User: "app", Database: "appdb", Application: "op", Prepared: "<unnamed>", Text: "SELECT 2"},
			{PID: 32293, User: "app", Database: "appdb", Application: "op", Prepared: "S_1/C_2", Text: "SELECT $1: $2", Parameters: "$1 = '1', $2 = NULL"},
		},
	}, {
		name: "interleaved backends",
		log: `2026-11-22 06:42:30.000 UTC|11|postgres|a|one|LOG:  execute <unnamed>: SELECT $1
2026-11-22 06:42:30.001 UTC|12|postgres|b|two|DETAIL:  parameters: $1 = 'not for one'
2026-11-22 06:42:30.002 UTC|12|postgres|b|two|LOG:  statement: BEGIN
`,
		want: []Statement{
			{PID: 11, User: "postgres", Database: "a", Application: "one", Prepared: "<unnamed>", Text: "SELECT $1"},
			{PID: 12, User: "postgres", Database: "b", Application: "two", Text: "BEGIN"},
		},
	}, {
		name: "errors, the harness and foreign lines are left out",
		log: `2026-11-22 06:42:29.911 UTC|32293|postgres|postgres|[unknown]|ERROR:  syntax error at or near "SELEC" at character 1
2026-11-22 06:42:29.911 UTC|32293|postgres|postgres|[unknown]|STATEMENT:  SELEC broken
2026-11-22 06:42:29.912 UTC|32293|postgres|postgres|[unknown]|LOG:  statement: SELECT 1/0
2026-11-22 06:42:29.912 UTC|32293|postgres|postgres|[unknown]|ERROR:  division by zero
2026-11-22 06:42:29.912 UTC|32293|postgres|postgres|[unknown]|STATEMENT:  SELECT 1/0
2026-11-22 06:42:29.913 UTC|40|postgres|postgres|bosun-pgserver|LOG:  statement: -- ping
some line a wrapper printed|LOG:  statement: DROP TABLE nothing
	with a continuation
2026-11-22 06:42:29.914 UTC|41|postgres|postgres|[unknown]|LOG:  connection authorized: user=postgres database=postgres
2026-11-22 06:42:29.915 UTC|41|postgres|postgres|[unknown]|LOG:  statement: CREATE ROLE "a|b"
`,
		want: []Statement{
			{PID: 32293, User: "postgres", Database: "postgres", Text: "SELECT 1/0"},
			{PID: 41, User: "postgres", Database: "postgres", Text: `CREATE ROLE "a|b"`},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseStatements(tt.log)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parseStatements() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
