package frontend_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/cmd/bosun/gen/internal/frontend"
)

const ns = "web"

func deployment() *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop", UID: "uid-shop"}}
}

// service returns the Service the svc state selects, controlled by the
// object with controllerUID ("" for no controller).
func service(controllerUID string) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop-svc"}}
	if controllerUID != "" {
		yes := true
		s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "shop", UID: types.UID(controllerUID), Controller: &yes}}
	}
	return s
}

func settings() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "frontend-settings"}, Data: map[string]string{"port": "8080"}}
}

// impl records the states its actions get.
type impl struct {
	calls []string
}

func (i *impl) SyncService(_ context.Context, _ logr.Logger, svc *corev1.Service, settings *corev1.ConfigMap) (ctrl.Result, error) {
	i.calls = append(i.calls, "SyncService "+describe(svc)+" "+describe(settings))
	return ctrl.Result{}, nil
}

func (i *impl) PublishAddress(_ context.Context, _ logr.Logger, svc *corev1.Service) (ctrl.Result, error) {
	i.calls = append(i.calls, "PublishAddress "+describe(svc))
	return ctrl.Result{}, nil
}

var _ frontend.FrontendManagerImpl = (*impl)(nil)

// run runs the step of an action in a pass over target through c, whose
// steps share the states and impl given to newImpl: rec.
type run struct {
	steps *frontend.FrontendManagerSteps
	req   *bosun.Pass[*appsv1.Deployment]
	// state is the state the steps of req share, once one has run.
	state *frontend.FrontendManagerState
}

func newRun(c client.Client, target *appsv1.Deployment, rec *impl) *run {
	r := &run{req: &bosun.Pass[*appsv1.Deployment]{Object: target, Client: c, Log: logr.Discard(), Values: &bosun.Values{}}}
	r.steps = frontend.NewFrontendManagerSteps(func(_ *bosun.Pass[*appsv1.Deployment], state *frontend.FrontendManagerState) frontend.FrontendManagerImpl {
		r.state = state
		return rec
	})
	return r
}

func (r *run) do(step bosun.Step[*appsv1.Deployment]) error {
	_, err := step.Do(context.Background(), r.req)
	return err
}

// describe returns the name of obj, or <none> for a nil pointer.
func describe[T interface {
	*corev1.Service | *corev1.ConfigMap
	GetName() string
}](obj T) string {
	if obj == nil {
		return "<none>"
	}
	return obj.GetName()
}

func TestSingleObjectStates(t *testing.T) {
	tests := []struct {
		name    string
		objs    []client.Object
		want    []string
		wantErr error
	}{
		{
			name: "none exists",
			want: []string{"SyncService <none> <none>"},
		},
		{
			name: "both exist, the service controlled by the target",
			objs: []client.Object{service("uid-shop"), settings()},
			want: []string{"SyncService shop-svc frontend-settings"},
		},
		{
			name:    "the service controlled by another object",
			objs:    []client.Object{service("uid-other"), settings()},
			wantErr: bosun.ErrNotControlled,
		},
		{
			name:    "the service without a controller",
			objs:    []client.Object{service(""), settings()},
			wantErr: bosun.ErrNotControlled,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := deployment()
			c := fake.NewClientBuilder().WithObjects(append(tt.objs, target)...).Build()
			rec := &impl{}
			r := newRun(c, target, rec)
			err := r.do(r.steps.SyncService())
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, rec.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNotControlledErrorNamesTheObject(t *testing.T) {
	target := deployment()
	c := fake.NewClientBuilder().WithObjects(target, service("uid-other")).Build()
	s := frontend.NewFrontendManagerState(c, target)
	svc, err := s.GetSvc(context.Background())
	if svc != nil {
		t.Errorf("GetSvc returned %v with the error, want nil", svc)
	}
	want := "get state svc: Service web/shop-svc: " + bosun.ErrNotControlled.Error()
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestStatesAreReadOnceAcrossActions(t *testing.T) {
	target := deployment()
	c := fake.NewClientBuilder().WithObjects(target, service("uid-shop")).Build()
	rec := &impl{}
	r := newRun(c, target, rec)
	ctx := context.Background()
	if err := r.do(r.steps.SyncService()); err != nil {
		t.Fatal(err)
	}
	// Deleted after the first read: the actions of this reconcile still
	// see the object until Reset.
	if err := c.Delete(ctx, service("uid-shop")); err != nil {
		t.Fatal(err)
	}
	if err := r.do(r.steps.PublishAddress()); err != nil {
		t.Fatal(err)
	}
	r.state.Reset()
	if err := r.do(r.steps.PublishAddress()); err != nil {
		t.Fatal(err)
	}
	want := []string{"SyncService shop-svc <none>", "PublishAddress shop-svc", "PublishAddress <none>"}
	if diff := cmp.Diff(want, rec.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
