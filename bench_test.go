package bosun_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/conditions"
	"github.com/bosunkit/bosun/internal/testapi"
)

// The benchmarks compare the engine with a hand-written controller-runtime
// reconciler that makes the same reads (the object and its Namespace, for
// the policy) and the same writes (a status patch guarded by the
// resourceVersion, only when the status changed), both against a fake client,
// so that they measure CPU time rather than an API server.
//
// "steady" reconciles an object whose status is already up to date: no write.
// "write" changes the computed result on every pass: one status patch.

var benchKey = types.NamespacedName{Namespace: "bench", Name: "w"}

func benchClient(b *testing.B) client.Client {
	b.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	if err := testapi.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	return fake.NewClientBuilder().
		WithScheme(scheme).
		WithStatusSubresource(&testapi.Widget{}).
		WithObjects(
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchKey.Namespace}},
			&testapi.Widget{
				ObjectMeta: metav1.ObjectMeta{Namespace: benchKey.Namespace, Name: benchKey.Name, Generation: 1},
				Spec:       testapi.WidgetSpec{Value: 6, Divisor: 3},
			},
		).Build()
}

// compute is the work both reconcilers do: the result, plus a per-pass offset
// that forces a write in the "write" benchmarks.
type compute struct{ offset *int64 }

func (c compute) result(w *testapi.Widget) int64 { return w.Spec.Value/w.Spec.Divisor + *c.offset }

// benchStep is the engine's version of the work.
type benchStep struct{ compute }

func (benchStep) Name() string         { return "compute" }
func (benchStep) Conditions() []string { return []string{"Computed"} }

func (s benchStep) Do(_ context.Context, req *bosun.Pass[*testapi.Widget]) (ctrl.Result, error) {
	w := req.Object
	w.Status.Result = s.result(w)
	conds := w.Status.Conditions
	conditions.Set(&conds, metav1.Condition{Type: "Computed", Status: metav1.ConditionTrue, Reason: "Divided", ObservedGeneration: w.Generation}, metav1.Now())
	w.Status.Conditions = conds
	return ctrl.Result{}, nil
}

// handReconciler is the hand-written version.
type handReconciler struct {
	compute
	c client.Client
}

func (h *handReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var w testapi.Widget
	if err := h.c.Get(ctx, req.NamespacedName, &w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var ns corev1.Namespace
	if err := h.c.Get(ctx, types.NamespacedName{Name: w.Namespace}, &ns); err != nil {
		return ctrl.Result{}, err
	}
	if ns.Annotations[bosun.AnnotationReconcilePolicy] == string(bosun.PolicySkip) {
		return ctrl.Result{}, nil
	}
	orig := w.DeepCopy()
	w.Status.Result = h.result(&w)
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Computed", Status: metav1.ConditionTrue, Reason: "Divided", ObservedGeneration: w.Generation})
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: string(conditions.ReasonSucceeded), ObservedGeneration: w.Generation})
	w.Status.ObservedGeneration = w.Generation
	if equality.Semantic.DeepEqual(orig.Status, w.Status) {
		return ctrl.Result{}, nil
	}
	if err := h.c.Status().Patch(ctx, &w, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

func newBenchReconcilers(b *testing.B) (engine, hand reconcile.Reconciler, offset *int64) {
	b.Helper()
	offset = new(int64)
	engineRec := &bosun.Reconciler[*testapi.Widget]{
		Name:   "bench-engine",
		Client: benchClient(b),
		Steps:  []bosun.Step[*testapi.Widget]{benchStep{compute{offset}}},
	}
	if err := engineRec.Validate(); err != nil {
		b.Fatal(err)
	}
	return engineRec, &handReconciler{compute: compute{offset}, c: benchClient(b)}, offset
}

func runBench(b *testing.B, r reconcile.Reconciler, offset *int64, write bool) {
	ctx := logr.NewContext(context.Background(), logr.Discard())
	req := ctrl.Request{NamespacedName: benchKey}
	if _, err := r.Reconcile(ctx, req); err != nil { // settle the first write
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if write {
			*offset++
		}
		if _, err := r.Reconcile(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReconcile(b *testing.B) {
	for _, mode := range []struct {
		name  string
		write bool
	}{{"steady", false}, {"write", true}} {
		b.Run(mode.name+"/engine", func(b *testing.B) {
			engine, _, offset := newBenchReconcilers(b)
			runBench(b, engine, offset, mode.write)
		})
		b.Run(mode.name+"/handwritten", func(b *testing.B) {
			_, hand, offset := newBenchReconcilers(b)
			runBench(b, hand, offset, mode.write)
		})
	}
}

// BenchmarkEngineOverhead runs the engine and the hand-written reconciler
// alternately in the same loop and reports the ratio of their times as
// engine/hand (1.00 means no overhead).
func BenchmarkEngineOverhead(b *testing.B) {
	for _, mode := range []struct {
		name  string
		write bool
	}{{"steady", false}, {"write", true}} {
		b.Run(mode.name, func(b *testing.B) {
			engine, hand, offset := newBenchReconcilers(b)
			ctx := logr.NewContext(context.Background(), logr.Discard())
			req := ctrl.Request{NamespacedName: benchKey}
			for _, r := range []reconcile.Reconciler{engine, hand} {
				if _, err := r.Reconcile(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			var engineTime, handTime time.Duration
			for b.Loop() {
				if mode.write {
					*offset++
				}
				start := time.Now()
				if _, err := hand.Reconcile(ctx, req); err != nil {
					b.Fatal(err)
				}
				mid := time.Now()
				if _, err := engine.Reconcile(ctx, req); err != nil {
					b.Fatal(err)
				}
				handTime += mid.Sub(start)
				engineTime += time.Since(mid)
			}
			if handTime > 0 {
				b.ReportMetric(float64(engineTime)/float64(handTime), "engine/hand")
			}
		})
	}
}

// BenchmarkStatusAnswer decodes the answer to the engine's status write of
// a Widget with two conditions and the managedFields of a create and a
// status write: whole, as JSON into the Widget (what controller-runtime's
// client decodes when handed the typed object), and as the engine asks
// for it, metadata only (metav1.PartialObjectMetadata, which the API
// server sends as protobuf to client-go's metadata client).
func BenchmarkStatusAnswer(b *testing.B) {
	scheme := runtime.NewScheme()
	if err := testapi.AddToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	const answer = `{"apiVersion":"test.bosun.dev/v1","kind":"Widget","metadata":{"creationTimestamp":"2026-11-27T05:20:11Z","generation":1,` +
		`"managedFields":[{"apiVersion":"test.bosun.dev/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:divisor":{},"f:value":{}}},"manager":"e2e","operation":"Update","time":"2026-11-27T05:20:11Z"},` +
		`{"apiVersion":"test.bosun.dev/v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{".":{},"f:conditions":{},"f:result":{}}},"manager":"bosun","operation":"Update","subresource":"status","time":"2026-11-27T05:20:12Z"}],` +
		`"name":"w-01234","namespace":"bench-5000","resourceVersion":"123456","uid":"7d3c1d2e-4c3b-4a7e-9d0e-3f1a2b3c4d5e"},"spec":{"value":10,"divisor":3},` +
		`"status":{"result":3,"conditions":[{"lastTransitionTime":"2026-11-27T05:20:12Z","message":"","observedGeneration":1,"reason":"Divided","status":"True","type":"Computed"},` +
		`{"lastTransitionTime":"2026-11-27T05:20:12Z","message":"","observedGeneration":1,"reason":"Succeeded","status":"True","type":"Ready"}]}}`
	codecs := serializer.NewCodecFactory(scheme)
	whole := codecs.UniversalDeserializer()
	w := &testapi.Widget{}
	if _, _, err := whole.Decode([]byte(answer), nil, w); err != nil {
		b.Fatal(err)
	}
	pb := protobuf.NewSerializer(scheme, scheme)
	meta := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PartialObjectMetadata"}, ObjectMeta: w.ObjectMeta}
	var wire bytes.Buffer
	if err := pb.Encode(meta, &wire); err != nil {
		b.Fatal(err)
	}
	b.Run("whole-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			got := &testapi.Widget{}
			if _, _, err := whole.Decode([]byte(answer), nil, got); err != nil {
				b.Fatal(err)
			}
			if got.ResourceVersion != "123456" {
				b.Fatalf("decoded version %q", got.ResourceVersion)
			}
		}
	})
	b.Run("metadata-protobuf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			got := &metav1.PartialObjectMetadata{}
			if _, _, err := pb.Decode(wire.Bytes(), nil, got); err != nil {
				b.Fatal(err)
			}
			if got.ResourceVersion != "123456" {
				b.Fatalf("decoded version %q", got.ResourceVersion)
			}
		}
	})
}
