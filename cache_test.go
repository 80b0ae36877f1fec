package bosun_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/internal/testapi"
)

// TestLeanCache checks that a manager whose cache options went through
// LeanCache caches Widgets without their managedFields, which the API
// server still has, after a transform set before.
func TestLeanCache(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	transformed := make(chan struct{}, 1)
	mgr := bosuntest.RunManagerWith(t, f.cp, bosuntest.ManagerOptions{Configure: func(o *ctrl.Options) {
		o.Cache.DefaultTransform = func(in any) (any, error) {
			select {
			case transformed <- struct{}{}:
			default:
			}
			return in, nil
		}
		bosun.LeanCache(&o.Cache)
	}}, func(ctrl.Manager) error { return nil })
	f.create("lean", 1, 1, nil)
	key := client.ObjectKey{Namespace: f.ns, Name: "lean"}

	var live testapi.Widget
	if err := mgr.GetAPIReader().Get(t.Context(), key, &live); err != nil {
		t.Fatal(err)
	}
	if len(live.ManagedFields) == 0 {
		t.Fatal("the API server returned no managedFields: nothing to strip")
	}
	bosuntest.Eventually(t, func(ctx context.Context) error {
		var cached testapi.Widget
		if err := mgr.GetClient().Get(ctx, key, &cached); err != nil {
			return err
		}
		if cached.ManagedFields != nil {
			return errors.New("the cached Widget has managedFields")
		}
		return nil
	})
	select {
	case <-transformed:
	default:
		t.Error("the transform set before LeanCache did not run")
	}
}

// TestLeanCacheKeepsTransformErrors checks that an error of the transform
// set before LeanCache is returned, with no object.
func TestLeanCacheKeepsTransformErrors(t *testing.T) {
	boom := errors.New("boom")
	o := cache.Options{DefaultTransform: func(any) (any, error) { return nil, boom }}
	bosun.LeanCache(&o)
	out, err := o.DefaultTransform(&metav1.PartialObjectMetadata{})
	if !errors.Is(err, boom) || out != nil {
		t.Errorf("transform = %v, %v; want nil, %v", out, err, boom)
	}
	o = cache.Options{}
	bosun.LeanCache(&o)
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}}}
	out, err = o.DefaultTransform(obj)
	if err != nil || out != obj || obj.ManagedFields != nil {
		t.Errorf("transform = %v, %v; want the object without managedFields", out, err)
	}
}

// TestLeanCacheTransform checks what the transform of LeanCache keeps of
// managedFields: nothing, but the entries of a set's children that are
// not of a subresource, which the children step reads to find drift.
func TestLeanCacheTransform(t *testing.T) {
	t.Parallel()
	apply := metav1.ManagedFieldsEntry{Manager: "bosun", Operation: metav1.ManagedFieldsOperationApply}
	update := metav1.ManagedFieldsEntry{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}
	status := metav1.ManagedFieldsEntry{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"}
	tests := []struct {
		name   string
		labels map[string]string
		in     []metav1.ManagedFieldsEntry
		want   []metav1.ManagedFieldsEntry
	}{
		{"object", nil, []metav1.ManagedFieldsEntry{apply, update, status}, nil},
		{"object with other labels", map[string]string{"app": "web"}, []metav1.ManagedFieldsEntry{apply, update}, nil},
		{"child of a set", map[string]string{"bosun.dev/set": "web"}, []metav1.ManagedFieldsEntry{update, status, apply},
			[]metav1.ManagedFieldsEntry{update, apply}},
		{"child of a set, only updates", map[string]string{"bosun.dev/set": "web"}, []metav1.ManagedFieldsEntry{update}, []metav1.ManagedFieldsEntry{update}},
		{"child of a set, only status", map[string]string{"bosun.dev/set": "web"}, []metav1.ManagedFieldsEntry{status}, nil},
		{"no managedFields", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o cache.Options
			bosun.LeanCache(&o)
			in := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Labels: tt.labels, ManagedFields: tt.in}}
			out, err := o.DefaultTransform(in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.(*testapi.Widget).ManagedFields); diff != "" {
				t.Errorf("managedFields (-want +got):\n%s", diff)
			}
		})
	}
}
