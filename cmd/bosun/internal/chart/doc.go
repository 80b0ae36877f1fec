// Package chart writes a Helm chart from an operator's kustomize output,
// for `bosun chart`: the same objects, in the release's namespace, with the
// manager's image, replicas, resources, leader election, metrics,
// cert-manager's webhook certificate and the CRDs as values. With its
// default values the chart renders the objects it was made of.
package chart
