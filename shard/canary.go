package shard

import (
	"context"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/internal/rollout"
)

// Canary is the rollout of a new version of an operator in a ring (see
// Canaries in the package documentation): the live members whose
// Options.Version is Version take the objects it chooses, the other
// members the rest. The zero Canary is no rollout: every live member
// takes an even share.
type Canary struct {
	// Version is the canary's Options.Version.
	Version string
	// Percent of the objects, 0 to 100, go to the canary, chosen by a
	// hash of their ring key that does not depend on the members: raising
	// it only adds objects, and 100 promotes the canary to all of them.
	Percent int
	// Selector, a label selector, chooses objects by their labels as
	// well: the canary takes an object that either chooses. Empty
	// chooses none.
	Selector string
}

// Write records c as the rollout of ring, whose members keep their
// Leases in namespace; the sharder moves the objects, each through a
// drain, at its next look at the ring. The zero Canary deletes the
// record. The record is a Lease named ring.canary, labelled with the
// ring, whose annotations hold c: a Lease, so that the role that lets an
// operator keep its members' Leases lets it read the record.
func (c Canary) Write(ctx context.Context, cl client.Client, namespace, ring string) error {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: rollout.LeaseName(ring)}}
	if c == (Canary{}) {
		if err := cl.Delete(ctx, lease); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("shard: ring %q: deleting the canary: %w", ring, err)
		}
		return nil
	}
	spec := rollout.Spec(c)
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("shard: ring %q: %w: canary: %w", ring, ErrInvalidOptions, err)
	}
	err := cl.Get(ctx, client.ObjectKeyFromObject(lease), lease)
	switch {
	case apierrors.IsNotFound(err):
		lease.Labels = map[string]string{labelRing: ring}
		lease.Annotations = spec.Annotations()
		err = cl.Create(ctx, lease)
	case err == nil:
		if lease.Labels == nil {
			lease.Labels = map[string]string{}
		}
		lease.Labels[labelRing] = ring
		if lease.Annotations == nil {
			lease.Annotations = map[string]string{}
		}
		for k, v := range spec.Annotations() {
			lease.Annotations[k] = v
		}
		err = cl.Update(ctx, lease)
	}
	if err != nil {
		return fmt.Errorf("shard: ring %q: writing the canary: %w", ring, err)
	}
	return nil
}
