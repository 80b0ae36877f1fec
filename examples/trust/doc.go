// Package trust is a bosun example operator that rebuilds cert-manager's
// trust-manager: its Bundle kind (trust.cert-manager.io/v1alpha1, package
// api/v1alpha1) joins CA certificates from ConfigMaps and Secrets of a trust
// namespace, from the Bundle itself and from a default CA package, into one
// PEM bundle, and writes it into a ConfigMap or Secret in every namespace
// the Bundle selects, with JKS and PKCS#12 encodings beside it if asked.
//
// The example is being built. So far: the API, field for field
// trust-manager's; the certificate pool that checks, deduplicates and
// orders a bundle's certificates (certpool.go); the JKS and PKCS#12
// encodings (formats.go); and the default CA package (defaultpackage.go).
package trust
