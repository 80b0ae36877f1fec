package trust

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/children"
	"github.com/bosunkit/bosun/conditions"
	trustv1alpha1 "github.com/bosunkit/bosun/examples/trust/api/v1alpha1"
	"github.com/bosunkit/bosun/watch"
)

// What the controller uses: Bundles and their status; update on their
// finalizers, which the API server asks of whoever sets blockOwnerDeletion
// on an owner reference to a Bundle, as the children step does; the
// target ConfigMaps, applied and pruned in every namespace; the source
// ConfigMaps, read; Namespaces, for the targets and the engine's reconcile
// policy; and events. The source Secrets are read in the trust namespace
// only, through a Role there (cert-manager in config/rbac, as in
// trust-manager's chart); the Secret targets need the ClusterRole of
// config/rbac/secret-targets.
//
// +kubebuilder:rbac:groups=trust.cert-manager.io,resources=bundles,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=trust.cert-manager.io,resources=bundles/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=trust.cert-manager.io,resources=bundles/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",namespace=cert-manager,resources=secrets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// ControllerName is the name of the Bundle controller in logs, metrics and
// events, of its children set and the field manager of its applies.
const ControllerName = "trust"

// Reasons of the Synced condition, and of the events that go with it:
// trust-manager's.
const (
	// ReasonSynced is the reason of a True Synced: every target holds the
	// bundle.
	ReasonSynced conditions.Reason = "Synced"
	// ReasonSourceNotFound means a source is missing (an object, a key,
	// the default CA package) or the sources hold no certificate. The
	// Bundle waits for it, without retrying on its own.
	ReasonSourceNotFound conditions.Reason = "SourceNotFound"
	// ReasonSourceBuildError means a source holds data that is not a
	// bundle of valid certificates.
	ReasonSourceBuildError conditions.Reason = "SourceBuildError"
	// ReasonSecretTargetsDisabled means the Bundle has a Secret target and
	// the operator runs without --secret-targets-enabled.
	ReasonSecretTargetsDisabled conditions.Reason = "SecretTargetsDisabled"
	// ReasonSyncConfigMapTargetFailed means writing a target ConfigMap
	// failed.
	ReasonSyncConfigMapTargetFailed conditions.Reason = "SyncConfigMapTargetFailed"
	// ReasonSyncSecretTargetFailed means writing a target Secret failed.
	ReasonSyncSecretTargetFailed conditions.Reason = "SyncSecretTargetFailed"
)

// Options configure the Bundle controller, as trust-manager's flags of
// the same names do.
type Options struct {
	// TrustNamespace is the namespace of the source ConfigMaps and
	// Secrets (--trust-namespace).
	TrustNamespace string
	// SecretTargetsEnabled allows Secret targets
	// (--secret-targets-enabled); without it, a Bundle with a Secret
	// target is not synced (SecretTargetsDisabled). The operator then
	// writes, watches and prunes Secrets in every namespace.
	SecretTargetsEnabled bool
	// FilterExpiredCertificates leaves expired certificates out of the
	// bundles (--filter-expired-certificates).
	FilterExpiredCertificates bool
	// FilterNonCACerts leaves certificates that are not CAs out of the
	// bundles (--filter-non-ca-certs).
	FilterNonCACerts bool
	// TargetNamespaces, when not empty, are the only namespaces targets
	// are written to (--target-namespaces).
	TargetNamespaces []string
	// DefaultPackage is the default CA package, for the useDefaultCAs
	// sources (--default-package-location); nil when there is none.
	DefaultPackage *DefaultPackage
}

// bundleKey hands the bundle the sources made from the sources step to
// the targets' step.
var bundleKey = bosun.NewKey[*bundleData]("trust.bundle")

// NewReconciler returns the engine reconciler of Bundles: the sources
// step builds the bundle, the targets step writes it into a ConfigMap
// and/or a Secret in each selected namespace and prunes the ones no longer
// selected, and both report the Synced condition, which Ready summarises.
// The targets are owned by the Bundle and go with it through the garbage
// collector.
func NewReconciler(opts Options) *bosun.Reconciler[*trustv1alpha1.Bundle] {
	// The targets are cached as metadata only: the controller writes
	// their bundle but never reads it back (children.Kind.MetadataOnly).
	kinds := []children.Kind{{Object: &corev1.ConfigMap{}, MetadataOnly: true}}
	if opts.SecretTargetsEnabled {
		kinds = append(kinds, children.Kind{Object: &corev1.Secret{}, MetadataOnly: true})
	}
	// A target of the Bundle's name made by someone else is taken over, as
	// trust-manager applies over it: its other keys stay. Refused, it
	// would hold back the targets of every other namespace.
	targets := children.NewStep(ControllerName, desired(opts), kinds, children.WithAdoption())
	steps := bosun.Sequence[*trustv1alpha1.Bundle](&sourcesStep{opts: opts}, targetsStep{opts: opts, children: targets}).Named("sync")
	return &bosun.Reconciler[*trustv1alpha1.Bundle]{
		Name:  ControllerName,
		Steps: []bosun.Step[*trustv1alpha1.Bundle]{bosun.WithConditions[*trustv1alpha1.Bundle](steps, trustv1alpha1.ConditionSynced).Named("synced")},
	}
}

// SetupWithManager registers NewReconciler's reconciler with mgr. The
// manager's scheme must hold the types of AddToScheme; its cache should
// be narrowed by CacheOptions.
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	if err := bosun.ControllerManagedBy[*trustv1alpha1.Bundle](mgr).Complete(NewReconciler(opts)); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	return nil
}

// sourcesStep builds the Bundle's bundle from its sources, for the
// targets step. A missing source sets Synced False (SourceNotFound) and
// stops the pass until a watch event brings the source; invalid data sets
// it False (SourceBuildError) and fails the pass, retried with backoff.
//
// The sources are read from a cache of their own, of the trust namespace
// only (SetupWithBuilder): the manager's cache keeps the targets, as
// metadata only, and controller-runtime configures a kind's whole and
// metadata informers alike, so the sources' ConfigMaps and Secrets, read
// whole, cannot share it without every target being cached whole too.
type sourcesStep struct {
	opts Options
	// cache holds the ConfigMaps and Secrets of the trust namespace; nil
	// until SetupWithBuilder, when the pass's client reads them.
	cache cache.Cache
}

var (
	_ bosun.Step[*trustv1alpha1.Bundle]    = (*sourcesStep)(nil)
	_ bosun.Setuper[*trustv1alpha1.Bundle] = (*sourcesStep)(nil)
)

// PolicyRules declares what the step reads beyond the engine's and the
// children step's, in every namespace: the source ConfigMaps and the
// Namespaces it watches (see bosun.Reconciler.PolicyRules). The source
// Secrets are read in the trust namespace only, which cluster-wide rules
// cannot say: a Role grants them (config/rbac).
func (*sourcesStep) PolicyRules(*runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	read := []string{"get", "list", "watch"}
	return []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps", "namespaces"}, Verbs: read}}, nil
}

// Do builds the bundle.
func (s *sourcesStep) Do(ctx context.Context, req *bosun.Pass[*trustv1alpha1.Bundle]) (ctrl.Result, error) {
	b := req.Object
	if b.Spec.Target.Secret != nil && !s.opts.SecretTargetsEnabled {
		notSynced(req, ReasonSecretTargetsDisabled, "Bundle has Secret targets but the feature is disabled")
		return ctrl.Result{}, fmt.Errorf("secret targets: %w", bosun.ErrStop)
	}
	var sources client.Reader = req.Client
	if s.cache != nil {
		sources = s.cache
	}
	data, err := buildBundle(ctx, sources, s.opts, b.Spec.Sources)
	switch {
	case errors.Is(err, errSourceNotFound):
		notSynced(req, ReasonSourceNotFound, sentence(err))
		// Only ErrStop is wrapped: with another error beside it, the pass
		// would count as failed and be retried with backoff.
		return ctrl.Result{}, fmt.Errorf("%s: %w", err.Error(), bosun.ErrStop)
	case err != nil:
		notSynced(req, ReasonSourceBuildError, "Failed to build bundle sources: "+err.Error())
		return ctrl.Result{}, conditions.Warning(ReasonSourceBuildError, err)
	}
	bundleKey.Set(req.Values, data)
	return ctrl.Result{}, nil
}

// SetupWithBuilder starts the cache of the trust namespace's ConfigMaps
// and Secrets with the manager, makes each of them reconcile the Bundles
// it may be a source of, and a Namespace that comes, or whose labels
// change, reconcile the Bundles that select it.
func (s *sourcesStep) SetupWithBuilder(b *bosun.Builder[*trustv1alpha1.Bundle]) error {
	mgr := b.Manager()
	sc, err := cache.New(mgr.GetConfig(), cache.Options{
		HTTPClient:        mgr.GetHTTPClient(),
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{s.opts.TrustNamespace: {}},
	})
	if err != nil {
		return fmt.Errorf("the cache of the sources: %w", err)
	}
	if err := mgr.Add(sourcesCache{sc}); err != nil {
		return fmt.Errorf("the cache of the sources: %w", err)
	}
	// The informers are made now, so that the cache starts them on every
	// replica, not once the controller starts on the leader.
	for _, obj := range []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}} {
		if _, err := sc.GetInformer(context.Background(), obj, cache.BlockUntilSynced(false)); err != nil {
			return fmt.Errorf("the cache of the sources: %w", err)
		}
	}
	s.cache = sc
	c := mgr.GetClient()
	b.WatchesRawSource(source.Kind[client.Object](sc, &corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(bundlesOfSource(c, true))))
	b.WatchesRawSource(source.Kind[client.Object](sc, &corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(bundlesOfSource(c, false))))
	// A Namespace that comes, changes its labels or starts its deletion
	// wakes the Bundles that select it, before or after the change.
	// Namespaces are cached as metadata only, as the engine's reconcile
	// policy reads them: their labels are all a target needs.
	b.WatchesMetadata(&corev1.Namespace{}, watch.BySelector(c, &trustv1alpha1.BundleList{}, namespaceSelector), builder.WithPredicates(namespaceChanged))
	return nil
}

// sourcesCache runs the cache of the sources on every replica, leader or
// not, as the manager runs its own: a new leader finds it synced.
type sourcesCache struct{ cache.Cache }

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (sourcesCache) NeedLeaderElection() bool { return false }

// namespaceChanged passes the Namespace events that can change where
// targets go: a new namespace, a change of labels, the start of its
// deletion.
var namespaceChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !maps.Equal(e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()) ||
			e.ObjectOld.GetDeletionTimestamp().IsZero() != e.ObjectNew.GetDeletionTimestamp().IsZero()
	},
	DeleteFunc: func(event.DeleteEvent) bool { return false },
}

// bundlesOfSource maps a ConfigMap (configMap) or Secret of the trust
// namespace to the Bundles with a source that names or selects it.
func bundlesOfSource(c client.Reader, configMap bool) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		list := &trustv1alpha1.BundleList{}
		if err := c.List(ctx, list); err != nil {
			return nil
		}
		var reqs []reconcile.Request
		for _, b := range list.Items {
			for _, src := range b.Spec.Sources {
				sel := src.Secret
				if configMap {
					sel = src.ConfigMap
				}
				if sel != nil && selects(sel, o) {
					reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Name: b.Name}})
					break
				}
			}
		}
		return reqs
	}
}

// selects reports whether sel names o or selects it by its labels.
func selects(sel *trustv1alpha1.SourceObjectKeySelector, o client.Object) bool {
	if sel.Name != "" {
		return sel.Name == o.GetName()
	}
	s, err := metav1.LabelSelectorAsSelector(sel.Selector)
	return err == nil && s.Matches(labels.Set(o.GetLabels()))
}

// namespaceSelector returns the selector of the namespaces a Bundle's
// targets go to: every namespace when it has none.
func namespaceSelector(b *trustv1alpha1.Bundle) (labels.Selector, error) {
	if b.Spec.Target.NamespaceSelector == nil {
		return labels.Everything(), nil
	}
	return metav1.LabelSelectorAsSelector(b.Spec.Target.NamespaceSelector)
}

// targetsStep runs the children step that writes the targets, and sets
// Synced from how it went.
type targetsStep struct {
	opts     Options
	children *children.Step[*trustv1alpha1.Bundle]
}

var (
	_ bosun.Step[*trustv1alpha1.Bundle]    = targetsStep{}
	_ bosun.Setuper[*trustv1alpha1.Bundle] = targetsStep{}
)

// Do writes the targets; once they all hold the bundle, Synced is True,
// with an event when it was not, and status.defaultCAVersion names the
// default CA package in the bundle.
func (s targetsStep) Do(ctx context.Context, req *bosun.Pass[*trustv1alpha1.Bundle]) (ctrl.Result, error) {
	res, err := req.Run(ctx, s.children)
	if err != nil {
		reason, kind := ReasonSyncConfigMapTargetFailed, "ConfigMap"
		if req.Object.Spec.Target.ConfigMap == nil {
			reason, kind = ReasonSyncSecretTargetFailed, "Secret"
		}
		notSynced(req, reason, "Failed to sync bundle to a target "+kind+": "+err.Error())
		return res, err
	}
	// A target the children step left for its next pass (an object
	// changed since the pass read it) is not synced yet.
	for i, kind := range []string{"ConfigMap", "Secret"} {
		c := conditions.Find(req.Object.Status.Conditions, kind+"Ready")
		if c != nil && c.Status == metav1.ConditionFalse && (i == 0 || s.opts.SecretTargetsEnabled) {
			notSynced(req, []conditions.Reason{ReasonSyncConfigMapTargetFailed, ReasonSyncSecretTargetFailed}[i], "Failed to sync bundle to a target "+kind+": "+c.Message)
			return res, nil
		}
	}
	if err := releaseTrustManager(ctx, req, s.opts.SecretTargetsEnabled); err != nil {
		notSynced(req, ReasonSyncConfigMapTargetFailed, "Failed to sync bundle to a target: "+err.Error())
		return res, err
	}
	data, _ := bundleKey.Get(req.Values)
	b := req.Object
	if data != nil {
		b.Status.DefaultCAPackageVersion = data.defaultCAVersion
	}
	msg := syncedMessage(b.Spec.Target.NamespaceSelector, len(s.opts.TargetNamespaces) > 0)
	before := conditions.Find(b.Status.Conditions, trustv1alpha1.ConditionSynced)
	wasSynced := before != nil && before.Status == metav1.ConditionTrue && before.ObservedGeneration == b.Generation
	setSynced(req, metav1.ConditionTrue, ReasonSynced, msg)
	if !wasSynced {
		req.Recorder.Eventf(b, nil, corev1.EventTypeNormal, string(ReasonSynced), "Synced", msg)
	}
	return res, nil
}

// PolicyRules declares the children step's rules on the targets.
func (s targetsStep) PolicyRules(scheme *runtime.Scheme) ([]rbacv1.PolicyRule, error) {
	return s.children.PolicyRules(scheme)
}

// syncedMessage is the message of a True Synced, trust-manager's: where
// the targets are, by the namespace selector and whether
// --target-namespaces narrows them.
func syncedMessage(sel *metav1.LabelSelector, allowed bool) string {
	where := "all namespaces"
	if allowed {
		where = "all allowed namespaces"
	}
	if sel != nil {
		if s, err := metav1.LabelSelectorAsSelector(sel); err == nil && !s.Empty() {
			where = "namespaces that match this label selector: " + s.String()
			if allowed {
				where = "allowed " + where
			}
		}
	}
	return "Successfully synced Bundle to " + where
}

// sentence is err's text with its first letter in upper case.
func sentence(err error) string {
	msg := err.Error()
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// SetupWithBuilder wires the children step's watches.
func (s targetsStep) SetupWithBuilder(b *bosun.Builder[*trustv1alpha1.Bundle]) error {
	return s.children.SetupWithBuilder(b)
}

// desired returns the targets of the Bundle of a pass: a ConfigMap and/or
// a Secret named after it in each selected namespace that is not being
// deleted, holding the bundle under the target's key and the additional
// formats under theirs, with the template's labels and annotations, the
// label trust.cert-manager.io/bundle and the hash annotation.
func desired(opts Options) children.DesiredFunc[*trustv1alpha1.Bundle] {
	return func(ctx context.Context, req *bosun.Pass[*trustv1alpha1.Bundle]) ([]client.Object, error) {
		b := req.Object
		data, ok := bundleKey.Get(req.Values)
		if !ok {
			// Without a bundle, no target may be pruned: the sources step
			// stops the pass before this one unless it made one.
			return nil, errors.New("no bundle from the sources step")
		}
		cm, secret := b.Spec.Target.ConfigMap, b.Spec.Target.Secret
		if !opts.SecretTargetsEnabled {
			secret = nil
		}
		if cm == nil && secret == nil {
			return nil, nil
		}
		namespaces, err := targetNamespaces(ctx, req.Client, opts, b)
		if err != nil {
			return nil, err
		}
		binary, err := formats(data, b.Spec.Target.AdditionalFormats)
		if err != nil {
			return nil, err
		}
		out := make([]client.Object, 0, 2*len(namespaces))
		if cm != nil {
			meta := targetMeta(b, data, cm)
			for _, ns := range namespaces {
				out = append(out, &corev1.ConfigMap{
					ObjectMeta: meta(ns),
					Data:       map[string]string{cm.Key: data.pem},
					BinaryData: binary,
				})
			}
		}
		if secret != nil {
			// A Secret keeps the formats beside the bundle, in its data.
			values := map[string][]byte{}
			maps.Copy(values, binary)
			values[secret.Key] = []byte(data.pem)
			meta := targetMeta(b, data, secret)
			for _, ns := range namespaces {
				out = append(out, &corev1.Secret{ObjectMeta: meta(ns), Data: values})
			}
		}
		return out, nil
	}
}

// targetMeta returns the metadata of the targets of tmpl in a namespace:
// the Bundle's name, the template's labels and annotations, the label
// trust.cert-manager.io/bundle and the hash annotation.
func targetMeta(b *trustv1alpha1.Bundle, data *bundleData, tmpl *trustv1alpha1.TargetTemplate) func(namespace string) metav1.ObjectMeta {
	lbls, ann := map[string]string{}, map[string]string{}
	maps.Copy(lbls, tmpl.Metadata.Labels)
	maps.Copy(ann, tmpl.Metadata.Annotations)
	lbls[trustv1alpha1.LabelBundle] = b.Name
	ann[trustv1alpha1.AnnotationHash] = targetHash(data.pem, b.Spec.Target.AdditionalFormats, tmpl)
	return func(namespace string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: namespace, Name: b.Name, Labels: lbls, Annotations: ann}
	}
}

// targetNamespaces lists the namespaces the targets of b go to: those its
// selector selects, among opts.TargetNamespaces when it is not
// empty, and not being deleted; in name order.
func targetNamespaces(ctx context.Context, c client.Reader, opts Options, b *trustv1alpha1.Bundle) ([]string, error) {
	selector, err := namespaceSelector(b)
	if err != nil {
		return nil, conditions.Terminal(children.ReasonInvalidChildren, fmt.Errorf("the namespace selector: %w", err))
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("NamespaceList"))
	if err := c.List(ctx, list, client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, fmt.Errorf("listing namespaces: %w", err)
	}
	var out []string
	for _, ns := range list.Items {
		// A namespace is Terminating once its deletion has begun.
		if !ns.DeletionTimestamp.IsZero() {
			continue
		}
		if len(opts.TargetNamespaces) > 0 && !slices.Contains(opts.TargetNamespaces, ns.Name) {
			continue
		}
		out = append(out, ns.Name)
	}
	slices.Sort(out)
	return out, nil
}

// formats encodes the bundle in the additional formats, by key.
func formats(data *bundleData, f *trustv1alpha1.AdditionalFormats) (map[string][]byte, error) {
	if f == nil {
		return nil, nil
	}
	out := map[string][]byte{}
	certs := data.pool.certificates()
	if f.JKS != nil {
		b, err := encodeJKS(certs, f.JKS.Password)
		if err != nil {
			return nil, err
		}
		out[f.JKS.Key] = b
	}
	if f.PKCS12 != nil {
		b, err := encodePKCS12(certs, ptr.Deref(f.PKCS12.Password, trustv1alpha1.DefaultPKCS12Password), f.PKCS12.Profile)
		if err != nil {
			return nil, err
		}
		out[f.PKCS12.Key] = b
	}
	return out, nil
}

// targetHash is the value of a target's hash annotation: a SHA-256 of the
// bundle, of what the formats are encoded with, and of the template's
// annotations, so that it changes when any of them does.
func targetHash(pem string, f *trustv1alpha1.AdditionalFormats, tmpl *trustv1alpha1.TargetTemplate) string {
	h := sha256.New()
	h.Write([]byte(pem))
	if f != nil && f.JKS != nil {
		h.Write([]byte("jks\x00" + f.JKS.Key + "\x00" + f.JKS.Password + "\x00"))
	}
	if f != nil && f.PKCS12 != nil {
		h.Write([]byte("pkcs12\x00" + f.PKCS12.Key + "\x00" + ptr.Deref(f.PKCS12.Password, "") + "\x00" + string(f.PKCS12.Profile) + "\x00"))
	}
	for _, k := range slices.Sorted(maps.Keys(tmpl.Metadata.Annotations)) {
		h.Write([]byte(k + "\x00" + tmpl.Metadata.Annotations[k] + "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// notSynced sets Synced False with reason and message, and records a
// Warning event.
func notSynced(req *bosun.Pass[*trustv1alpha1.Bundle], reason conditions.Reason, msg string) {
	setSynced(req, metav1.ConditionFalse, reason, msg)
	req.Recorder.Eventf(req.Object, nil, corev1.EventTypeWarning, string(reason), "SyncFailed", msg)
}

// setSynced sets the Synced condition for the Bundle's generation.
func setSynced(req *bosun.Pass[*trustv1alpha1.Bundle], status metav1.ConditionStatus, reason conditions.Reason, msg string) {
	b := req.Object
	conditions.Set(&b.Status.Conditions, metav1.Condition{
		Type:               trustv1alpha1.ConditionSynced,
		Status:             status,
		Reason:             string(reason),
		Message:            msg,
		ObservedGeneration: b.Generation,
	}, metav1.Now())
}

// CacheOptions narrows the cache of an operator's manager to what the
// controller of opts reads through it: the targets (the members of the
// children set) as metadata only, in opts.TargetNamespaces when it is not
// empty, rather than every ConfigMap and Secret of the cluster. The
// sources are in a cache of their own (sourcesStep). A target is read from
// the API server before it is first written (children.CacheSetsOnly). It
// fits operator.Options.Manager.
func CacheOptions(opts Options) func(*ctrl.Options) {
	return func(o *ctrl.Options) {
		// In every namespace, whatever the cache's default namespaces.
		in := map[string]cache.Config{cache.AllNamespaces: {}}
		if len(opts.TargetNamespaces) > 0 {
			in = map[string]cache.Config{}
			for _, ns := range opts.TargetNamespaces {
				in[ns] = cache.Config{}
			}
		}
		if o.Cache.ByObject == nil {
			o.Cache.ByObject = map[client.Object]cache.ByObject{}
		}
		o.Cache.ByObject[&corev1.ConfigMap{}] = cache.ByObject{Namespaces: in}
		o.Cache.ByObject[&corev1.Secret{}] = cache.ByObject{Namespaces: in}
		children.CacheSetsOnly(&o.Cache, &corev1.ConfigMap{}, &corev1.Secret{})
	}
}
