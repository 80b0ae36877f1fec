package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Names of the kube-controller-manager controllers that Start runs when
// Options.ControllerManager is set.
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

// controllerManagerControllers are the controllers Start runs.
var controllerManagerControllers = []string{GarbageCollectorController, NamespaceController}

// probePollInterval is how often Start looks whether the garbage collector
// has deleted its probe.
const probePollInterval = 100 * time.Millisecond

// controllerManager is a running kube-controller-manager.
type controllerManager struct {
	cmd *exec.Cmd
	// dir is the temporary directory holding its kubeconfig.
	dir string
	log *outputLog
	// exited is closed once the process has exited; waitErr then says
	// how.
	exited  chan struct{}
	waitErr error
	// stopTimeout bounds how long it may take to stop after being asked.
	stopTimeout time.Duration
}

// controllerManagerHint tells what to do when kube-controller-manager does
// not start.
func controllerManagerHint(startTimeout time.Duration) string {
	return fmt.Sprintf("the output above usually says what went wrong; if it was only slow (a busy machine), "+
		"raise Options.StartTimeout (now %s); Options.Output receives all of it. "+
		"A %s in the directory %s names is used instead of the one built into the cache; "+
		"remove it to go back to the built one, or leave Options.ControllerManager unset to run none.",
		startTimeout, controllerManagerBinary, assetsEnv)
}

// waitReady returns once the garbage collector has deleted a probe: a
// ConfigMap in kube-system whose owner does not exist. The garbage collector
// deletes it only after it has found every resource and synced its caches,
// so it then works for every object of the control plane. waitReady fails
// if the process exits first or ctx ends.
func (m *controllerManager) waitReady(ctx context.Context, c client.Client) error {
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
	var failed error
	err := wait.PollUntilContextCancel(ctx, probePollInterval, false, func(ctx context.Context) (bool, error) {
		select {
		case <-m.exited:
			failed = fmt.Errorf("it exited before it was ready: %w", m.waitErr)
			return false, failed
		default:
		}
		err := c.Get(ctx, key, &corev1.ConfigMap{})
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil && ctx.Err() == nil:
			failed = fmt.Errorf("reading the garbage collector's probe: %w", err)
			return false, failed
		}
		return false, nil
	})
	switch {
	case failed != nil:
		return failed
	case err != nil:
		return fmt.Errorf("its garbage collector did not delete the probe ConfigMap %s, whose owner does not exist: %w", key, err)
	}
	return nil
}

// stop ends kube-controller-manager, politely first, and removes its
// directory. It returns an error if the process had ended on its own before.
func (m *controllerManager) stop() error {
	var crashed error
	select {
	case <-m.exited:
		crashed = fmt.Errorf("%s exited while the control plane was running: %w\n\nlast lines of its output:\n%s",
			controllerManagerBinary, m.waitErr, m.log.tail())
	default:
		_ = terminate(m.cmd.Process)
		select {
		case <-m.exited:
		case <-time.After(m.stopTimeout):
			_ = m.cmd.Process.Kill()
			<-m.exited
		}
	}
	if err := os.RemoveAll(m.dir); err != nil {
		return errors.Join(crashed, fmt.Errorf("removing the directory of %s: %w", controllerManagerBinary, err))
	}
	return crashed
}

// recordControllers writes controllersAnnotation on the kube-system
// namespace.
func recordControllers(ctx context.Context, c client.Client) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: metav1.NamespaceSystem}}
	patch := client.RawPatch(client.Merge.Type(), fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`,
		controllersAnnotation, strings.Join(controllerManagerControllers, ",")))
	if err := c.Patch(ctx, ns, patch); err != nil {
		return fmt.Errorf("recording the running controllers on namespace %s: %w", metav1.NamespaceSystem, err)
	}
	return nil
}

// RunningControllers returns the names of the kube-controller-manager
// controllers that run against the API server c reads from, as Start
// recorded them in controllersAnnotation (GarbageCollectorController and
// NamespaceController when Options.ControllerManager is set), or none. A
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
