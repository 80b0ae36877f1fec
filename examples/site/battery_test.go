package site

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest/faults"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	sitev1 "github.com/bosunkit/bosun/examples/site/api/v1alpha1"
)

// batteryTheme is the theme Secret the even Sites of the battery name, and
// batteryCSS its style sheet.
const (
	batteryTheme = "battery-theme"
	batteryCSS   = "body { color: #123456; }\n"
)

// TestBattery runs the reliability battery on the Site operator, set up as
// SetupWithManager sets it up. Each Site should end with one ConfigMap per
// page, holding the page as Render makes it (with the theme for the Sites
// that name one), and one Service, all controlled by that very Site.
// A Site has no finalizer: its children go with the garbage collector,
// which the package's control plane runs, so a deleted Site must leave
// none behind.
func TestBattery(t *testing.T) {
	faults.RunBattery(t, shared.ControlPlane(t), faults.Operator{
		Name: "site",
		Setup: func(mgr ctrl.Manager, p *faults.Process) error {
			r := NewReconciler()
			p.Configure(&r.Options)
			return faults.Shard(bosun.ControllerManagedBy[*sitev1.Site](mgr), p).Complete(r)
		},
		Object: batterySite,
		// A new title: every page must follow it.
		Change: func(o client.Object) { o.(*sitev1.Site).Spec.Title += " (new)" },
		// Create: a ConfigMap per page (two), the Service and the status;
		// change: the pages and the status; delete: nothing (the garbage
		// collector removes the children).
		Budget: faults.Budget{
			Create: faults.Cost{Writes: 4},
			Change: faults.Cost{Writes: 3},
		},
		Prepare:    batteryPrepare,
		Converged:  batteryConverged,
		Duplicates: batteryDuplicates,
		Cleaned:    batteryCleaned,
	})
}

// batterySite returns the i-th Site of a battery scenario: two pages, and
// the battery's theme for even i.
func batterySite(ns string, i int) client.Object {
	s := &sitev1.Site{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("site-%d", i)},
		Spec:       sitev1.SiteSpec{Title: fmt.Sprintf("Site <%d>", i), Pages: []string{"index", "about"}},
	}
	if i%2 == 0 {
		s.Spec.ThemeSecret = batteryTheme
	}
	return s
}

// batteryPrepare makes the theme Secret the even Sites name.
func batteryPrepare(ctx context.Context, c client.Client, ns string) error {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: batteryTheme},
		StringData: map[string]string{sitev1.ThemeKey: batteryCSS},
	}
	if err := c.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating theme secret: %w", err)
	}
	return nil
}

// controlled returns the ConfigMaps and Services in ns by the UID of the
// object that controls them.
func controlled(ctx context.Context, c client.Client, ns string) (map[types.UID][]*corev1.ConfigMap, map[types.UID][]*corev1.Service, error) {
	cms, err := oracle.Controlled[*corev1.ConfigMap](ctx, c, ns, &corev1.ConfigMapList{})
	if err != nil {
		return nil, nil, err
	}
	svcs, err := oracle.Controlled[*corev1.Service](ctx, c, ns, &corev1.ServiceList{})
	if err != nil {
		return nil, nil, err
	}
	return cms, svcs, nil
}

// batteryConverged checks that each Site controls exactly the ConfigMaps of
// its pages, each holding the page Render makes, and its Service, which
// selects the web server's pods by the Site's name on port 80, and that
// its status has the URL and the number of pages.
func batteryConverged(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	byCM, bySvc, err := controlled(ctx, c, ns)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		s := &sitev1.Site{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), s); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := checkSite(s, byCM[s.UID], bySvc[s.UID]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.Name, err))
		}
	}
	return errors.Join(errs...)
}

// checkSite checks the status and the children of s.
func checkSite(s *sitev1.Site, cms []*corev1.ConfigMap, svcs []*corev1.Service) error {
	var errs []error
	if s.Status.URL != URL(s) || s.Status.Pages != int32(len(s.Spec.Pages)) {
		errs = append(errs, fmt.Errorf("status has url %q and %d pages, want %q and %d", s.Status.URL, s.Status.Pages, URL(s), len(s.Spec.Pages)))
	}
	css := ""
	if s.Spec.ThemeSecret != "" {
		css = batteryCSS
	}
	want := map[string]string{}
	for _, page := range s.Spec.Pages {
		html, err := Render(Page{Title: s.Spec.Title, Name: page, Pages: s.Spec.Pages, CSS: css})
		if err != nil {
			return err
		}
		want[ConfigMapName(s, page)] = html
	}
	got := map[string]string{}
	for _, cm := range cms {
		if cm.DeletionTimestamp.IsZero() {
			got[cm.Name] = cm.Data[PageKey]
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		errs = append(errs, fmt.Errorf("pages by ConfigMap (-want +got):\n%s", diff))
	}
	switch {
	case len(svcs) != 1:
		errs = append(errs, fmt.Errorf("%d services, want 1", len(svcs)))
	case svcs[0].Name != s.Name:
		errs = append(errs, fmt.Errorf("service %s, want %s", svcs[0].Name, s.Name))
	default:
		spec := svcs[0].Spec
		if diff := cmp.Diff(map[string]string{LabelName: s.Name}, spec.Selector); diff != "" {
			errs = append(errs, fmt.Errorf("service selector (-want +got):\n%s", diff))
		}
		if len(spec.Ports) != 1 || spec.Ports[0].Name != "http" || spec.Ports[0].Port != 80 {
			errs = append(errs, fmt.Errorf("service ports %+v, want http on 80", spec.Ports))
		}
	}
	return errors.Join(errs...)
}

// batteryDuplicates counts the Sites that control more than one Service, or
// more ConfigMaps than they have pages.
func batteryDuplicates(ctx context.Context, c client.Client, ns string, objs []client.Object) (int, error) {
	byCM, bySvc, err := controlled(ctx, c, ns)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, o := range objs {
		s, ok := o.(*sitev1.Site)
		if !ok {
			return 0, fmt.Errorf("%T is not a Site", o)
		}
		if len(bySvc[s.UID]) > 1 || len(byCM[s.UID]) > len(s.Spec.Pages) {
			n++
		}
	}
	return n, nil
}

// batteryCleaned checks that no ConfigMap or Service of a deleted Site is
// left.
func batteryCleaned(ctx context.Context, c client.Client, ns string, objs []client.Object) error {
	return oracle.NoOrphans(ctx, c, ns, oracle.UIDs(objs), &corev1.ConfigMapList{}, &corev1.ServiceList{})
}
