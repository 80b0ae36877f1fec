// Package dashboard tests the Grafana dashboards in docs/grafana, so that
// they never drift from the metrics bosun exports.
//
// The test parses each dashboard as a Grafana JSON model, checks its shape
// (a uid and title, unique panel ids, a Prometheus data source variable and
// a "controller" variable over bosun_step_duration_seconds_count), and
// takes every metric name out of its panels' PromQL expressions and its
// variables' queries. Each name must be one of the controller-runtime
// metrics the dashboards are allowed to use or one of bosun's exported
// Metric* constants (a histogram through its _bucket, _count or _sum
// series), so that renaming a metric fails the test until the dashboard
// follows; and each of bosun's metrics must have a panel.
//
// The package holds no code of its own; everything is in its test.
package dashboard
