package dsl

import "sort"

// builtinGroup is a group/version whose kinds a document may name without
// a bind or an alias.
type builtinGroup struct {
	group, version, pkg string
	kinds               []string
	// cluster are its cluster-scoped kinds.
	cluster []string
}

var builtinGroups = []builtinGroup{
	{"", "v1", "k8s.io/api/core/v1", []string{
		"Pod", "Service", "ConfigMap", "Secret", "ServiceAccount",
		"PersistentVolumeClaim", "Endpoints", "Event", "LimitRange",
		"ResourceQuota", "ReplicationController", "PodTemplate",
	}, []string{"Namespace", "Node", "PersistentVolume"}},
	{"apps", "v1", "k8s.io/api/apps/v1", []string{
		"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ControllerRevision",
	}, nil},
	{"batch", "v1", "k8s.io/api/batch/v1", []string{"Job", "CronJob"}, nil},
	{"networking.k8s.io", "v1", "k8s.io/api/networking/v1", []string{"Ingress", "NetworkPolicy"}, []string{"IngressClass"}},
	{"rbac.authorization.k8s.io", "v1", "k8s.io/api/rbac/v1", []string{"Role", "RoleBinding"}, []string{"ClusterRole", "ClusterRoleBinding"}},
	{"coordination.k8s.io", "v1", "k8s.io/api/coordination/v1", []string{"Lease"}, nil},
	{"storage.k8s.io", "v1", "k8s.io/api/storage/v1", nil, []string{"StorageClass"}},
}

// builtinKinds maps a built-in kind name to its kind.
var builtinKinds = func() map[string]Kind {
	m := make(map[string]Kind)
	for _, g := range builtinGroups {
		for _, k := range g.kinds {
			m[k] = Kind{Name: k, Group: g.group, Version: g.version, Kind: k, Package: g.pkg, Builtin: true}
		}
		for _, k := range g.cluster {
			m[k] = Kind{Name: k, Group: g.group, Version: g.version, Kind: k, Package: g.pkg, Builtin: true, Cluster: true}
		}
	}
	return m
}()

// builtinPackage returns the Go package of a built-in group/version,
// written as in a bind ("v1", "apps/v1").
func builtinPackage(gv string) (string, bool) {
	for _, g := range builtinGroups {
		if joinGroupVersion(g.group, g.version) == gv {
			return g.pkg, true
		}
	}
	return "", false
}

// joinGroupVersion writes a group/version as a bind does: just the version
// for the core group.
func joinGroupVersion(group, version string) string {
	if group == "" {
		return version
	}
	return group + "/" + version
}

// lookupBuiltin returns the built-in kind called name: a kind of core v1,
// apps/v1, batch/v1, networking.k8s.io/v1, rbac.authorization.k8s.io/v1,
// coordination.k8s.io/v1 or storage.k8s.io/v1, which a document may name
// without a bind or an alias. Kind.Cluster tells the cluster-scoped ones
// (Namespace, Node, PersistentVolume, IngressClass, ClusterRole,
// ClusterRoleBinding, StorageClass) from the namespaced ones.
func lookupBuiltin(name string) (Kind, bool) {
	k, ok := builtinKinds[name]
	return k, ok
}

// builtinList returns every built-in kind, sorted by name.
func builtinList() []Kind {
	kinds := make([]Kind, 0, len(builtinKinds))
	for _, k := range builtinKinds {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].Name < kinds[j].Name })
	return kinds
}
