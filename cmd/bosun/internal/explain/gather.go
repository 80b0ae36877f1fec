package explain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/bosunkit/bosun"
)

// Errors of Gather, for errors.Is.
var (
	// ErrUnknownKind: the API server serves no resource of the kind asked.
	ErrUnknownKind = errors.New("the API server serves no resource type")
	// ErrNotFound: there is no object of that name.
	ErrNotFound = errors.New("not found")
)

// Options say how Gather reaches the cluster and the debug page.
type Options struct {
	// Config connects to the API server.
	Config *rest.Config
	// DebugURL is the address of the operator's metrics server, which
	// serves the debug page (https://localhost:8443 through a
	// port-forward, http://127.0.0.1:8080); empty means the page is not
	// read.
	DebugURL string
	// HTTPClient reads the debug page. Nil means a client of Gather's own:
	// it gives up after five seconds, sends Config's credentials (a bearer
	// token, as the metrics server's authentication wants) over https to
	// the page's host only, follows no redirect off that scheme and host,
	// and accepts an unverified certificate from a loopback address only,
	// where a port-forward ends and the metrics server's self-signed
	// certificate is met.
	HTTPClient *http.Client
}

// gatherer holds the clients of one Gather.
type gatherer struct {
	dyn       dynamic.Interface
	discovery discovery.CachedDiscoveryInterface
	report    *Report
}

// note records what could not be read.
func (g *gatherer) note(format string, args ...any) {
	g.report.Notes = append(g.report.Notes, fmt.Sprintf(format, args...))
}

// Gather reads the object of kind named name, in namespace for a
// namespaced kind, and what explains its state (see the package
// documentation). kind is as kubectl takes it: a kind, a plural, a short
// name, any of them followed by ".group" (or ".version.group"). An
// unknown kind and a missing object are errors wrapping ErrUnknownKind
// and ErrNotFound; what else cannot be read is a note of the Report.
func Gather(ctx context.Context, kind, name, namespace string, opts Options) (*Report, error) {
	if opts.Config == nil {
		return nil, errors.New("no API server configuration")
	}
	dc, err := discovery.NewDiscoveryClientForConfig(opts.Config)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)
	mapping, err := mappingFor(mapper, kind)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(opts.Config)
	if err != nil {
		return nil, err
	}
	resource := mapping.Resource.GroupResource().String()
	var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = dyn.Resource(mapping.Resource).Namespace(namespace)
	} else {
		namespace = ""
	}
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && namespace != "":
		return nil, fmt.Errorf("%s %q %w in namespace %q", resource, name, ErrNotFound, namespace)
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("%s %q %w", resource, name, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("reading %s %q: %w", resource, name, err)
	}

	r := &Report{Kind: mapping.GroupVersionKind.Kind, Resource: resource}
	r.fromObject(obj)
	g := &gatherer{dyn: dyn, discovery: cached, report: r}
	r.Policy = g.policy(ctx, obj)
	r.Children = g.children(ctx, obj)
	r.Events = g.events(ctx, obj)
	if opts.DebugURL != "" {
		key := types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
		r.Debug = readDebugPage(ctx, opts, mapping.GroupVersionKind.GroupKind(), key)
	}
	return r, nil
}

// mappingFor finds the resource that arg names, the way kubectl does: as
// a resource (plural, singular or short name, with an optional version
// and group), else as a kind.
func mappingFor(mapper meta.RESTMapper, arg string) (*meta.RESTMapping, error) {
	fullGVR, gr := schema.ParseResourceArg(arg)
	var gvk schema.GroupVersionKind
	if fullGVR != nil {
		gvk, _ = mapper.KindFor(*fullGVR)
	}
	if gvk.Empty() {
		gvk, _ = mapper.KindFor(gr.WithVersion(""))
	}
	if !gvk.Empty() {
		return mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	fullGVK, gk := schema.ParseKindArg(arg)
	if fullGVK != nil {
		if m, err := mapper.RESTMapping(fullGVK.GroupKind(), fullGVK.Version); err == nil {
			return m, nil
		}
	}
	m, err := mapper.RESTMapping(gk)
	switch {
	case meta.IsNoMatchError(err):
		return nil, fmt.Errorf("%w %q", ErrUnknownKind, arg)
	case err != nil:
		return nil, fmt.Errorf("looking up the kind %q: %w", arg, err)
	}
	return m, nil
}

var namespacesResource = corev1.SchemeGroupVersion.WithResource("namespaces")

// policy returns the reconcile policy in force, looked up as the engine
// does: the object's annotation, else its Namespace's, else the default.
func (g *gatherer) policy(ctx context.Context, obj *unstructured.Unstructured) Policy {
	ns := obj.GetNamespace()
	if v := obj.GetAnnotations()[bosun.AnnotationReconcilePolicy]; v != "" {
		return Policy{Value: v, Source: PolicyFromObject, Namespace: ns}
	}
	def := Policy{Value: string(bosun.PolicyManage), Source: PolicyFromDefault, Namespace: ns}
	if ns == "" {
		return def
	}
	nsObj, err := g.dyn.Resource(namespacesResource).Get(ctx, ns, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return def
	case err != nil:
		g.note("cannot read namespace %s, whose annotation may set the reconcile policy: %v", ns, err)
		return def
	}
	if v := nsObj.GetAnnotations()[bosun.AnnotationReconcilePolicy]; v != "" {
		return Policy{Value: v, Source: PolicyFromNamespace, Namespace: ns}
	}
	return def
}

var eventsResource = corev1.SchemeGroupVersion.WithResource("events")

// events returns the latest events about obj, warnings first, then newest
// first, at most MaxEvents. Events recorded through events.k8s.io and
// through core/v1 are one resource on the server, seen through two APIs:
// one list of core/v1 events, selected by the object's UID, has them all.
func (g *gatherer) events(ctx context.Context, obj *unstructured.Unstructured) []Event {
	list, err := g.dyn.Resource(eventsResource).Namespace(obj.GetNamespace()).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.uid=" + string(obj.GetUID()),
	})
	if err != nil {
		g.note("cannot list the events about the object: %v", err)
		return nil
	}
	out := make([]Event, 0, len(list.Items))
	for _, item := range list.Items {
		var e corev1.Event
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &e); err != nil {
			continue
		}
		out = append(out, eventOf(&e))
	}
	sortEvents(out)
	return out[:min(len(out), MaxEvents)]
}

// eventOf returns what the explanation says of e: when it was last seen
// and how often, whichever API recorded it.
func eventOf(e *corev1.Event) Event {
	ev := Event{Type: e.Type, Reason: e.Reason, Note: e.Message, Count: e.Count}
	for _, t := range []time.Time{e.CreationTimestamp.Time, e.FirstTimestamp.Time, e.EventTime.Time, e.LastTimestamp.Time} {
		if t.After(ev.Time) {
			ev.Time = t
		}
	}
	if s := e.Series; s != nil {
		ev.Count = max(ev.Count, s.Count)
		if s.LastObservedTime.After(ev.Time) {
			ev.Time = s.LastObservedTime.Time
		}
	}
	ev.Count = max(ev.Count, 1)
	return ev
}

// sortEvents puts warnings first, then the newest first.
func sortEvents(events []Event) {
	slices.SortStableFunc(events, func(a, b Event) int {
		aw, bw := a.Type == corev1.EventTypeWarning, b.Type == corev1.EventTypeWarning
		if aw != bw {
			if aw {
				return -1
			}
			return 1
		}
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(a.Reason, b.Reason))
	})
}
