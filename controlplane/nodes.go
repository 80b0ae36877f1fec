package controlplane

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PodExitCodeLabel is the label that makes a pod on the simulated nodes of
// Options.Nodes fail: once it runs, its containers terminate with the
// label's value as their exit code and the pod's phase becomes Failed. Set
// it on the pod template of a Job to make the Job's pods fail:
//
//	job.Spec.Template.Labels = map[string]string{controlplane.PodExitCodeLabel: "1"}
const PodExitCodeLabel = "controlplane.bosun.dev/exit-code"

// nodeLabel marks the nodes that Start makes for kwok to run; kwok manages
// only nodes that carry it.
const nodeLabel = "controlplane.bosun.dev/simulated-by"

// podCIDR is the range kwok gives pods their addresses from: room for
// 65,534 pods. Nothing listens on them; they only fill in pod status.
const podCIDR = "10.244.0.0/16"

// kwokStages is the configuration of kwok: the stages through which it
// moves nodes and pods.
//
//go:embed kwokstages.yaml
var kwokStages string

// nodeName returns the name of the i-th simulated node.
func nodeName(i int) string { return "bosun-node-" + strconv.Itoa(i) }

// schedulerArgs returns the arguments of kube-scheduler, connecting with
// kubeconfig.
func schedulerArgs(kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0",
	}
}

// kwokArgs returns the arguments of kwok, connecting with kubeconfig and
// reading its stages from config.
func kwokArgs(kubeconfig, config string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--config=" + config,
		"--manage-all-nodes=false",
		"--manage-nodes-with-label-selector=" + nodeLabel + "=kwok",
		"--cidr=" + podCIDR,
		// No kubelet API: nothing reads logs or execs in simulated pods,
		// and a fixed port would clash between control planes.
		"--node-port=0",
	}
}

// startNodes makes the n simulated nodes and returns once kwok has made
// each Ready. It then takes off each the taint node.kubernetes.io/not-ready,
// which the API server puts on every new node: in a cluster the node
// lifecycle controller takes it off, but Start runs none, since nothing
// here would ever make a node unreachable.
func startNodes(ctx context.Context, c client.Client, n int, kwok *process) error {
	for i := range n {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: nodeName(i),
			Labels: map[string]string{
				nodeLabel:                "kwok",
				corev1.LabelHostname:     nodeName(i),
				corev1.LabelOSStable:     "linux",
				corev1.LabelArchStable:   "amd64",
				corev1.LabelTopologyZone: "zone-" + strconv.Itoa(i%3),
			},
		}}
		if err := c.Create(ctx, node); err != nil {
			return fmt.Errorf("creating simulated node %s: %w", node.Name, err)
		}
	}
	for i := range n {
		node := &corev1.Node{}
		key := client.ObjectKey{Name: nodeName(i)}
		err := pollProcess(ctx, kwok, func(ctx context.Context) (bool, error) {
			if err := c.Get(ctx, key, node); err != nil {
				return false, fmt.Errorf("reading simulated node %s: %w", key.Name, err)
			}
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("simulated node %s did not become Ready: %w", key.Name, err)
		}
		taints := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool {
			return t.Key == corev1.TaintNodeNotReady
		})
		if len(taints) == len(node.Spec.Taints) {
			continue
		}
		patch := client.MergeFrom(node.DeepCopy())
		node.Spec.Taints = taints
		if err := c.Patch(ctx, node, patch); err != nil {
			return fmt.Errorf("taking the taint %s off simulated node %s: %w", corev1.TaintNodeNotReady, key.Name, err)
		}
	}
	return nil
}

// waitPodsRun returns once a probe pod has been scheduled onto a simulated
// node and become Ready, which takes kube-scheduler and kwok both working,
// and deletes the probe. It fails if scheduler or kwok exits first or ctx
// ends.
func waitPodsRun(ctx context.Context, c client.Client, scheduler, kwok *process) error {
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, GenerateName: "bosun-node-probe-"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe"}}},
	}
	if err := c.Create(ctx, probe); err != nil {
		return fmt.Errorf("creating the probe pod: %w", err)
	}
	key := client.ObjectKeyFromObject(probe)
	ready := func(ctx context.Context) (bool, error) {
		if err := scheduler.exitErr(); err != nil {
			return false, err
		}
		pod := &corev1.Pod{}
		if err := c.Get(ctx, key, pod); err != nil {
			return false, fmt.Errorf("reading the probe pod: %w", err)
		}
		for _, cond := range pod.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	}
	if err := pollProcess(ctx, kwok, ready); err != nil {
		return fmt.Errorf("the probe pod %s did not become Ready on a simulated node: %w", key, err)
	}
	if err := c.Delete(ctx, probe); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the probe pod: %w", err)
	}
	return nil
}
