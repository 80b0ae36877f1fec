// Package scaffold writes new operator modules, and new kinds in them, in
// kubebuilder's layout: `bosun init` (Init) and `bosun create api`
// (CreateAPI). The files come from text templates embedded in the binary;
// the same arguments always write the same files. What controller-gen and
// `bosun gen` derive from the sources (the deep copies, the CRDs, the role
// and the code of .bosun documents) is left to them: Generate runs them as
// the project's Makefile does. A project written so builds, passes its own
// unit and envtest tests and runs with --dev as it is.
package scaffold
