package children

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/internal/wiretest"
)

// TestUnseenChildrenLookedUpInOneList keeps a ConfigMap of one name in
// ten namespaces, one of which already holds an object of that name made
// by someone else, which the cache does not show (CacheSetsOnly). The
// children the cache does not show are looked up on the API server with
// one list of that name, not one read each: the nine are made, and the
// object the list found is read and left alone (ChildExists). When the API server
// refuses the list (an operator allowed in some namespaces only), the
// children are read one by one, and the list is not asked for again.
func TestUnseenChildrenLookedUpInOneList(t *testing.T) {
	for _, refused := range []bool{false, true} {
		t.Run(fmt.Sprintf("refused=%v", refused), func(t *testing.T) {
			cp := shared.ControlPlane(t)
			ctx := t.Context()
			var namespaces []string
			for range 10 {
				namespaces = append(namespaces, bosuntest.Namespace(t, cp.Client))
			}
			foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespaces[0], Name: "spread"}, Data: map[string]string{"value": "theirs"}}
			if err := cp.Client.Create(ctx, foreign); err != nil {
				t.Fatal(err)
			}
			desired := func(_ context.Context, req *bosun.Pass[*testapi.Widget]) ([]client.Object, error) {
				var objs []client.Object
				for _, ns := range namespaces {
					objs = append(objs, &corev1.ConfigMap{
						ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: req.Object.Name},
						Data:       map[string]string{"value": "ours"},
					})
				}
				return objs, nil
			}
			reqs := &configMapRequests{refuseNameList: refused}
			e := startHarness(t, reconciler(NewUnownedStep("spread", desired, []Kind{Of(&corev1.ConfigMap{})})), harness{
				transport: reqs.wrap,
				// The object made by someone else is not in the cache.
				configure: func(o *ctrl.Options) { CacheSetsOnly(&o.Cache, &corev1.ConfigMap{}) },
			})
			e.create("spread", 0, 0)
			e.waitConditions("spread", map[string]cond{"ConfigMapReady": {metav1.ConditionFalse, ReasonChildExists}})
			for _, ns := range namespaces[1:] {
				e.waitConfigMaps(ns, map[string]string{"spread": "ours"})
			}
			if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(foreign), foreign); err != nil || foreign.Data["value"] != "theirs" || foreign.Labels[LabelSet] != "" {
				t.Errorf("the ConfigMap made by someone else: %v, data %v, labels %v, want it left alone", err, foreign.Data, foreign.Labels)
			}

			// The object in the way is read again by later passes and
			// while it blocks (pollBlockers): the reads of the other nine
			// are counted.
			lists, reads := reqs.counts(namespaces[1:])
			switch {
			case !refused && (lists < 1 || reads != 0):
				t.Errorf("%d lists of the ConfigMaps named spread and %d reads of the children it made, want at least one list and no read", lists, reads)
			case refused && (lists != 1 || reads < 9):
				t.Errorf("with the list refused: %d lists and %d reads of the children it made, want the one list refused and a read of each of the 9", lists, reads)
			}
			if _, first := reqs.counts(namespaces[:1]); first == 0 {
				t.Errorf("the object the list found was never read")
			}
		})
	}
}

// configMapRequests counts the manager's requests for ConfigMaps: lists
// by name in every namespace, and reads of one ConfigMap.
type configMapRequests struct {
	// refuseNameList answers the lists by name with 403 Forbidden.
	refuseNameList bool

	mu    sync.Mutex
	lists int
	reads map[string]int // by namespace
}

// wrap sends the manager's requests on through send, counting them.
func (r *configMapRequests) wrap(send http.RoundTripper) http.RoundTripper {
	return wiretest.RoundTripFunc(func(req *http.Request) (*http.Response, error) {
		parts := strings.Split(req.URL.Path, "/")
		switch {
		case req.Method == http.MethodGet && req.URL.Path == "/api/v1/configmaps" && strings.Contains(req.URL.Query().Get("fieldSelector"), "metadata.name=") && req.URL.Query().Get("watch") == "":
			r.mu.Lock()
			r.lists++
			r.mu.Unlock()
			if r.refuseNameList {
				return wiretest.Status(req, http.StatusForbidden, metav1.StatusReasonForbidden), nil
			}
		case req.Method == http.MethodGet && len(parts) == 7 && parts[5] == "configmaps":
			r.mu.Lock()
			if r.reads == nil {
				r.reads = map[string]int{}
			}
			r.reads[parts[4]]++
			r.mu.Unlock()
		}
		return send.RoundTrip(req)
	})
}

// counts returns the lists by name, and the reads of a ConfigMap in
// namespaces.
func (r *configMapRequests) counts(namespaces []string) (lists, reads int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ns := range namespaces {
		reads += r.reads[ns]
	}
	return r.lists, reads
}
