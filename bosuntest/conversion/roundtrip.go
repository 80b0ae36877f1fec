package conversion

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrlconversion "sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/randfill"

	"github.com/bosunkit/bosun/bosuntest"
)

// defaultIterations is the number of objects per spoke and direction when
// Options.Iterations is not set.
const defaultIterations = 100

// Options tunes RoundTrip. The zero value is ready to use.
type Options struct {
	// Iterations is the number of random objects made for each spoke and
	// each direction. Zero or less means 100.
	Iterations int
	// Seed is the seed of the first iteration; iteration i uses Seed+i.
	// Zero means a seed taken from the clock, so that each run tries other
	// objects. A failure names the seed of its iteration: set Seed to it
	// (and Iterations to 1) to make the same objects again.
	Seed int64
	// Funcs are fill functions of sigs.k8s.io/randfill, each of the form
	// func(*T, randfill.Continue), for the types whose random values must
	// obey rules (an enum, a quantity, a field of interface type). They
	// replace the package's own, for metav1.ObjectMeta too. They must draw
	// their randomness from the Continue, or a seed no longer makes the
	// same objects.
	Funcs []any
	// CmpOptions are added to the comparison of an object with its round
	// trip, for instance cmpopts.IgnoreFields for a field a conversion is
	// allowed to lose.
	CmpOptions []cmp.Option
}

// RoundTrip checks that conversion between the hub of a kind and each of
// its spokes loses nothing, with the default Options. See Options.RoundTrip.
func RoundTrip(t bosuntest.TB, hub ctrlconversion.Hub, spokes ...ctrlconversion.Convertible) {
	t.Helper()
	Options{}.RoundTrip(t, hub, spokes...)
}

// RoundTrip checks that conversion between the hub of a kind and each of
// its spokes loses nothing. hub and spokes are pointers to structs, often
// zero values, that only name the types. For each spoke and each
// iteration it fills a random spoke object and checks that converting it to
// the hub and back gives it again, and fills a random hub object and checks
// that converting it to the spoke and back gives it again. Each direction of
// each spoke stops at its first failure, reported with t.Errorf: the types,
// the direction, the seed and a diff (-want +got).
func (o Options) RoundTrip(t bosuntest.TB, hub ctrlconversion.Hub, spokes ...ctrlconversion.Convertible) {
	t.Helper()
	if err := checkPrototype(hub); err != nil {
		t.Fatalf("conversion.RoundTrip: hub: %v", err)
	}
	if len(spokes) == 0 {
		t.Fatalf("conversion.RoundTrip: no spokes for hub %s", typeName(hub))
	}
	for i, s := range spokes {
		if err := checkPrototype(s); err != nil {
			t.Fatalf("conversion.RoundTrip: spoke %d: %v", i, err)
		}
	}
	n := o.Iterations
	if n <= 0 {
		n = defaultIterations
	}
	seed := o.Seed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	opts := append([]cmp.Option{cmpopts.IgnoreTypes(metav1.TypeMeta{}), cmpopts.EquateEmpty()}, o.CmpOptions...)
	for _, s := range spokes {
		p := pair{o: o, opts: opts, hub: hub, spoke: s}
		for i := 0; i < n; i++ {
			if !p.fromSpoke(t, seed+int64(i)) {
				break
			}
		}
		for i := 0; i < n; i++ {
			if !p.fromHub(t, seed+int64(i)) {
				break
			}
		}
	}
}

// pair is one hub and one spoke under test.
type pair struct {
	o     Options
	opts  []cmp.Option
	hub   ctrlconversion.Hub
	spoke ctrlconversion.Convertible
}

// fromSpoke checks spoke -> hub -> spoke for the object of one seed, and
// reports whether it held.
func (p pair) fromSpoke(t bosuntest.TB, seed int64) bool {
	t.Helper()
	way := fmt.Sprintf("%s -> %s (hub) -> %s, seed %d", typeName(p.spoke), typeName(p.hub), typeName(p.spoke), seed)
	in := fresh(p.spoke)
	if err := p.o.fill(in, seed); err != nil {
		t.Errorf("conversion %s: %v", way, err)
		return false
	}
	want := in.DeepCopyObject()
	h := fresh(p.hub)
	if err := safely(func() error { return in.ConvertTo(h) }); err != nil {
		t.Errorf("conversion %s: ConvertTo: %v", way, err)
		return false
	}
	got := fresh(p.spoke)
	if err := safely(func() error { return got.ConvertFrom(h) }); err != nil {
		t.Errorf("conversion %s: ConvertFrom: %v", way, err)
		return false
	}
	return p.compare(t, way, seed, want, got)
}

// fromHub checks hub -> spoke -> hub for the object of one seed, and
// reports whether it held.
func (p pair) fromHub(t bosuntest.TB, seed int64) bool {
	t.Helper()
	way := fmt.Sprintf("%s (hub) -> %s -> %s (hub), seed %d", typeName(p.hub), typeName(p.spoke), typeName(p.hub), seed)
	in := fresh(p.hub)
	if err := p.o.fill(in, seed); err != nil {
		t.Errorf("conversion %s: %v", way, err)
		return false
	}
	want := in.DeepCopyObject()
	s := fresh(p.spoke)
	if err := safely(func() error { return s.ConvertFrom(in) }); err != nil {
		t.Errorf("conversion %s: ConvertFrom: %v", way, err)
		return false
	}
	got := fresh(p.hub)
	if err := safely(func() error { return s.ConvertTo(got) }); err != nil {
		t.Errorf("conversion %s: ConvertTo: %v", way, err)
		return false
	}
	return p.compare(t, way, seed, want, got)
}

// compare reports a difference between an object and its round trip.
func (p pair) compare(t bosuntest.TB, way string, seed int64, want, got runtime.Object) bool {
	t.Helper()
	diff, err := safeDiff(want, got, p.opts)
	if err != nil {
		t.Errorf("conversion %s: compare: %v (add CmpOptions for the type)", way, err)
		return false
	}
	if diff == "" {
		return true
	}
	t.Errorf("conversion %s: the round trip changed the object (-want +got):\n%s"+
		"reproduce with conversion.Options{Seed: %d, Iterations: 1}", way, diff, seed)
	return false
}

// safeDiff is cmp.Diff, with its panic (an unexported field, say) turned
// into an error.
func safeDiff(want, got runtime.Object, opts []cmp.Option) (diff string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return cmp.Diff(want, got, opts...), nil
}

// safely runs a conversion, with a panic turned into an error.
func safely(convert func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return convert()
}

// fill fills obj with the random values of seed, TypeMeta left empty.
func (o Options) fill(obj runtime.Object, seed int64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("fill: %v (give Options.Funcs a fill function for the type)", r)
		}
	}()
	f := randfill.NewWithSeed(seed).Funcs(fillObjectMeta)
	if len(o.Funcs) > 0 {
		f.Funcs(o.Funcs...)
	}
	f.Fill(obj)
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	return nil
}

// checkPrototype tells why obj cannot name the type of a kind's version.
func checkPrototype(obj runtime.Object) error {
	if obj == nil {
		return fmt.Errorf("nil")
	}
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Type().Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%T is not a pointer to a struct", obj)
	}
	if v.IsNil() {
		return fmt.Errorf("nil %T", obj)
	}
	if c := obj.DeepCopyObject(); reflect.TypeOf(c) != v.Type() {
		return fmt.Errorf("%T.DeepCopyObject returns a %T", obj, c)
	}
	return nil
}

// fresh returns a new zero object of the type of prototype.
func fresh[T runtime.Object](prototype T) T {
	return reflect.New(reflect.TypeOf(prototype).Elem()).Interface().(T)
}

// typeName names the type of obj as its package and type, "v1.Widget".
func typeName(obj any) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", obj), "*")
}
