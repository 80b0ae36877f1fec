// Package scaffold writes new operator modules, and new kinds in them, in
// kubebuilder's layout: `bosun init` (Init), `bosun create api`
// (CreateAPI, which also adds a version to a kind) and `bosun create
// webhook` (CreateWebhook). The files come from text templates embedded in
// the binary; the same arguments always write the same files, and later
// commands add to the files of earlier ones at their +bosun:scaffold
// lines. What controller-gen and `bosun gen` derive from the sources (the
// deep copies, the CRDs, the role, the webhook configurations and the code
// of .bosun documents) is left to them: Generate runs them as the
// project's Makefile does. A project written so builds, passes its own
// unit and envtest tests and runs with --dev as it is.
package scaffold
