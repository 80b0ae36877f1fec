package controlplane

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Names of two kube-controller-manager controllers, for Options.Controllers
// and RunningControllers. Any name kube-controller-manager's --controllers
// flag takes works in Options.Controllers.
const (
	// GarbageCollectorController deletes the objects whose owners are gone
	// and carries out foreground and orphan deletion.
	GarbageCollectorController = "garbage-collector-controller"
	// NamespaceController deletes the content of a namespace being deleted
	// and then removes the namespace.
	NamespaceController = "namespace-controller"
)

// controllersAnnotation is the annotation on the kube-system namespace in
// which Start records, once kube-controller-manager is ready, the
// comma-separated names of the controllers it runs. RunningControllers reads
// it.
const controllersAnnotation = "controlplane.bosun.dev/controllers"

// DefaultControllers returns the kube-controller-manager controllers that
// Start runs when Options.ControllerManager is set and Options.Controllers
// is nil: what the objects of most operators need to behave as in a real
// cluster.
//
//	garbage-collector-controller     dependents of deleted owners go; foreground and orphan deletion
//	namespace-controller             a deleted namespace is emptied and removed
//	deployment-controller            Deployments make ReplicaSets, roll, report status
//	replicaset-controller            ReplicaSets make pods
//	statefulset-controller           StatefulSets make pods in order
//	daemonset-controller             DaemonSets make a pod per node
//	job-controller                   Jobs make pods and complete or fail
//	cronjob-controller               CronJobs make Jobs
//	ttl-after-finished-controller    finished Jobs go after ttlSecondsAfterFinished
//	endpointslice-controller         Services get EndpointSlices of their ready pods
//	serviceaccount-controller        each namespace gets its default ServiceAccount
//	serviceaccount-token-controller  service account token Secrets are filled in
//
// Pods stay Pending unless Options.Nodes runs nodes for them.
func DefaultControllers() []string {
	return []string{
		GarbageCollectorController,
		NamespaceController,
		"deployment-controller",
		"replicaset-controller",
		"statefulset-controller",
		"daemonset-controller",
		"job-controller",
		"cronjob-controller",
		"ttl-after-finished-controller",
		"endpointslice-controller",
		"serviceaccount-controller",
		"serviceaccount-token-controller",
	}
}

// controllersOf returns the controllers a control plane started with opts
// runs.
func controllersOf(opts Options) []string {
	if opts.Controllers != nil {
		return opts.Controllers
	}
	return DefaultControllers()
}

// probePollInterval is how often Start looks whether its probes are done.
const probePollInterval = 100 * time.Millisecond

// controllerManagerArgs returns the arguments of kube-controller-manager for
// a control plane started with opts: it connects with kubeconfig, runs the
// controllers of opts, and signs service account tokens with the API
// server's key saKey, publishing caFile as the cluster's CA.
func controllerManagerArgs(opts Options, kubeconfig, saKey, caFile string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + strings.Join(controllersOf(opts), ","),
		// One process, nobody to elect against; a lost lease would only
		// make it exit on a busy machine.
		"--leader-elect=false",
		// No health, metrics or debug endpoints: nothing reads them.
		"--secure-port=0",
		"--service-account-private-key-file=" + saKey,
		"--root-ca-file=" + caFile,
	}
}

// waitGarbageCollector returns once the garbage collector has deleted a
// probe: a ConfigMap in kube-system whose owner does not exist. The garbage
// collector deletes it only after it has found every resource and synced
// its caches, so it then works for every object of the control plane. It
// fails if p exits first or ctx ends.
func waitGarbageCollector(ctx context.Context, c client.Client, p *process) error {
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Namespace:    metav1.NamespaceSystem,
		GenerateName: "bosun-garbage-collector-probe-",
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1",
			Kind:       "ConfigMap",
			Name:       "bosun-garbage-collector-probe-owner",
			UID:        uuid.NewUUID(),
		}},
	}}
	if err := c.Create(ctx, probe); err != nil {
		return fmt.Errorf("creating the garbage collector's probe: %w", err)
	}
	key := client.ObjectKeyFromObject(probe)
	err := pollProcess(ctx, p, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, key, &corev1.ConfigMap{})
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			return false, fmt.Errorf("reading the garbage collector's probe: %w", err)
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("its garbage collector did not delete the probe ConfigMap %s, whose owner does not exist: %w", key, err)
	}
	return nil
}

// pollProcess calls done every probePollInterval until it reports true, it
// fails, p exits or ctx ends. Errors of done while ctx is
// ending are taken for the end of ctx.
func pollProcess(ctx context.Context, p *process, done func(context.Context) (bool, error)) error {
	var failed error
	err := wait.PollUntilContextCancel(ctx, probePollInterval, false, func(ctx context.Context) (bool, error) {
		if p.exitErr() != nil {
			failed = fmt.Errorf("%s exited before it was ready: %w", p.name, p.waitErr)
			return false, failed
		}
		ok, err := done(ctx)
		if err != nil && ctx.Err() == nil {
			failed = err
			return false, err
		}
		return ok, nil
	})
	if failed != nil {
		return failed
	}
	return err
}

// recordControllers writes controllers into controllersAnnotation on the
// kube-system namespace.
func recordControllers(ctx context.Context, c client.Client, controllers []string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: metav1.NamespaceSystem}}
	patch := client.RawPatch(client.Merge.Type(), fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`,
		controllersAnnotation, strings.Join(controllers, ",")))
	if err := c.Patch(ctx, ns, patch); err != nil {
		return fmt.Errorf("recording the running controllers on namespace %s: %w", metav1.NamespaceSystem, err)
	}
	return nil
}

// RunningControllers returns the names of the kube-controller-manager
// controllers that run against the API server c reads from, as Start
// recorded them in controllersAnnotation (DefaultControllers, unless
// Options.Controllers said otherwise, when Options.ControllerManager is
// set), or none. A
// caller that may not read the kube-system namespace gets the API server's
// error.
func RunningControllers(ctx context.Context, c client.Reader) ([]string, error) {
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, ns); err != nil {
		return nil, fmt.Errorf("reading the running controllers: %w", err)
	}
	v := ns.Annotations[controllersAnnotation]
	if v == "" {
		return nil, nil
	}
	return strings.Split(v, ","), nil
}
