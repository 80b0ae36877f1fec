// Command loc counts the lines of code of the examples, as
// docs/EXAMPLES.md reports them: lines that are neither blank nor only a
// comment, in the Go files and bosun documents of each example, sorted
// into what the operator author writes (the operator: its controller,
// helpers and .bosun documents), the scheme and demo samples, the API
// types, the generated code and the tests.
//
//	go run ./hack/loc [-rev REV] [-examples DIR]
//
// With -rev it counts the files as they were at the git revision REV, so
// that one command gives both the before and the after of a change.
package main
