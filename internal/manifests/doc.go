// Package manifests renders a kustomize directory in process (the
// examples' config/default) and applies what it renders to a cluster
// with server-side apply, in the order a fresh cluster needs: Namespaces
// and CRDs first, then the rest.
package manifests
