// Package trust is a bosun example operator that rebuilds cert-manager's
// trust-manager: its Bundle kind (trust.cert-manager.io/v1alpha1, package
// api/v1alpha1) joins CA certificates from ConfigMaps and Secrets of a trust
// namespace, from the Bundle itself and from a default CA package, into one
// PEM bundle, and writes it into a ConfigMap or Secret in every namespace
// the Bundle selects, with JKS and PKCS#12 encodings beside it if asked.
//
// The reconciler (controller.go) has two steps under the condition Synced:
// the sources step joins the sources' certificates in a pool that checks,
// deduplicates and orders them (sources.go, certpool.go); the targets step,
// bosun's children step, writes the bundle into a ConfigMap and/or a
// Secret named after the Bundle in each selected namespace, with its JKS
// and PKCS#12 encodings (formats.go), owned by the Bundle, put back when
// edited, pruned when unselected. The default CA package is read from a
// file (defaultpackage.go). The validating webhook (validate.go) refuses,
// at trust-manager's path, what trust-manager's webhook refuses, for
// clusters that keep trust-manager's CRD.
//
// Command cmd runs it in place of trust-manager, with trust-manager's
// flags; docs/EXAMPLES.md says how, and what it does not do.
package trust
