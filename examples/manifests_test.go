package examples_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/controlplane"
	"github.com/bosunkit/bosun/examples/hello"
	"github.com/bosunkit/bosun/examples/simple"
	"github.com/bosunkit/bosun/internal/manifests"
	"github.com/bosunkit/bosun/operator"
)

var examples = []string{"cronjob", "hello", "memcached", "postgres", "rwexternal", "simple", "site"}

func defaultDir(example string) string {
	return filepath.Join(example, "config", "default")
}

// deployment is what the tests check of an example's Deployment.
type deployment struct {
	Replicas                      int32
	ServiceAccount                string
	TerminationGracePeriodSeconds int64
	Image                         string
	Args                          []string
	Liveness, Readiness           string // path:port
	Requests, Limits              bool   // cpu and memory both set
	RunAsNonRoot                  bool
	RunAsUser                     int64
	Seccomp                       corev1.SeccompProfileType
	ReadOnlyRootFilesystem        bool
	AllowPrivilegeEscalation      bool
	CapabilitiesDropped           []corev1.Capability
}

func wantDeployment(example string) deployment {
	d := deployment{
		Replicas:                      2,
		ServiceAccount:                example + "-controller-manager",
		TerminationGracePeriodSeconds: 40,
		Image:                         example + ":dev",
		Args:                          []string{"--leader-elect", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8443", "--graceful-shutdown-timeout=30s"},
		Liveness:                      "/healthz:8081",
		Readiness:                     "/readyz:8081",
		Requests:                      true,
		Limits:                        true,
		RunAsNonRoot:                  true,
		RunAsUser:                     65532,
		Seccomp:                       corev1.SeccompProfileTypeRuntimeDefault,
		ReadOnlyRootFilesystem:        true,
		AllowPrivilegeEscalation:      false,
		CapabilitiesDropped:           []corev1.Capability{"ALL"},
	}
	if example == "cronjob" {
		// It serves webhooks, with the certificate cert-manager writes.
		d.Args = append(d.Args, "--webhook-cert-path=/tmp/k8s-webhook-server/serving-certs")
	}
	return d
}

// deploymentOf projects d onto what the tests check.
func deploymentOf(t *testing.T, d *appsv1.Deployment) deployment {
	t.Helper()
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("Deployment %s has %d containers, want 1", d.Name, len(pod.Containers))
	}
	c := pod.Containers[0]
	probe := func(p *corev1.Probe) string {
		if p == nil || p.HTTPGet == nil {
			return ""
		}
		return p.HTTPGet.Path + ":" + p.HTTPGet.Port.String()
	}
	both := func(r corev1.ResourceList) bool { return !r.Cpu().IsZero() && !r.Memory().IsZero() }
	got := deployment{
		Replicas:       ptrValue(d.Spec.Replicas),
		ServiceAccount: pod.ServiceAccountName,
		Image:          c.Image,
		Args:           c.Args,
		Liveness:       probe(c.LivenessProbe),
		Readiness:      probe(c.ReadinessProbe),
		Requests:       both(c.Resources.Requests),
		Limits:         both(c.Resources.Limits),
	}
	got.TerminationGracePeriodSeconds = ptrValue(pod.TerminationGracePeriodSeconds)
	if psc := pod.SecurityContext; psc != nil {
		got.RunAsNonRoot = ptrValue(psc.RunAsNonRoot)
		if psc.SeccompProfile != nil {
			got.Seccomp = psc.SeccompProfile.Type
		}
	}
	if sc := c.SecurityContext; sc != nil {
		got.RunAsUser = ptrValue(sc.RunAsUser)
		got.ReadOnlyRootFilesystem = ptrValue(sc.ReadOnlyRootFilesystem)
		got.AllowPrivilegeEscalation = ptrValue(sc.AllowPrivilegeEscalation)
		if sc.Capabilities != nil {
			got.CapabilitiesDropped = sc.Capabilities.Drop
		}
	}
	return got
}

func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// convert converts u into the typed object out.
func convert(t *testing.T, u *unstructured.Unstructured, out any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
}

// TestBuildExamples: each example's config/default renders, the same
// bytes every time, its CRDs, least-privilege RBAC and a hardened
// Deployment, every name prefixed with the example and every namespaced
// object in <example>-system.
func TestBuildExamples(t *testing.T) {
	for _, ex := range examples {
		t.Run(ex, func(t *testing.T) {
			out, objs, err := manifests.Build(defaultDir(ex))
			if err != nil {
				t.Fatal(err)
			}
			again, _, err := manifests.Build(defaultDir(ex))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, again) {
				t.Error("two renderings differ")
			}
			if n := bytes.Count(out, []byte("\n---\n")) + 1; n != len(objs) {
				t.Errorf("the YAML holds %d documents, want one per object (%d)", n, len(objs))
			}

			var names []string
			ns := ex + "-system"
			var crds []string
			for _, o := range objs {
				if o.GetKind() == "CustomResourceDefinition" {
					plural, _, _ := unstructured.NestedString(o.Object, "spec", "names", "plural")
					group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
					crds = append(crds, plural+"."+group)
					continue
				}
				names = append(names, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
			}
			slices.Sort(names)
			want := []string{
				"ClusterRole /" + ex + "-manager-role",
				"ClusterRole /" + ex + "-metrics-auth-role",
				"ClusterRole /" + ex + "-metrics-reader",
				"ClusterRoleBinding /" + ex + "-manager-rolebinding",
				"ClusterRoleBinding /" + ex + "-metrics-auth-rolebinding",
				"Deployment " + ns + "/" + ex + "-controller-manager",
				"Namespace /" + ns,
				"Role " + ns + "/" + ex + "-leader-election-role",
				"RoleBinding " + ns + "/" + ex + "-leader-election-rolebinding",
				"Service " + ns + "/" + ex + "-controller-manager-metrics",
				"ServiceAccount " + ns + "/" + ex + "-controller-manager",
			}
			if ex == "cronjob" {
				// Its webhooks, their Service and certificate.
				want = append(want,
					"Certificate "+ns+"/"+ex+"-serving-cert",
					"Issuer "+ns+"/"+ex+"-selfsigned-issuer",
					"MutatingWebhookConfiguration /"+ex+"-mutating-webhook-configuration",
					"Service "+ns+"/"+ex+"-webhook-service",
					"ValidatingWebhookConfiguration /"+ex+"-validating-webhook-configuration",
				)
				slices.Sort(want)
			}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("objects besides the CRDs (-want +got):\n%s", diff)
			}

			var dep appsv1.Deployment
			var role rbacv1.ClusterRole
			for _, o := range objs {
				switch {
				case o.GetKind() == "Deployment":
					convert(t, o, &dep)
				case o.GetKind() == "ClusterRole" && o.GetName() == ex+"-manager-role":
					convert(t, o, &role)
				}
			}
			if diff := cmp.Diff(wantDeployment(ex), deploymentOf(t, &dep)); diff != "" {
				t.Errorf("the Deployment (-want +got):\n%s", diff)
			}
			if len(crds) == 0 {
				t.Fatal("no CRD rendered")
			}
			for _, crd := range crds {
				plural, group, _ := strings.Cut(crd, ".")
				wants := []struct{ resource, verb string }{{plural, "watch"}, {plural, "patch"}, {plural + "/status", "patch"}}
				if !ownsNothing[plural] {
					// Only kinds that own objects need the finalizers
					// subresource (blockOwnerDeletion).
					wants = append(wants, struct{ resource, verb string }{plural + "/finalizers", "update"})
				}
				for _, want := range wants {
					if !grants(&role, group, want.resource, want.verb) {
						t.Errorf("the ClusterRole does not grant %s of %s.%s", want.verb, want.resource, group)
					}
				}
				if grants(&role, group, plural, "create") || grants(&role, group, plural, "delete") {
					t.Errorf("the ClusterRole grants the controller create or delete of its own kind %s", crd)
				}
			}
		})
	}
}

// ownsNothing holds the plurals of the examples' kinds whose objects own
// no other object, so that their roles grant no update on the finalizers
// subresource: a Database, a Simple, and an RWExternal, whose output
// Secret names it in an annotation.
var ownsNothing = map[string]bool{"databases": true, "rwexternals": true, "simples": true}

// grants reports whether role allows verb on resource of group.
func grants(role *rbacv1.ClusterRole, group, resource, verb string) bool {
	for _, r := range role.Rules {
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

// serviceAccount is the user name of example's ServiceAccount.
func serviceAccount(example string) string {
	return fmt.Sprintf("system:serviceaccount:%s-system:%s-controller-manager", example, example)
}

// access is one question to the API server: may the example's
// ServiceAccount do verb on resource in namespace ns ("" for every
// namespace or a cluster-scoped resource)?
type access struct {
	group, resource, subresource, verb, ns string
}

func (a access) String() string {
	r := a.resource
	if a.group != "" {
		r += "." + a.group
	}
	if a.subresource != "" {
		r += "/" + a.subresource
	}
	where := "every namespace"
	if a.ns != "" {
		where = a.ns
	}
	return fmt.Sprintf("%s %s in %s", a.verb, r, where)
}

// TestApplyAndRunAsServiceAccount applies every example's config/default
// server-side to a real API server (twice: the second apply changes
// nothing), checks the Deployments the server stored, asks the server,
// as each example's ServiceAccount, what it may and may not do, and runs
// the simple and hello operators as their ServiceAccounts, with the
// arguments of their Deployments and leader election, until their samples
// are Ready: the roles they ship are enough.
func TestApplyAndRunAsServiceAccount(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, simple.AddToScheme, hello.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	cp := bosuntest.Start(t, controlplane.Options{Scheme: scheme, CRDs: certManagerStandIns()})
	ctx := t.Context()
	for _, ex := range examples {
		_, objs, err := manifests.Build(defaultDir(ex))
		if err != nil {
			t.Fatal(err)
		}
		if err := manifests.Apply(ctx, cp.Client, objs, "bosun-test"); err != nil {
			t.Fatalf("%s: %v", ex, err)
		}
		before := resourceVersions(t, cp.Client, objs)
		if err := manifests.Apply(ctx, cp.Client, objs, "bosun-test"); err != nil {
			t.Fatalf("%s, again: %v", ex, err)
		}
		if diff := cmp.Diff(before, resourceVersions(t, cp.Client, objs)); diff != "" {
			t.Errorf("%s: applying the same manifests again changed objects (resource versions -first +second):\n%s", ex, diff)
		}

		var dep appsv1.Deployment
		if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: ex + "-system", Name: ex + "-controller-manager"}, &dep); err != nil {
			t.Fatalf("%s: the applied Deployment: %v", ex, err)
		}
		if diff := cmp.Diff(wantDeployment(ex), deploymentOf(t, &dep)); diff != "" {
			t.Errorf("%s: the Deployment the server holds (-want +got):\n%s", ex, diff)
		}
		checkPodSecurity(t, cp.Client, &dep)
	}

	t.Run("access", func(t *testing.T) {
		for _, ex := range examples {
			checkAccess(t, cp, ex)
		}
	})
	t.Run("simple", func(t *testing.T) {
		runAsServiceAccount(t, cp, operator.Options{Name: "simple", AddToScheme: simple.AddToScheme, Setup: simple.SetupWithManager}, simple.Samples)
	})
	t.Run("hello", func(t *testing.T) {
		runAsServiceAccount(t, cp, operator.Options{
			Name:        "hello",
			AddToScheme: hello.AddToScheme,
			Setup:       hello.SetupWithManager,
		}, hello.Samples)
	})
}

// certManagerStandIns returns CRDs for the cert-manager kinds the cronjob
// example's manifests hold, Issuer and Certificate, which keep whatever
// they are given: enough for the manifests to apply where cert-manager is
// not installed (nothing issues the certificate).
func certManagerStandIns() []*apiextensionsv1.CustomResourceDefinition {
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, kind := range []string{"Issuer", "Certificate"} {
		plural := strings.ToLower(kind) + "s"
		crds = append(crds, &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: plural + ".cert-manager.io"},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: "cert-manager.io",
				Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, ListKind: kind + "List", Plural: plural, Singular: strings.ToLower(kind)},
				Scope: apiextensionsv1.NamespaceScoped,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object", XPreserveUnknownFields: ptr.To(true),
					}},
				}},
			},
		})
	}
	return crds
}

// checkPodSecurity: the namespace of dep enforces the restricted Pod
// Security Standard, and admits a Pod of dep's template (a dry run: there
// is no kubelet to run it) but not one without its security contexts.
func checkPodSecurity(t *testing.T, c client.Client, dep *appsv1.Deployment) {
	t.Helper()
	pod := func(spec corev1.PodSpec) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: dep.Namespace, GenerateName: dep.Name + "-"},
			Spec:       spec,
		}
	}
	if err := c.Create(t.Context(), pod(dep.Spec.Template.Spec), client.DryRunAll); err != nil {
		t.Errorf("a Pod of Deployment %s/%s: %v", dep.Namespace, dep.Name, err)
	}
	loose := dep.Spec.Template.Spec.DeepCopy()
	loose.SecurityContext = nil
	loose.Containers[0].SecurityContext = nil
	if err := c.Create(t.Context(), pod(*loose), client.DryRunAll); !apierrors.IsForbidden(err) {
		t.Errorf("a Pod without security contexts in %s: %v, want Forbidden by Pod Security admission", dep.Namespace, err)
	}
}

// resourceVersions maps each of objs to its resource version on the server.
func resourceVersions(t *testing.T, c client.Client, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range objs {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(o), got); err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		out[o.GetKind()+" "+client.ObjectKeyFromObject(o).String()] = got.GetResourceVersion()
	}
	return out
}

// checkAccess asks the API server, as example's ServiceAccount, what it
// may do: what every controller needs, what this one needs, and what it
// must not be able to do.
func checkAccess(t *testing.T, cp *controlplane.ControlPlane, example string) {
	t.Helper()
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: serviceAccount(example)}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	own := example + "-system"
	allowed := []access{
		{"coordination.k8s.io", "leases", "", "create", own},
		{"coordination.k8s.io", "leases", "", "update", own},
		{"", "events", "", "create", own},
		{"events.k8s.io", "events", "", "create", "default"},
		{"authentication.k8s.io", "tokenreviews", "", "create", ""},
		{"authorization.k8s.io", "subjectaccessreviews", "", "create", ""},
	}
	denied := []access{
		{"coordination.k8s.io", "leases", "", "create", "default"},
		{"coordination.k8s.io", "leases", "", "delete", own},
		{"", "events", "", "create", "default"},
		{"", "pods", "", "list", ""},
		{"apiextensions.k8s.io", "customresourcedefinitions", "", "create", ""},
		{"rbac.authorization.k8s.io", "clusterroles", "", "update", ""},
		{"apps", "deployments", "", "update", own},
	}
	kind := func(group, plural string) {
		allowed = append(allowed,
			access{group, plural, "", "watch", ""},
			access{group, plural, "", "patch", "default"},
			access{group, plural, "status", "patch", "default"},
		)
		// The finalizers subresource is for owner references with
		// blockOwnerDeletion: only kinds that own something need it.
		if !ownsNothing[plural] {
			allowed = append(allowed, access{group, plural, "finalizers", "update", "default"})
		} else {
			denied = append(denied, access{group, plural, "finalizers", "update", "default"})
		}
		denied = append(denied,
			access{group, plural, "", "create", "default"},
			access{group, plural, "", "delete", "default"},
		)
	}
	engine := access{"", "namespaces", "", "watch", ""}
	switch example {
	case "cronjob":
		kind("cronjob.bosun.dev", "cronjobs")
		allowed = append(allowed, engine, access{"batch", "jobs", "", "create", "default"}, access{"batch", "jobs", "", "delete", "default"})
		denied = append(denied, access{"batch", "jobs", "", "update", "default"}, access{"", "configmaps", "", "create", "default"}, access{"", "secrets", "", "get", own})
	case "hello":
		kind("hello.bosun.dev", "greetings")
		allowed = append(allowed, engine, access{"", "configmaps", "", "create", "default"}, access{"", "configmaps", "", "delete", "default"})
		denied = append(denied, access{"", "configmaps", "", "patch", "default"}, access{"", "secrets", "", "list", "default"}, access{"", "secrets", "", "get", own})
	case "memcached":
		kind("cache.example.bosun.dev", "memcacheds")
		allowed = append(allowed, engine, access{"", "pods", "", "list", ""}, access{"", "pods", "", "watch", ""},
			access{"apps", "deployments", "", "create", "default"}, access{"apps", "deployments", "", "patch", "default"},
			access{"", "services", "", "create", "default"}, access{"", "services", "", "delete", "default"})
		denied = slices.DeleteFunc(denied, func(a access) bool { return a.resource == "pods" })
		denied = append(denied, access{"", "pods", "", "delete", "default"}, access{"apps", "deployments", "", "update", "default"},
			access{"", "secrets", "", "get", own}, access{"", "configmaps", "", "get", "default"})
	case "postgres":
		kind("postgres.bosun.dev", "roles")
		kind("postgres.bosun.dev", "databases")
		allowed = append(allowed, engine, access{"", "secrets", "", "create", "default"}, access{"", "secrets", "", "update", "default"})
		denied = append(denied, access{"", "configmaps", "", "get", "default"}, access{"", "secrets", "", "patch", "default"})
	case "rwexternal":
		kind("rwexternal.bosun.dev", "rwexternals")
		allowed = append(allowed, engine, access{"", "secrets", "", "create", "default"})
		denied = append(denied, access{"", "configmaps", "", "get", "default"}, access{"", "secrets", "", "patch", "default"})
	case "simple":
		kind("simple.bosun.dev", "simples")
		allowed = append(allowed, engine)
		denied = append(denied, access{"", "secrets", "", "get", own}, access{"", "configmaps", "", "get", "default"})
	case "site":
		kind("site.bosun.dev", "sites")
		allowed = append(allowed, engine, access{"", "configmaps", "", "create", "default"}, access{"", "services", "", "patch", "default"}, access{"", "secrets", "", "watch", ""})
		denied = append(denied, access{"", "secrets", "", "update", "default"}, access{"", "secrets", "", "delete", own})
	default:
		t.Fatalf("no access table for example %q", example)
	}
	for _, tc := range []struct {
		accesses []access
		want     bool
	}{{allowed, true}, {denied, false}} {
		for _, a := range tc.accesses {
			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: a.ns, Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource},
			}}
			if err := c.Create(t.Context(), review); err != nil {
				t.Fatalf("%s: %v", example, err)
			}
			if review.Status.Allowed != tc.want {
				t.Errorf("%s may %s: %v, want %v", example, a, review.Status.Allowed, tc.want)
			}
		}
	}
}

// runAsServiceAccount runs the operator opts as its example's
// ServiceAccount, with the arguments of the Deployment the server holds
// (addresses on loopback, and the Lease's namespace given, since the
// operator does not run in a Pod), until every sample is Ready for its
// generation, and checks that it led through a Lease in its namespace
// and announced it with an Event.
func runAsServiceAccount(t *testing.T, cp *controlplane.ControlPlane, opts operator.Options, samples func(string) []client.Object) {
	ctx := t.Context()
	ex := opts.Name
	own := ex + "-system"

	// A kubeconfig as the ServiceAccount, for ctrl.GetConfig.
	kc, err := cp.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(kc)
	if err != nil {
		t.Fatal(err)
	}
	for _, user := range cfg.AuthInfos {
		user.Impersonate = serviceAccount(ex)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", path)
	if f := flag.Lookup("kubeconfig"); f != nil && f.Value.String() != "" {
		t.Fatalf("--kubeconfig is set to %q, which wins over KUBECONFIG", f.Value.String())
	}

	var dep appsv1.Deployment
	if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: own, Name: ex + "-controller-manager"}, &dep); err != nil {
		t.Fatal(err)
	}
	args := slices.Clone(dep.Spec.Template.Spec.Containers[0].Args)
	args = append(args, "--health-probe-bind-address=127.0.0.1:0", "--metrics-bind-address=127.0.0.1:0", "--leader-election-namespace="+own)
	flags := operator.DefaultFlags()
	fs := flag.NewFlagSet(ex, flag.ContinueOnError)
	flags.Bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("the Deployment's arguments %q: %v", args, err)
	}
	if !flags.LeaderElect {
		t.Fatalf("the Deployment's arguments %q do not turn leader election on", args)
	}

	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- operator.Run(runCtx, opts, flags, &bytes.Buffer{}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", ex, err)
			}
		case <-time.After(time.Minute):
			t.Errorf("%s still running a minute after its context ended", ex)
		}
	})

	ns := bosuntest.Namespace(t, cp.Client)
	objs := samples(ns)
	for _, o := range objs {
		if err := cp.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range objs {
		bosuntest.Eventually(t, func(ctx context.Context) error {
			if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
				return err
			}
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
			if err != nil {
				return err
			}
			raw, _, _ := unstructured.NestedSlice(u, "status", "conditions")
			conds := make([]metav1.Condition, len(raw))
			for i, r := range raw {
				m, ok := r.(map[string]any)
				if !ok {
					return fmt.Errorf("%s %s: condition %d is a %T", ex, o.GetName(), i, r)
				}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &conds[i]); err != nil {
					return err
				}
			}
			c := meta.FindStatusCondition(conds, "Ready")
			if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != o.GetGeneration() {
				return fmt.Errorf("%s %s is not Ready for generation %d: %+v", ex, o.GetName(), o.GetGeneration(), conds)
			}
			return nil
		})
	}

	bosuntest.Eventually(t, func(ctx context.Context) error {
		var lease coordinationv1.Lease
		if err := cp.Client.Get(ctx, client.ObjectKey{Namespace: own, Name: ex + ".bosun.dev"}, &lease); err != nil {
			return err
		}
		if ptrValue(lease.Spec.HolderIdentity) == "" {
			return fmt.Errorf("lease %s has no holder", lease.Name)
		}
		var events corev1.EventList
		if err := cp.Client.List(ctx, &events, client.InNamespace(own)); err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == "LeaderElection" && e.InvolvedObject.Name == lease.Name {
				return nil
			}
		}
		return fmt.Errorf("no LeaderElection event for lease %s in %s yet", lease.Name, own)
	})
}
