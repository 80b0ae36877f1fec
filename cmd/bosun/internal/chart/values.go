package chart

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// values are the chart's values, and which of them it has.
type values struct {
	repository, tag, digest, pullPolicy string
	// replicas is nil when the Deployment leaves them unset, resources
	// when the container does.
	replicas       *int64
	resources      map[string]any
	namespace      bool
	leaderElection bool
	metricsPort    int64
	certManager    bool
	crds           bool
}

// file is the text of values.yaml: each value with what it does.
func (v values) file() string {
	var b strings.Builder
	b.WriteString("# The values of this chart, made by bosun chart; the defaults render the manifests it was made of.\n\n")
	fmt.Fprintf(&b, `# The manager's image: a digest, when set, wins over the tag; an empty tag is the chart's
# appVersion; an empty pullPolicy is Kubernetes' default.
image:
  repository: %q
  tag: ""
  digest: %q
  pullPolicy: %q
`, v.repository, v.digest, v.pullPolicy)
	if v.replicas != nil {
		fmt.Fprintf(&b, `
# Replicas of the manager; with leader election, one of them reconciles at a time.
replicas: %d
`, *v.replicas)
	} else {
		b.WriteString(`
# Replicas of the manager; unset (null), the Deployment leaves them to Kubernetes or an autoscaler.
replicas: null
`)
	}
	fmt.Fprintf(&b, `
# The manager container's resources; empty, the container sets none.
resources:
%s
`, indent(v.resources))
	if v.namespace {
		b.WriteString(`
# Render the manifests' Namespace as the release's, with its labels (such as the Pod Security
# Standard it enforces); install without --create-namespace then. Off, helm install
# --create-namespace makes a namespace without them.
namespace:
  create: false
`)
	}
	if v.leaderElection {
		b.WriteString(`
# Leader election (--leader-elect): needed for more than one replica.
leaderElection:
  enabled: true
`)
	}
	if v.metricsPort != 0 {
		fmt.Fprintf(&b, `
# The metrics endpoint (--metrics-bind-address, served over HTTPS to authorised clients) and its Service.
metrics:
  enabled: true
  port: %d
`, v.metricsPort)
	}
	if v.certManager {
		b.WriteString(`
# cert-manager issues the webhook server's certificate and injects its CA into the webhook
# configurations and the CRDs' conversion. Without it, provide the certificate's Secret and the
# caBundle fields yourself.
certManager:
  enabled: true
`)
	}
	if v.crds {
		b.WriteString(`
# The CRDs: installed with the chart, and kept when it is uninstalled (with every object of them).
crds:
  install: true
  keep: true
`)
	}
	return b.String()
}

// indent is m as YAML, indented by two spaces; {} when it is empty.
func indent(m map[string]any) string {
	if len(m) == 0 {
		return "  {}"
	}
	out, err := yaml.Marshal(m)
	if err != nil {
		return "  {}"
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n")
}
