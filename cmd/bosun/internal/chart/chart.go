package chart

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Options name the chart.
type Options struct {
	// Name is the chart's name; empty means the last element of the
	// manager image's repository.
	Name string
	// Version is the chart's version; empty means 0.1.0.
	Version string
	// AppVersion is the version of the operator the chart deploys; empty
	// means the manager image's tag.
	AppVersion string
}

// ErrInvalid is returned for objects a chart cannot be made of.
var ErrInvalid = errors.New("invalid manifests")

// The templates' expressions.
const (
	// releaseNamespace stands for a whole value that is the namespace;
	// inNamespace for the namespace inside a longer one.
	releaseNamespace = "{{ .Release.Namespace | quote }}"
	inNamespace      = "{{ .Release.Namespace }}"
	imageExpr        = `"{{ .Values.image.repository }}{{ with .Values.image.digest }}@{{ . }}{{ else }}` +
		`{{ with .Values.image.tag | default $.Chart.AppVersion }}:{{ . }}{{ end }}{{ end }}"`
	resourcePolicy   = "helm.sh/resource-policy"
	certManagerGroup = "cert-manager.io"
)

// Write writes into dir the chart of objs, the objects of an operator's
// kustomize output (internal/manifests.Build): Chart.yaml, values.yaml and
// one template per object. The chart installs into the release's
// namespace, which takes the place of the manifests' own in every
// reference to it (their Namespace object is rendered only with
// namespace.create: by default helm install --create-namespace makes it).
// Values set the manager's image, replicas and resources, whether it runs
// with leader election, whether and where it serves metrics, whether
// cert-manager issues the webhook certificate and injects its CA, and
// whether the chart installs the CRDs and keeps them when uninstalled.
// With its default values the chart renders the objects it was made of.
// Write replaces dir's templates/ and its two files, leaving nothing of an
// earlier chart there.
func Write(dir string, objs []*unstructured.Unstructured, opts Options) error {
	c, err := build(objs)
	if err != nil {
		return err
	}
	if opts.Name == "" {
		opts.Name = c.values.repository[strings.LastIndex(c.values.repository, "/")+1:]
	}
	if opts.Version == "" {
		opts.Version = "0.1.0"
	}
	if opts.AppVersion == "" {
		opts.AppVersion = c.values.tag
	}
	files := map[string]string{
		"Chart.yaml":  chartFile(opts),
		"values.yaml": c.values.file(),
	}
	for _, t := range c.templates {
		files[filepath.Join("templates", t.name)] = t.text
	}
	// A template of an object the manifests no longer have must not stay.
	if err := os.RemoveAll(filepath.Join(dir, "templates")); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return nil
}

// chartFile is the text of Chart.yaml.
func chartFile(opts Options) string {
	return fmt.Sprintf(`apiVersion: v2
name: %s
description: The %s operator, made by bosun chart from its kustomize manifests.
type: application
version: %s
appVersion: %s
`, opts.Name, opts.Name, opts.Version, strconv.Quote(opts.AppVersion))
}

// chart is a chart being made.
type chart struct {
	namespace string
	values    values
	templates []template
	// metricsName is the name of the manager's metrics port, if it has one.
	metricsName string
}

// template is one file of templates/.
type template struct {
	name, text string
}

// build makes the chart of objs.
func build(objs []*unstructured.Unstructured) (*chart, error) {
	c := &chart{}
	var managers []*unstructured.Unstructured
	var namespace *unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace":
			namespace = o
		case "Deployment":
			managers = append(managers, o)
		}
	}
	if len(managers) != 1 {
		return nil, fmt.Errorf("%w: a chart is made of one Deployment, the manager's; the manifests have %d", ErrInvalid, len(managers))
	}
	c.namespace = managers[0].GetNamespace()
	if namespace != nil {
		c.namespace = namespace.GetName()
	}
	if c.namespace == "" {
		return nil, fmt.Errorf("%w: the manifests name no namespace", ErrInvalid)
	}
	if namespace != nil {
		// The chart renders the manifests' Namespace only when asked
		// (namespace.create), for its labels, such as the Pod Security
		// Standard it enforces, which helm install --create-namespace
		// does not set.
		c.values.namespace = true
		t := newTokens()
		n := namespace.DeepCopy()
		n.SetName(t.inline(releaseNamespace))
		if err := c.add(n, t, ".Values.namespace.create"); err != nil {
			return nil, err
		}
	}
	t := newTokens()
	d := managers[0].DeepCopy()
	if err := c.manager(d, t); err != nil {
		return nil, err
	}
	if err := c.add(d, t, ""); err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.GetKind() == "Namespace" || o.GetKind() == "Deployment" {
			continue
		}
		t := newTokens()
		o = o.DeepCopy()
		var cond string
		switch {
		case o.GetKind() == "CustomResourceDefinition":
			c.values.crds = true
			cond = ".Values.crds.install"
			setAnnotation(o, resourcePolicy, t.line("keep", ".Values.crds.keep"))
		case strings.HasPrefix(o.GetAPIVersion(), certManagerGroup+"/"):
			c.values.certManager = true
			cond = ".Values.certManager.enabled"
		case o.GetKind() == "Service" && c.isMetricsService(o, t):
			cond = ".Values.metrics.enabled"
		}
		for _, key := range []string{certManagerGroup + "/inject-ca-from", certManagerGroup + "/inject-ca-from-secret"} {
			if v, ok := o.GetAnnotations()[key]; ok {
				c.values.certManager = true
				if rest, ok := strings.CutPrefix(v, c.namespace+"/"); ok {
					v = inNamespace + "/" + value(rest)
				} else {
					v = value(v)
				}
				setAnnotation(o, key, t.line(v, ".Values.certManager.enabled"))
			}
		}
		if err := c.add(o, t, cond); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// add adds the template of o, its namespace references made the
// release's, rendered only when cond holds (always when it is empty).
func (c *chart) add(o *unstructured.Unstructured, t *tokens, cond string) error {
	text, err := t.render(c.releaseNamespace(o.Object, t).(map[string]any))
	if err != nil {
		return fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
	}
	c.templates = append(c.templates, template{name: fileName(o), text: wrap(text, cond)})
	return nil
}

// releaseNamespace returns v with its references to the manifests'
// namespace made the release's: a field named namespace that holds it (an
// object's, a binding subject's, a webhook Service's), and a Service's
// DNS name in it (NAME.NAMESPACE.svc...).
func (c *chart) releaseNamespace(v any, t *tokens) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok && k == "namespace" && s == c.namespace {
				out[k] = t.inline(releaseNamespace)
				continue
			}
			out[k] = c.releaseNamespace(e, t)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = c.releaseNamespace(e, t)
		}
		return out
	case string:
		if svc, rest, ok := strings.Cut(x, "."+c.namespace+".svc"); ok && (rest == "" || strings.HasPrefix(rest, ".")) {
			return t.inline(value(svc) + "." + inNamespace + ".svc" + value(rest))
		}
		return x
	default:
		return v
	}
}

// manager turns the manager Deployment's settings into values.
func (c *chart) manager(d *unstructured.Unstructured, t *tokens) error {
	if r, ok, _ := unstructured.NestedInt64(d.Object, "spec", "replicas"); ok {
		c.values.replicas = &r
		if err := unstructured.SetNestedField(d.Object, t.inline("{{ .Values.replicas }}"), "spec", "replicas"); err != nil {
			return err
		}
	} else {
		// Left to Kubernetes or an autoscaler unless a value sets it.
		cond := `not (kindIs "invalid" .Values.replicas)`
		if err := unstructured.SetNestedField(d.Object, t.line("{{ .Values.replicas }}", cond), "spec", "replicas"); err != nil {
			return err
		}
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	idx := slices.IndexFunc(containers, func(x any) bool {
		m, _ := x.(map[string]any)
		return m["name"] == "manager"
	})
	if idx < 0 && len(containers) > 0 {
		idx = 0
	}
	if idx < 0 {
		return fmt.Errorf("%w: Deployment %s has no container", ErrInvalid, d.GetName())
	}
	m, _ := containers[idx].(map[string]any)
	image, _ := m["image"].(string)
	c.values.repository, c.values.tag, c.values.digest = splitImage(image)
	m["image"] = t.inline(imageExpr)
	c.values.pullPolicy, _ = m["imagePullPolicy"].(string)
	m["imagePullPolicy"] = t.line("{{ .Values.image.pullPolicy }}", ".Values.image.pullPolicy")
	c.values.resources, _ = m["resources"].(map[string]any)
	cond := ".Values.resources"
	if c.values.resources != nil {
		cond = ""
	}
	m["resources"] = t.block("{{- toYaml .Values.resources | nindent %d }}", cond)
	args, _ := m["args"].([]any)
	for i, a := range args {
		s, _ := a.(string)
		switch {
		case s == "--leader-elect" || s == "--leader-elect=true":
			c.values.leaderElection = true
			args[i] = t.line(value(s), ".Values.leaderElection.enabled")
		case strings.HasPrefix(s, "--metrics-bind-address="):
			host, port, _ := strings.Cut(strings.TrimPrefix(s, "--metrics-bind-address="), ":")
			if p, err := strconv.ParseInt(port, 10, 32); err == nil && p > 0 {
				c.values.metricsPort = p
				args[i] = t.inline("--metrics-bind-address={{ if .Values.metrics.enabled }}" + value(host) +
					":{{ .Values.metrics.port }}{{ else }}0{{ end }}")
			}
		}
	}
	if c.values.metricsPort != 0 {
		ports, _ := m["ports"].([]any)
		for _, p := range ports {
			pm, _ := p.(map[string]any)
			if n, ok := pm["containerPort"].(int64); ok && n == c.values.metricsPort {
				pm["containerPort"] = t.inline("{{ .Values.metrics.port }}")
				c.metricsName, _ = pm["name"].(string)
			}
		}
	}
	containers[idx] = m
	return unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers")
}

// isMetricsService reports whether the Service svc serves the manager's
// metrics port (a port whose targetPort is its number or its name), and
// then makes that port follow metrics.port.
func (c *chart) isMetricsService(svc *unstructured.Unstructured, t *tokens) bool {
	if c.values.metricsPort == 0 {
		return false
	}
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	found := false
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		switch target := pm["targetPort"].(type) {
		case int64:
			if target != c.values.metricsPort {
				continue
			}
			pm["targetPort"] = t.inline("{{ .Values.metrics.port }}")
		case string:
			if c.metricsName == "" || target != c.metricsName {
				continue
			}
		default:
			continue
		}
		found = true
		if n, ok := pm["port"].(int64); ok && n == c.values.metricsPort {
			pm["port"] = t.inline("{{ .Values.metrics.port }}")
		}
	}
	if found {
		_ = unstructured.SetNestedSlice(svc.Object, ports, "spec", "ports")
	}
	return found
}

// splitImage splits an image reference into its repository, tag and
// digest, each of which may be empty but the repository.
func splitImage(image string) (repository, tag, digest string) {
	image, digest, _ = strings.Cut(image, "@")
	slash := strings.LastIndex(image, "/")
	if i := strings.LastIndex(image, ":"); i > slash {
		return image[:i], image[i+1:], digest
	}
	return image, "", digest
}

// setAnnotation sets an annotation of o.
func setAnnotation(o *unstructured.Unstructured, key, value string) {
	a := o.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[key] = value
	o.SetAnnotations(a)
}

// fileName is the template file of o: templates/crds/ for CRDs, else its
// name and kind.
func fileName(o *unstructured.Unstructured) string {
	switch o.GetKind() {
	case "Namespace":
		return "namespace.yaml"
	case "CustomResourceDefinition":
		return filepath.Join("crds", o.GetName()+".yaml")
	}
	return strings.ToLower(o.GetName()+"-"+o.GetKind()) + ".yaml"
}

// wrap makes text depend on cond; an empty cond leaves it as it is.
func wrap(text, cond string) string {
	if cond == "" {
		return text
	}
	return "{{- if " + cond + " }}\n" + text + "{{- end }}\n"
}
