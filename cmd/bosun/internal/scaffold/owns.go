package scaffold

import (
	"fmt"
	"slices"
	"strings"
)

// ownKind is a kind of child that a scaffolded controller can keep (see
// API.Owns).
type ownKind struct {
	// Kind is the kind; Group and Resource name it for RBAC; Alias is the
	// import name of its Go package.
	Kind, Group, Resource, Alias string
	// Workload runs pods of the image of the kind's spec.
	Workload bool
	// Replicas: the workload's spec.replicas is the kind's spec.size, and
	// the kind's status.readyReplicas reports its ready pods.
	Replicas bool
}

// ownable are the kinds API.Owns accepts, in the order the templates write
// them.
var ownable = []ownKind{
	{Kind: "Deployment", Group: "apps", Resource: "deployments", Alias: "appsv1", Workload: true, Replicas: true},
	{Kind: "StatefulSet", Group: "apps", Resource: "statefulsets", Alias: "appsv1", Workload: true, Replicas: true},
	{Kind: "DaemonSet", Group: "apps", Resource: "daemonsets", Alias: "appsv1", Workload: true},
	{Kind: "Job", Group: "batch", Resource: "jobs", Alias: "batchv1", Workload: true},
	{Kind: "Service", Group: "", Resource: "services", Alias: "corev1"},
	{Kind: "ConfigMap", Group: "", Resource: "configmaps", Alias: "corev1"},
	{Kind: "Secret", Group: "", Resource: "secrets", Alias: "corev1"},
}

// Ownable returns the kinds API.Owns accepts.
func Ownable() []string {
	out := make([]string, len(ownable))
	for i, k := range ownable {
		out[i] = k.Kind
	}
	return out
}

// owned returns the kinds of names (any case, each once, or several in one
// name separated by commas) in the order of
// ownable: a ConfigMap when names is empty. It refuses a kind it does not
// know, and two workloads, whose pods would share one spec.
func owned(names []string) ([]ownKind, error) {
	if len(names) == 0 {
		names = []string{"ConfigMap"}
	}
	var out []ownKind
	for _, name := range strings.Split(strings.Join(names, ","), ",") {
		i := slices.IndexFunc(ownable, func(k ownKind) bool { return strings.EqualFold(k.Kind, strings.TrimSpace(name)) })
		if i < 0 {
			return nil, fmt.Errorf("%w: --owns %q: the controller can own %s", ErrInvalid, name, strings.Join(Ownable(), ", "))
		}
		if !slices.Contains(out, ownable[i]) {
			out = append(out, ownable[i])
		}
	}
	slices.SortFunc(out, func(a, b ownKind) int { return ownIndex(a) - ownIndex(b) })
	var workloads []string
	for _, k := range out {
		if k.Workload {
			workloads = append(workloads, k.Kind)
		}
	}
	if len(workloads) > 1 {
		return nil, fmt.Errorf("%w: --owns %s: one workload per kind, whose pods the kind's spec describes", ErrInvalid, strings.Join(workloads, ","))
	}
	return out, nil
}

func ownIndex(k ownKind) int { return slices.Index(ownable, k) }

// rbacRule is one +kubebuilder:rbac marker of the children's kinds.
type rbacRule struct {
	// Groups is the marker's groups value, quoted when empty.
	Groups    string
	Resources string
}

// ownData returns what the templates need of the kinds a controller owns.
func ownData(kinds []ownKind) map[string]any {
	own := map[string]bool{} // every ownable kind, for the templates
	for _, k := range ownable {
		own[k.Kind] = false
	}
	var workload string
	var replicas bool
	var rules []rbacRule
	imports := map[string]bool{}
	for _, k := range kinds {
		own[k.Kind] = true
		imports[k.Alias] = true
		if k.Workload {
			workload, replicas = k.Kind, k.Replicas
		}
		groups := k.Group
		if groups == "" {
			groups = `""`
		}
		if n := len(rules); n > 0 && rules[n-1].Groups == groups {
			rules[n-1].Resources += ";" + k.Resource
		} else {
			rules = append(rules, rbacRule{Groups: groups, Resources: k.Resource})
		}
	}
	var names []string
	for _, k := range kinds {
		names = append(names, k.Kind)
	}
	return map[string]any{
		"Owns": kinds, "Own": own, "OwnNames": strings.Join(names, ", "),
		"Workload": workload, "Replicas": replicas, "RBAC": rules,
		"Message": own["ConfigMap"] || own["Secret"], "Labels": workload != "" || own["Service"],
		"Apps": imports["appsv1"], "Batch": imports["batchv1"],
	}
}

// nameMax is the longest name a kind named lower may have so that the
// names and labels its children take from it are valid: each child is
// named <name>-<lower>, a ConfigMap's or Deployment's name a DNS subdomain
// (253 characters), a Service's a DNS label (63); the pods of a workload
// carry the label app.kubernetes.io/instance=<name> (63), a Job's the
// label job-name=<child name> (63), a StatefulSet's the label
// controller-revision-hash=<child name>-<hash of up to 10 characters>
// (63).
func nameMax(lower string, kinds []ownKind) int {
	child := len("-" + lower)
	limit := 253 - child
	for _, k := range kinds {
		switch {
		case k.Kind == "StatefulSet":
			limit = min(limit, 63-len("-0123456789")-child)
		case k.Kind == "Service" || k.Kind == "Job":
			limit = min(limit, 63-child)
		case k.Workload:
			limit = min(limit, 63)
		}
	}
	return limit
}
