package managed_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun"
	"github.com/bosunkit/bosun/managed"
	v1 "github.com/bosunkit/bosun/managed/internal/bucketapi"
	"github.com/bosunkit/bosun/tuning"
)

// A step over a connector made of functions: the client here keeps its
// buckets in a map.
func ExampleNewStep() {
	buckets := map[string]int64{}
	client := managed.ExternalClientFuncs[*v1.Bucket]{
		ObserveFn: func(_ context.Context, b *v1.Bucket) (managed.Observation, error) {
			size, ok := buckets[managed.ExternalName(b)]
			return managed.Observation{Exists: ok, UpToDate: size == b.Spec.Size, Available: ok}, nil
		},
		CreateFn: func(_ context.Context, b *v1.Bucket) (managed.Creation, error) {
			buckets[managed.ExternalName(b)] = b.Spec.Size
			return managed.Creation{ConnectionDetails: managed.ConnectionDetails{"endpoint": []byte("https://example.test")}}, nil
		},
	}
	connector := managed.ConnectorFunc[*v1.Bucket](func(context.Context, *v1.Bucket) (managed.ExternalClient[*v1.Bucket], error) {
		return client, nil
	})
	step := managed.NewStep[*v1.Bucket](connector,
		managed.WithConnectionSecret(func(b *v1.Bucket) string { return b.Spec.ConnectionSecret }),
		managed.WithExternalName(managed.NameFromUID("bucket-")),
	)
	r := &bosun.Reconciler[*v1.Bucket]{
		Name:      "bucket",
		Steps:     []bosun.Step[*v1.Bucket]{step},
		Finalizer: "example.com/bucket",
	}
	fmt.Println(bosun.StepName[*v1.Bucket](step), step.Conditions(), r.Finalizer)
	// Output:
	// managed [Synced Available] example.com/bucket
}

// Management policies come from an option or, per object, from an
// annotation.
func ExampleParsePolicies() {
	for _, s := range []string{"observe", "observe,create,update", "*", "Observe,Create", "observe,destroy"} {
		p, err := managed.ParsePolicies(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Printf("%s: create=%t update=%t delete=%t\n", p, p.Create, p.Update, p.Delete)
	}
	// Output:
	// observe: create=false update=false delete=false
	// observe,create,update: create=true update=true delete=false
	// *: create=true update=true delete=true
	// observe,create: create=true update=false delete=false
	// error: invalid policy: unknown management policy "destroy": want observe, create, update, delete, late-initialize or *
}

// The external name lives in an annotation; NameFromUID is one way to pick
// it.
func ExampleNameFromUID() {
	b := &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Name: "logs", UID: types.UID("d8b86f26-67b8")}}
	fmt.Printf("%q\n", managed.ExternalName(b))
	managed.SetExternalName(b, managed.NameFromUID("bucket-")(b))
	fmt.Println(managed.ExternalName(b), b.Annotations[managed.AnnotationExternalName])
	// Output:
	// ""
	// bucket-d8b86f26-67b8 bucket-d8b86f26-67b8
}

// The default external name holds the namespace, so that objects of the
// same name in two namespaces get two resources.
func ExampleNameFromNamespacedName() {
	for _, ns := range []string{"team-a", "team-b", ""} {
		b := &v1.Bucket{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "logs"}}
		fmt.Println(managed.NameFromNamespacedName(b))
	}
	// Output:
	// team-a.logs
	// team-b.logs
	// logs
}

// batchBuckets is a client of a store that reads many buckets at once: it
// implements BatchObserver besides ExternalClient.
type batchBuckets struct {
	managed.ExternalClientFuncs[*v1.Bucket]
	sizes map[string]int64
}

// ObserveBatch observes every bucket of bs with one read of the store.
func (c batchBuckets) ObserveBatch(_ context.Context, bs []*v1.Bucket) ([]managed.Observation, error) {
	out := make([]managed.Observation, len(bs))
	for i, b := range bs {
		size, ok := c.sizes[managed.ExternalName(b)]
		out[i] = managed.Observation{Exists: ok, UpToDate: size == b.Spec.Size, Available: ok}
	}
	return out, nil
}

// A client that is a BatchObserver lets the step observe the buckets whose
// polls are due together in one call per round; Timing.Batch sets how far
// ahead a round looks, and Timing.Spread the window over which a process
// that starts spreads its first observations.
func ExampleBatchObserver() {
	store := batchBuckets{sizes: map[string]int64{"team-a.logs": 5, "team-a.data": 7}}
	connector := managed.ConnectorFunc[*v1.Bucket](func(context.Context, *v1.Bucket) (managed.ExternalClient[*v1.Bucket], error) {
		return store, nil
	})
	step := managed.NewStep[*v1.Bucket](connector, managed.WithTiming(managed.Timing{Poll: time.Minute, Batch: 10 * time.Second}))
	bs := []*v1.Bucket{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "logs", Annotations: map[string]string{managed.AnnotationExternalName: "team-a.logs"}}, Spec: v1.BucketSpec{Size: 5}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "data", Annotations: map[string]string{managed.AnnotationExternalName: "team-a.data"}}, Spec: v1.BucketSpec{Size: 8}},
	}
	var _ managed.BatchObserver[*v1.Bucket] = store
	obs, _ := store.ObserveBatch(context.Background(), bs)
	for i, o := range obs {
		fmt.Printf("%s: exists=%t upToDate=%t\n", bs[i].Name, o.Exists, o.UpToDate)
	}
	fmt.Println(step.Name())
	// Output:
	// logs: exists=true upToDate=true
	// data: exists=true upToDate=false
	// managed
}

// A manager whose only Secrets are connection Secrets caches those and no
// other Secret of the cluster.
func ExampleCacheConnectionSecretsOnly() {
	opts := ctrl.Options{}
	tuning.LeanCache(&opts.Cache)
	managed.CacheConnectionSecretsOnly(&opts.Cache)
	for obj, by := range opts.Cache.ByObject {
		fmt.Printf("%T: %s\n", obj, by.Label)
	}
	// Output:
	// *v1.Secret: bosun.dev/connection-secret
}
