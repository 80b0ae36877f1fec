package oracle_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/oracle"
	"github.com/bosunkit/bosun/internal/testapi"
)

func TestGone(t *testing.T) {
	cp := shared.ControlPlane(t)
	c := cp.Client
	ns := bosuntest.Namespace(t, c)
	const hold = "oracle.test.bosun.dev/hold"

	held := createWidget(t, c, ns, "held", hold)
	setReady(t, c, held, "False", "Deleting", "waiting for the backup", held.Generation, 0)
	deleteObject(t, c, held)
	t.Cleanup(func() { removeFinalizers(t, c, held) })
	kept := createWidget(t, c, ns, "kept")
	removed := createWidget(t, c, ns, "removed")
	deleteObject(t, c, removed)
	replaced := createWidget(t, c, ns, "replaced")
	deleteObject(t, c, replaced)
	createWidget(t, c, ns, "replaced") // same name, another UID

	objs := []client.Object{held, kept, removed, replaced}
	err := oracle.Gone(t.Context(), c, objs, failBound, oracle.Interval(20*time.Millisecond))
	checkErr(t, err, []error{oracle.ErrNotGone}, []string{
		"2 of 4 objects still there after",
		`Widget ` + ns + `/held: being deleted, finalizers ["` + hold + `"], Ready False/Deleting "waiting for the backup" (generation 1)`,
		`Widget ` + ns + `/kept: not being deleted, no finalizers, no Ready condition`,
	})
	unwanted(t, err, []string{"/removed", "/replaced"})

	removeFinalizers(t, c, held)
	deleteObject(t, c, kept)
	if err := oracle.Gone(t.Context(), c, objs, 30*time.Second); err != nil {
		t.Errorf("Gone after the finalizer was released: %v", err)
	}
}

// A read refused near the end of the wait (the client's rate limiter
// refuses a request it could not make before the deadline) says nothing of
// the object: Gone reports what the last read that got through found.
func TestGoneReportsTheLastReadThatGotThrough(t *testing.T) {
	cp := shared.ControlPlane(t)
	ns := bosuntest.Namespace(t, cp.Client)
	kept := createWidget(t, cp.Client, ns, "kept")
	c, reads := refusingAfterFirstRead(t, cp.Config, cp.Client.Scheme())
	// The bound leaves the first Get, which a new client makes after a
	// discovery of the API server, time to get through on a busy machine.
	err := oracle.Gone(t.Context(), c, []client.Object{kept}, failBound, oracle.Interval(10*time.Millisecond))
	checkErr(t, err, []error{oracle.ErrNotGone}, []string{
		`Widget ` + ns + `/kept: not being deleted, no finalizers, no Ready condition`,
	})
	unwanted(t, err, []string{"rate limiter"})
	if reads.Load() < 2 {
		t.Errorf("Gone read %d times in %s at a 10ms interval, want more than once", reads.Load(), failBound)
	}
}

// failBound is the bound of the checks that must fail: long enough for a
// first read, which a new client makes after a discovery of the API
// server, to get through on a busy machine, so that the failure says what
// the reads found.
const failBound = 5 * time.Second

// errRefused is what client-go's rate limiter answers when a request could
// not be made before the context's deadline.
var errRefused = errors.New("client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline")

// refusingAfterFirstRead returns a client whose first Get or List goes to
// the API server and every later one fails with errRefused, and the count
// of reads made.
func refusingAfterFirstRead(t *testing.T, cfg *rest.Config, scheme *runtime.Scheme) (client.Client, *atomic.Int32) {
	t.Helper()
	base, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	var reads atomic.Int32
	return interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if reads.Add(1) > 1 {
				return errRefused
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if reads.Add(1) > 1 {
				return errRefused
			}
			return c.List(ctx, list, opts...)
		},
	}), &reads
}

func TestGoneStopsWithTheContext(t *testing.T) {
	cp := shared.ControlPlane(t)
	c := cp.Client
	ns := bosuntest.Namespace(t, c)
	w := createWidget(t, c, ns, "kept")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := oracle.Gone(ctx, c, []client.Object{w}, time.Minute)
	if !errors.Is(err, context.Canceled) || errors.Is(err, oracle.ErrNotGone) {
		t.Errorf("err = %v, want context.Canceled and not ErrNotGone", err)
	}
}

func TestNoOrphans(t *testing.T) {
	cp := shared.ControlPlane(t)
	c := cp.Client
	ns := bosuntest.Namespace(t, c)
	owner := createWidget(t, c, ns, "owner")
	other := createWidget(t, c, ns, "other")
	ref := func(w *testapi.Widget) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: testapi.GroupVersion.String(), Kind: "Widget", Name: w.Name, UID: w.UID, Controller: ptr.To(true)}}
	}
	orphanCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orphan", OwnerReferences: ref(owner)}}
	otherCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other", OwnerReferences: ref(other)}}
	orphanSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orphan", OwnerReferences: ref(owner)}}
	for _, obj := range []client.Object{orphanCM, otherCM, orphanSecret} {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
	}
	owners := []types.UID{owner.UID}

	err := oracle.NoOrphans(t.Context(), c, ns, owners, &corev1.ConfigMapList{}, &corev1.SecretList{})
	checkErr(t, err, []error{oracle.ErrOrphans}, []string{
		"ConfigMap " + ns + "/orphan: owned by Widget owner (uid " + string(owner.UID) + ")",
		"Secret " + ns + "/orphan: owned by Widget owner",
	})
	unwanted(t, err, []string{"/other"})

	// Only the lists given are looked in.
	err = oracle.NoOrphans(t.Context(), c, ns, owners, &corev1.SecretList{})
	checkErr(t, err, []error{oracle.ErrOrphans}, []string{"Secret " + ns + "/orphan"})
	unwanted(t, err, []string{"ConfigMap"})

	if err := oracle.NoOrphans(t.Context(), c, ns, owners); err == nil || !strings.Contains(err.Error(), "no lists") {
		t.Errorf("NoOrphans with no lists = %v, want it refused", err)
	}

	deleteObject(t, c, orphanCM)
	deleteObject(t, c, orphanSecret)
	if err := oracle.NoOrphans(t.Context(), c, ns, owners, &corev1.ConfigMapList{}, &corev1.SecretList{}); err != nil {
		t.Errorf("NoOrphans after the children were deleted: %v", err)
	}
}
