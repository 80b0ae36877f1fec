package controlplane

// The module that builds kube-apiserver, etcd and kube-controller-manager
// lives in hack/controlplane as its own module, so it is not part of bosun's
// module zip. Its go.mod and go.sum are copied into zz_generated.gomod.go,
// which is, so that Binaries can build the control
// plane for any program that depends on bosun.
//
//go:generate go run ./internal/gensrc -pkg controlplane -out zz_generated.gomod.go buildGoMod=../hack/controlplane/go.mod buildGoSum=../hack/controlplane/go.sum

const (
	// apiServerPackage is the main package of kube-apiserver.
	apiServerPackage = "k8s.io/kubernetes/cmd/kube-apiserver"
	// etcdPackage is the main package of etcd.
	etcdPackage = "go.etcd.io/etcd/server/v3"
	// controllerManagerPackage is the main package of kube-controller-manager.
	controllerManagerPackage = "k8s.io/kubernetes/cmd/kube-controller-manager"
)
