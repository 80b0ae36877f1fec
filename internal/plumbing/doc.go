// Package plumbing holds the wrappers of controller-runtime's and
// client-go's parts that tuning.Enable turns on: a manager whose
// controllers start their workers before the informers have listed
// (EarlyStart), a log constructor whose keys are encoded only when a line
// is logged (LogConstructor), a RESTMapper that keeps each kind's mapping
// (RememberMappings) and informers that build their namespace index only
// when a list needs it (LazyNamespaces). docs/TUNING.md lists what each
// saves and its test.
package plumbing
