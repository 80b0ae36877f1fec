package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/internal/rollout"
	"github.com/bosunkit/bosun/shard"
)

// canaryFlags are the flags every `bosun canary` command takes.
type canaryFlags struct {
	namespace, kubeconfig string
}

func (f *canaryFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "", "the namespace of the ring's Leases, the operator's (default: the kubeconfig context's, else default)")
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "the kubeconfig to use (default: $KUBECONFIG, else ~/.kube/config)")
}

// client returns a client of the kubeconfig's cluster and the namespace.
func (f *canaryFlags) client() (client.Client, string, error) {
	cfg, ns, err := explainKubeconfig(f.kubeconfig, f.namespace)
	if err != nil {
		return nil, "", err
	}
	cfg.WarningHandler = rest.NoWarnings{}
	scheme := runtime.NewScheme()
	if err := coordinationv1.AddToScheme(scheme); err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, "", fmt.Errorf("connecting to the cluster: %w", err)
	}
	return c, ns, nil
}

func newCanaryCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "canary",
		Short: "Roll a new version of a sharded operator out to a share of its objects",
		Long: `Runs a canary rollout in a shard ring (package shard): the replicas of the
new version, whose shard.Options.Version names it, take a chosen share of
the ring's objects, by percent or by label selector, while the replicas of
the current version keep the rest. Objects move one at a time, each through
a drain, so that no object is ever reconciled by two versions at once.

Write the canary before the new version's replicas start (without one they
take an even share like any member), compare the versions with status
(passes, errors, mean pass time, from the members' Leases; the metrics
bosun_shard_passes_total and bosun_shard_pass_duration_seconds carry the
same by version), then promote the canary to every object or abort, which
hands all of them back. Once every replica runs the new version, end removes
the rollout.`,
		Example: `  bosun canary set widgets --version v1.5.0 --percent 10 -n widgets-system
  bosun canary set widgets --version v1.5.0 --selector tier=test -n widgets-system
  bosun canary status widgets -n widgets-system
  bosun canary promote widgets -n widgets-system
  bosun canary abort widgets -n widgets-system
  bosun canary end widgets -n widgets-system`,
	}
	cmd.AddCommand(canarySetCommand(), canaryPromoteCommand(), canaryAbortCommand(), canaryEndCommand(), canaryStatusCommand())
	return cmd
}

func canarySetCommand() *cobra.Command {
	var f canaryFlags
	var c shard.Canary
	cmd := &cobra.Command{
		Use:   "set RING --version VERSION [--percent P] [--selector SELECTOR]",
		Short: "Start a canary, or change its share",
		Long: `Records the canary of the ring: the members of VERSION take PERCENT of the
objects (chosen by a hash of each object's ring key, so that raising the
percent only adds objects) and the objects SELECTOR matches.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if c.Version == "" {
				return errors.New("--version is required")
			}
			return writeCanary(cmd, f, args[0], c, nil)
		},
	}
	f.bind(cmd)
	cmd.Flags().StringVar(&c.Version, "version", "", "the new version: the shard.Options.Version of its replicas")
	cmd.Flags().IntVar(&c.Percent, "percent", 0, "the share of the objects, 0 to 100, that the new version takes")
	cmd.Flags().StringVar(&c.Selector, "selector", "", "a label selector of objects that the new version takes as well")
	return cmd
}

func canaryPromoteCommand() *cobra.Command {
	return canaryShareCommand("promote RING", "Give the canary's version every object of the ring", "", 100)
}

func canaryAbortCommand() *cobra.Command {
	return canaryShareCommand("abort RING", "Hand every object of the canary back to the current version",
		`Keeps the canary's version recorded with a share of none, so that its
replicas, while they run, take no object; remove them, then end the rollout.`, 0)
}

// canaryShareCommand returns a command that gives the canary in force
// percent of the objects and no selector.
func canaryShareCommand(use, short, long string, percent int) *cobra.Command {
	var f canaryFlags
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return writeCanary(cmd, f, args[0], shard.Canary{}, func(c *shard.Canary) { c.Percent, c.Selector = percent, "" })
		},
	}
	f.bind(cmd)
	return cmd
}

func canaryEndCommand() *cobra.Command {
	var f canaryFlags
	cmd := &cobra.Command{
		Use:   "end RING",
		Short: "Remove the rollout: every member takes an even share again",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := f.client()
			if err != nil {
				return err
			}
			if err := (shard.Canary{}).Write(cmd.Context(), c, ns, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ring %s: no canary; every member takes an even share\n", args[0])
			return nil
		},
	}
	f.bind(cmd)
	return cmd
}

func canaryStatusCommand() *cobra.Command {
	var f canaryFlags
	cmd := &cobra.Command{
		Use:   "status RING",
		Short: "Compare the versions of a ring: members, passes, errors, mean pass time",
		Long: `Prints the canary in force and, for each version of the ring's live members,
the passes its members ran since they started, how many failed and their
mean duration, as each member publishes them on its Lease at every renewal.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := f.client()
			if err != nil {
				return err
			}
			sum, err := readRing(cmd.Context(), c, ns, args[0])
			if err != nil {
				return err
			}
			return writeRing(cmd.OutOrStdout(), args[0], sum)
		},
	}
	f.bind(cmd)
	return cmd
}

// writeCanary writes the canary of ring: set when the command gives one
// (a Version), else the canary in force changed by change.
func writeCanary(cmd *cobra.Command, f canaryFlags, ring string, set shard.Canary, change func(*shard.Canary)) error {
	c, ns, err := f.client()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if set.Version == "" {
		sum, err := readRing(ctx, c, ns, ring)
		if err != nil {
			return err
		}
		if sum.Canary == nil {
			return fmt.Errorf("ring %s in namespace %s has no canary; start one with bosun canary set", ring, ns)
		}
		set = shard.Canary(*sum.Canary)
		change(&set)
	}
	if err := set.Write(ctx, c, ns, ring); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "ring %s: canary %s takes %s\n", ring, set.Version, share(rollout.Spec(set)))
	return nil
}

// readRing reads the Leases of ring in ns.
func readRing(ctx context.Context, c client.Client, ns, ring string) (rollout.Summary, error) {
	ctx, cancel := context.WithTimeout(ctx, explainTimeout)
	defer cancel()
	var leases coordinationv1.LeaseList
	if err := c.List(ctx, &leases, client.InNamespace(ns), client.MatchingLabels{rollout.LabelRing: ring}); err != nil {
		return rollout.Summary{}, fmt.Errorf("reading the leases of ring %s in namespace %s: %w", ring, ns, err)
	}
	return rollout.Summarize(ring, leases.Items, time.Now()), nil
}

// share says which objects a canary takes.
func share(s rollout.Spec) string {
	out := fmt.Sprintf("%d%% of the objects", s.Percent)
	if s.Selector != "" {
		out += " and those matching " + s.Selector
	}
	return out
}

// writeRing prints the summary of ring.
func writeRing(w io.Writer, ring string, sum rollout.Summary) error {
	switch {
	case sum.Canary != nil:
		fmt.Fprintf(w, "ring %s: canary %s takes %s\n", ring, sum.Canary.Version, share(*sum.Canary))
	default:
		fmt.Fprintf(w, "ring %s: no canary; every member takes an even share\n", ring)
	}
	if sum.Invalid != nil {
		fmt.Fprintf(w, "the canary record cannot be used, the sharder keeps the rollout it had: %v\n", sum.Invalid)
	}
	if len(sum.Versions) == 0 {
		fmt.Fprintln(w, "no live members")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tMEMBERS\tPASSES\tERRORS\tERROR RATE\tMEAN PASS")
	for _, v := range sum.Versions {
		name := v.Version
		if name == "" {
			name = "(none)"
		}
		rate, mean := "-", "-"
		if v.Passes > 0 {
			rate = fmt.Sprintf("%.1f%%", 100*float64(v.Errors)/float64(v.Passes))
			mean = (time.Duration(v.Seconds / float64(v.Passes) * float64(time.Second))).Round(time.Microsecond).String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\n", name, len(v.Members), v.Passes, v.Errors, rate, mean)
	}
	return tw.Flush()
}
