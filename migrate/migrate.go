package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// ProgressAnnotation is the annotation on the CRD that records how far a
// migration got (see Progress).
const ProgressAnnotation = "migrate.bosun.dev/progress"

// Defaults of Options.
const (
	DefaultBatchSize = 100
	DefaultRateLimit = 50
	DefaultInterval  = time.Minute
	DefaultSettle    = 5 * time.Second
)

// Options configures a Migrator.
type Options struct {
	// CRD is the name of the CustomResourceDefinition, <plural>.<group>.
	// Required.
	CRD string
	// BatchSize is how many objects one page lists. Zero means
	// DefaultBatchSize.
	BatchSize int64
	// RateLimit is how many objects are written per second at most. Zero
	// means DefaultRateLimit.
	RateLimit float64
	// Interval is how often Start checks the CRD again after a migration.
	// Zero means DefaultInterval.
	Interval time.Duration
	// Settle is how long a migration waits, once it sees a storage
	// version to migrate to, before its first rewrite: the API server
	// takes a new storage version up only when its own watch of CRDs
	// brings the change to its handler of custom resources, and until
	// then an unchanged update is encoded at the old version and written
	// nowhere, which the migration could not tell from an object already
	// stored at the new one. A migration resumed from its progress record
	// does not wait again. Zero means DefaultSettle.
	Settle time.Duration
	// Metrics is where the metrics are registered. Nil means
	// controller-runtime's metrics.Registry.
	Metrics prometheus.Registerer
	// Logger is used when the context carries none. The zero value means
	// the logger of the context (log.FromContext).
	Logger logr.Logger
}

// Progress is the record kept in ProgressAnnotation.
type Progress struct {
	// Target is the storage version the migration writes objects at.
	Target string `json:"target"`
	// Continue is the continue token of the next page to migrate.
	Continue string `json:"continue,omitempty"`
	// Generation is the CRD's metadata.generation when the migration
	// started. A record of another generation is not resumed: the CRD's
	// spec changed since, the storage version maybe back and forth, and
	// the pages already migrated may hold objects written meanwhile at
	// another version.
	Generation int64 `json:"generation,omitempty"`
}

// Migrator migrates the stored objects of one CRD to its storage version.
// It is a manager.Runnable that runs on the leader only.
type Migrator struct {
	c       client.Client
	opts    Options
	limiter *rate.Limiter
	m       crdMetrics
}

var (
	_ manager.Runnable               = (*Migrator)(nil)
	_ manager.LeaderElectionRunnable = (*Migrator)(nil)
)

// New returns a Migrator for opts.CRD that uses c, which should read from
// the API server rather than a cache. It fails when c is nil, opts.CRD is
// empty or a size or rate is negative.
func New(c client.Client, opts Options) (*Migrator, error) {
	if c == nil {
		return nil, errors.New("migrate: client is nil")
	}
	if opts.CRD == "" {
		return nil, errors.New("migrate: Options.CRD is empty")
	}
	if opts.BatchSize < 0 || opts.RateLimit < 0 || opts.Interval < 0 || opts.Settle < 0 {
		return nil, fmt.Errorf("migrate %s: BatchSize, RateLimit, Interval and Settle must not be negative", opts.CRD)
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.RateLimit == 0 {
		opts.RateLimit = DefaultRateLimit
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Settle == 0 {
		opts.Settle = DefaultSettle
	}
	m, err := metricsFor(opts.Metrics, opts.CRD)
	if err != nil {
		return nil, fmt.Errorf("migrate %s: %w", opts.CRD, err)
	}
	return &Migrator{
		c:       c,
		opts:    opts,
		limiter: rate.NewLimiter(rate.Limit(opts.RateLimit), 1),
		m:       m,
	}, nil
}

// PolicyRules returns the RBAC rules the migration needs: get and patch
// of its CRD and patch of the CRD's status, by name, and get, list and
// update of the CRD's objects. An operator's --role collects them (see
// package operator).
func (m *Migrator) PolicyRules(*runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	plural, group, ok := strings.Cut(m.opts.CRD, ".")
	if !ok {
		return nil, fmt.Errorf("migrate %s: the CRD's name is not <plural>.<group>", m.opts.CRD)
	}
	crds, names := []string{apiextensionsv1.GroupName}, []string{m.opts.CRD}
	return []rbacv1.PolicyRule{
		{APIGroups: crds, Resources: []string{"customresourcedefinitions"}, ResourceNames: names, Verbs: []string{"get", "patch"}},
		{APIGroups: crds, Resources: []string{"customresourcedefinitions/status"}, ResourceNames: names, Verbs: []string{"patch"}},
		{APIGroups: []string{group}, Resources: []string{plural}, Verbs: []string{"get", "list", "update"}},
	}, nil
}

// NeedLeaderElection reports that only the leader migrates.
func (*Migrator) NeedLeaderElection() bool { return true }

// Start migrates once, then checks the CRD again every Options.Interval,
// until ctx ends. A failed migration is logged and tried again at the next
// check. It returns nil when ctx ends.
func (m *Migrator) Start(ctx context.Context) error {
	ctx = m.withLogger(ctx)
	logger := log.FromContext(ctx)
	t := time.NewTicker(m.opts.Interval)
	defer t.Stop()
	for {
		if err := m.Migrate(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "storage version migration failed", "crd", m.opts.CRD)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Migrate runs one migration to its end: when the CRD's
// status.storedVersions lists more than the storage version, it rewrites
// every object of the kind, resuming from ProgressAnnotation when that
// targets the same version, and then sets status.storedVersions to the
// storage version alone. It does nothing when there is nothing to migrate.
func (m *Migrator) Migrate(ctx context.Context) (err error) {
	ctx = m.withLogger(ctx)
	logger := log.FromContext(ctx).WithValues("crd", m.opts.CRD)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := m.c.Get(ctx, types.NamespacedName{Name: m.opts.CRD}, crd); err != nil {
		m.m.errors.Inc()
		return fmt.Errorf("migrate %s: getting the CRD: %w", m.opts.CRD, err)
	}
	storage, err := storageVersion(crd)
	if err != nil {
		m.m.errors.Inc()
		return fmt.Errorf("migrate %s: %w", m.opts.CRD, err)
	}
	if len(crd.Status.StoredVersions) == 1 && crd.Status.StoredVersions[0] == storage {
		return nil
	}
	m.m.running.Set(1)
	defer m.m.running.Set(0)
	defer func() {
		if err != nil {
			m.m.errors.Inc()
		}
	}()

	token := ""
	if p, ok := progressOf(crd); ok && p.Target == storage && p.Generation == crd.Generation {
		token = p.Continue
		logger.Info("resuming storage version migration", "target", storage)
	} else {
		logger.Info("starting storage version migration", "target", storage, "storedVersions", crd.Status.StoredVersions, "settle", m.opts.Settle)
		if crd, err = m.settle(ctx, crd); err != nil {
			return fmt.Errorf("migrate %s: %w", m.opts.CRD, err)
		}
	}
	gv := schema.GroupVersion{Group: crd.Spec.Group, Version: storage}
	listKind := crd.Spec.Names.ListKind
	if listKind == "" {
		listKind = crd.Spec.Names.Kind + "List"
	}
	migrated := 0
	for {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gv.WithKind(listKind))
		err := m.c.List(ctx, list, client.Limit(m.opts.BatchSize), client.Continue(token))
		if apierrors.IsResourceExpired(err) && token != "" {
			logger.Info("continue token expired, migrating from the beginning")
			token = ""
			continue
		}
		if err != nil {
			return fmt.Errorf("migrate %s: listing: %w", m.opts.CRD, err)
		}
		for i := range list.Items {
			if err := m.rewrite(ctx, &list.Items[i]); err != nil {
				return fmt.Errorf("migrate %s: %w", m.opts.CRD, err)
			}
			migrated++
		}
		token = list.GetContinue()
		if token == "" {
			break
		}
		if err := m.record(ctx, crd, &Progress{Target: storage, Continue: token, Generation: crd.Generation}); err != nil {
			return fmt.Errorf("migrate %s: recording progress: %w", m.opts.CRD, err)
		}
		logger.V(1).Info("migrated a page", "objects", migrated)
	}
	if err := m.finish(ctx, crd, storage, crd.Generation); err != nil {
		return fmt.Errorf("migrate %s: %w", m.opts.CRD, err)
	}
	logger.Info("storage version migration finished", "target", storage, "objects", migrated)
	return nil
}

// settle waits Options.Settle for the API server to take the storage
// version of crd up, and returns the CRD read again; it fails when the
// CRD's spec changed meanwhile, so that the migration starts over with
// the new one.
func (m *Migrator) settle(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	t := time.NewTimer(m.opts.Settle)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
	}
	cur := &apiextensionsv1.CustomResourceDefinition{}
	if err := m.c.Get(ctx, client.ObjectKeyFromObject(crd), cur); err != nil {
		return nil, fmt.Errorf("getting the CRD: %w", err)
	}
	if cur.Generation != crd.Generation {
		return nil, fmt.Errorf("the CRD's spec changed while the migration waited for the API server (generation %d, was %d)", cur.Generation, crd.Generation)
	}
	return cur, nil
}

// rewrite writes obj back unchanged, so the API server stores it at the
// storage version. A conflict gets the object again and retries; an object
// that is gone is skipped.
func (m *Migrator) rewrite(ctx context.Context, obj *unstructured.Unstructured) error {
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := m.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
		}
		first = false
		if err := m.limiter.Wait(ctx); err != nil {
			return err
		}
		return m.c.Update(ctx, obj)
	})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("rewriting %s: %w", klog.KObj(obj), err)
	}
	m.m.objects.Inc()
	return nil
}

// record writes p to the CRD's ProgressAnnotation.
func (m *Migrator) record(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, p *Progress) error {
	value := ""
	if p != nil {
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		value = string(b)
	}
	patch := map[string]any{"metadata": map[string]any{"annotations": map[string]any{ProgressAnnotation: nil}}}
	if p != nil {
		patch["metadata"].(map[string]any)["annotations"].(map[string]any)[ProgressAnnotation] = value
	}
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return m.c.Patch(ctx, crd, client.RawPatch(types.MergePatchType, b))
}

// finish sets the CRD's status.storedVersions to storage alone and removes
// the progress record. It fails, and the migration runs again from the
// beginning, when the CRD's spec changed since the migration started
// (generation): the storage version may have moved away and back, and
// objects written meanwhile be stored at another version. The status
// patch fails with a conflict when the CRD changed since finish read it.
func (m *Migrator) finish(ctx context.Context, crd *apiextensionsv1.CustomResourceDefinition, storage string, generation int64) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &apiextensionsv1.CustomResourceDefinition{}
		if err := m.c.Get(ctx, client.ObjectKeyFromObject(crd), cur); err != nil {
			return fmt.Errorf("getting the CRD: %w", err)
		}
		s, err := storageVersion(cur)
		if err != nil {
			return err
		}
		if s != storage {
			return fmt.Errorf("storage version changed from %s to %s during the migration", storage, s)
		}
		if cur.Generation != generation {
			return fmt.Errorf("the CRD's spec changed during the migration (generation %d, was %d)", cur.Generation, generation)
		}
		orig := cur.DeepCopy()
		cur.Status.StoredVersions = []string{storage}
		if err := m.c.Status().Patch(ctx, cur, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		if _, ok := cur.GetAnnotations()[ProgressAnnotation]; ok {
			if err := m.record(ctx, cur, nil); err != nil {
				return fmt.Errorf("removing the progress record: %w", err)
			}
		}
		return nil
	})
}

// withLogger puts Options.Logger into ctx when ctx has no logger of its own.
func (m *Migrator) withLogger(ctx context.Context) context.Context {
	if m.opts.Logger.GetSink() == nil {
		return ctx
	}
	if _, err := logr.FromContext(ctx); err == nil {
		return ctx
	}
	return logr.NewContext(ctx, m.opts.Logger)
}

// storageVersion returns the name of the version crd stores objects at.
func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) (string, error) {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name, nil
		}
	}
	return "", errors.New("the CRD has no storage version")
}

// progressOf returns the progress recorded on crd, if any is readable.
func progressOf(crd *apiextensionsv1.CustomResourceDefinition) (Progress, bool) {
	raw, ok := crd.GetAnnotations()[ProgressAnnotation]
	if !ok {
		return Progress{}, false
	}
	var p Progress
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return Progress{}, false
	}
	return p, true
}
