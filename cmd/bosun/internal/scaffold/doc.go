// Package scaffold writes new operator modules, and new kinds in them, in
// kubebuilder's layout: `bosun init` and `bosun create api`. What it writes
// builds, passes its tests and runs with --dev as it is.
package scaffold
