package controlplane

// The module that builds kube-apiserver, etcd, kube-controller-manager and
// kube-scheduler lives in hack/controlplane as its own module, and the one
// that builds kwok in hack/kwok, so neither is part of bosun's module zip.
// Their go.mod and go.sum are copied into zz_generated.gomod.go, which is,
// so that Binaries can build the control plane for any program that depends
// on bosun.
//
//go:generate go run ./internal/gensrc -pkg controlplane -out zz_generated.gomod.go buildGoMod=../hack/controlplane/go.mod buildGoSum=../hack/controlplane/go.sum kwokGoMod=../hack/kwok/go.mod kwokGoSum=../hack/kwok/go.sum

const (
	// apiServerPackage is the main package of kube-apiserver.
	apiServerPackage = "k8s.io/kubernetes/cmd/kube-apiserver"
	// etcdPackage is the main package of etcd.
	etcdPackage = "go.etcd.io/etcd/server/v3"
	// controllerManagerPackage is the main package of kube-controller-manager.
	controllerManagerPackage = "k8s.io/kubernetes/cmd/kube-controller-manager"
	// schedulerPackage is the main package of kube-scheduler.
	schedulerPackage = "k8s.io/kubernetes/cmd/kube-scheduler"
	// kwokPackage is the main package of kwok, in the module of hack/kwok.
	kwokPackage = "sigs.k8s.io/kwok/cmd/kwok"
)
