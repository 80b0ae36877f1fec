package controlplane_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/controlplane"
)

// TestNodes runs the workload controllers and simulated nodes: a
// Deployment's pods are placed on the nodes and become Ready, a Job's pod
// succeeds, a pod labelled PodExitCodeLabel fails with that code, and
// deleting the Deployment takes its ReplicaSet and pods with it.
func TestNodes(t *testing.T) {
	cp, err := controlplane.Start(t.Context(), controlplane.Options{
		Progress:          os.Stderr,
		ControllerManager: true,
		Nodes:             2,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	c := cp.Client
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "nodes-test"}}
	if err := c.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}

	nodes := &corev1.NodeList{}
	if err := c.List(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 2 {
		t.Fatalf("%d nodes, want 2", len(nodes.Items))
	}

	labels := map[string]string{"app": "web"}
	podSpec := corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec},
		},
	}
	if err := c.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, func(ctx context.Context) error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(deploy), deploy); err != nil {
			return err
		}
		if deploy.Status.ReadyReplicas != 3 {
			return fmt.Errorf("Deployment has %d ready replicas, want 3", deploy.Status.ReadyReplicas)
		}
		return nil
	})
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(ns.Name), client.MatchingLabels(labels)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if !strings.HasPrefix(p.Spec.NodeName, "bosun-node-") || p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
			t.Errorf("pod %s: node %q, phase %s, IP %q; want a simulated node, Running, an IP", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.PodIP)
		}
	}

	job := func(name string, podLabels map[string]string) *batchv1.Job {
		spec := podSpec
		spec.RestartPolicy = corev1.RestartPolicyNever
		return &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name},
			Spec: batchv1.JobSpec{
				BackoffLimit: ptr.To[int32](0),
				Template:     corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels}, Spec: spec},
			},
		}
	}
	jobCondition := func(j *batchv1.Job, want batchv1.JobConditionType) func(context.Context) error {
		return func(ctx context.Context) error {
			if err := c.Get(ctx, client.ObjectKeyFromObject(j), j); err != nil {
				return err
			}
			for _, cond := range j.Status.Conditions {
				if cond.Type == want && cond.Status == corev1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("Job %s has conditions %v, want %s", j.Name, j.Status.Conditions, want)
		}
	}
	ok, bad := job("ok", nil), job("bad", map[string]string{controlplane.PodExitCodeLabel: "3"})
	for _, j := range []*batchv1.Job{ok, bad} {
		if err := c.Create(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, time.Minute, jobCondition(ok, batchv1.JobComplete))
	if ok.Status.Succeeded != 1 || ok.Status.CompletionTime == nil {
		t.Errorf("Job ok: succeeded %d, completion time %v; want 1 and a time", ok.Status.Succeeded, ok.Status.CompletionTime)
	}
	waitFor(t, time.Minute, jobCondition(bad, batchv1.JobFailed))
	badPods := &corev1.PodList{}
	if err := c.List(ctx, badPods, client.InNamespace(ns.Name), client.MatchingLabels{"job-name": "bad"}); err != nil {
		t.Fatal(err)
	}
	if len(badPods.Items) != 1 {
		t.Fatalf("Job bad has %d pods, want 1", len(badPods.Items))
	}
	if st := badPods.Items[0].Status; st.Phase != corev1.PodFailed || len(st.ContainerStatuses) != 1 ||
		st.ContainerStatuses[0].State.Terminated == nil || st.ContainerStatuses[0].State.Terminated.ExitCode != 3 {
		t.Errorf("Job bad's pod: phase %s, container statuses %+v; want Failed with exit code 3", st.Phase, st.ContainerStatuses)
	}

	if err := c.Delete(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, func(ctx context.Context) error {
		for _, list := range []client.ObjectList{&appsv1.ReplicaSetList{}, &corev1.PodList{}} {
			if err := c.List(ctx, list, client.InNamespace(ns.Name), client.MatchingLabels(labels)); err != nil {
				return err
			}
			if n := len(mustItems(list)); n > 0 {
				return fmt.Errorf("%d %T items left after deleting their Deployment", n, list)
			}
		}
		return nil
	})
}

// mustItems returns the items of a list of ReplicaSets or pods.
func mustItems(list client.ObjectList) []any {
	var out []any
	switch l := list.(type) {
	case *appsv1.ReplicaSetList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	case *corev1.PodList:
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
	}
	return out
}

// TestStartRejectsBadNodeOptions checks the options Start refuses before it
// builds or starts anything.
func TestStartRejectsBadNodeOptions(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts controlplane.Options
		want string
	}{
		{name: "negative nodes", opts: controlplane.Options{Nodes: -1}, want: "Options.Nodes is -1"},
		{name: "no garbage collector", opts: controlplane.Options{ControllerManager: true, Controllers: []string{"job-controller"}},
			want: "lacks garbage-collector-controller"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cp, err := controlplane.Start(t.Context(), tt.opts)
			if err == nil {
				_ = cp.Stop()
				t.Fatal("Start succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Start error = %v, want it to say %q", err, tt.want)
			}
		})
	}
}

// TestNodesStartFailure runs a kwok that exits at once, through
// KUBEBUILDER_ASSETS: Start fails, quoting its output and saying how to fix
// it.
func TestNodesStartFailure(t *testing.T) {
	assets := assetsWithFailing(t, controlplane.Options{Nodes: 1}, "kwok", "echo 'fake kwok: no stages' >&2\nexit 4")

	cp, err := controlplane.Start(t.Context(), controlplane.Options{Nodes: 1})
	if err == nil {
		_ = cp.Stop()
		t.Fatal("Start with a kwok that exits succeeded")
	}
	t.Logf("the error reads:\n%v", err)
	for _, want := range []string{
		"starting kwok " + filepath.Join(assets, "kwok"),
		"kwok exited before it was ready: exit status 4",
		"fake kwok: no stages",
		"how to fix",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
}
