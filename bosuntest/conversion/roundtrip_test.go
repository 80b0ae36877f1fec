package conversion_test

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	ctrlconversion "sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/randfill"

	"github.com/bosunkit/bosun/bosuntest"
	"github.com/bosunkit/bosun/bosuntest/conversion"
	testapi "github.com/bosunkit/bosun/internal/testapi/versioned"
	v1 "github.com/bosunkit/bosun/internal/testapi/versioned/v1"
	v2 "github.com/bosunkit/bosun/internal/testapi/versioned/v2"
)

// dropsColor is a v1 Gadget whose ConvertTo forgets to keep Color, the
// field the hub lacks.
type dropsColor struct{ v1.Gadget }

func (d *dropsColor) ConvertTo(dst ctrlconversion.Hub) error {
	if err := d.Gadget.ConvertTo(dst); err != nil {
		return err
	}
	delete(dst.(*v2.Gadget).Annotations, testapi.ColorAnnotation)
	return nil
}

func (d *dropsColor) DeepCopyObject() k8sruntime.Object {
	g := &d.Gadget
	return &dropsColor{*g.DeepCopy()}
}

// dropsSchedule is a v1 Gadget whose ConvertFrom forgets to keep Schedule,
// the field v1 lacks.
type dropsSchedule struct{ v1.Gadget }

func (d *dropsSchedule) ConvertFrom(src ctrlconversion.Hub) error {
	if err := d.Gadget.ConvertFrom(src); err != nil {
		return err
	}
	delete(d.Annotations, testapi.ScheduleAnnotation)
	return nil
}

func (d *dropsSchedule) DeepCopyObject() k8sruntime.Object {
	g := &d.Gadget
	return &dropsSchedule{*g.DeepCopy()}
}

// refuses is a v1 Gadget whose ConvertTo fails.
type refuses struct{ v1.Gadget }

func (*refuses) ConvertTo(ctrlconversion.Hub) error { return errors.New("no way") }

func (d *refuses) DeepCopyObject() k8sruntime.Object { g := &d.Gadget; return &refuses{*g.DeepCopy()} }

// panics is a v1 Gadget whose ConvertFrom panics.
type panics struct{ v1.Gadget }

func (*panics) ConvertFrom(ctrlconversion.Hub) error { panic("oops") }

func (d *panics) DeepCopyObject() k8sruntime.Object { g := &d.Gadget; return &panics{*g.DeepCopy()} }

// recorder is a TB that keeps what RoundTrip reports.
type recorder struct {
	bosuntest.TB
	errs  []string
	fatal bool
}

func (*recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
	runtime.Goexit()
}

// record runs f with a recorder in a goroutine of its own, so that Fatalf
// can end it as it ends a test.
func record(t *testing.T, f func(tb bosuntest.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

var seedRE = regexp.MustCompile(`seed (-?\d+)`)

// TestRoundTrip checks that RoundTrip passes a conversion that keeps
// everything and reports each way a conversion can go wrong, naming the
// direction and the seed.
func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  conversion.Options
		hub   ctrlconversion.Hub
		spoke ctrlconversion.Convertible
		want  []string // one substring per expected report, in order
	}{{
		name:  "correct conversion",
		opts:  conversion.Options{Iterations: 500},
		hub:   &v2.Gadget{},
		spoke: &v1.Gadget{},
	}, {
		name:  "spoke-only field dropped",
		hub:   &v2.Gadget{},
		spoke: &dropsColor{},
		want:  []string{"conversion conversion_test.dropsColor -> v2.Gadget (hub) -> conversion_test.dropsColor, seed "},
	}, {
		name:  "hub-only field dropped",
		hub:   &v2.Gadget{},
		spoke: &dropsSchedule{},
		want:  []string{"conversion v2.Gadget (hub) -> conversion_test.dropsSchedule -> v2.Gadget (hub), seed "},
	}, {
		name:  "conversion error",
		hub:   &v2.Gadget{},
		spoke: &refuses{},
		want:  []string{"(hub) -> conversion_test.refuses, seed 7: ConvertTo: no way", "-> v2.Gadget (hub), seed 7: ConvertTo: no way"},
		opts:  conversion.Options{Seed: 7},
	}, {
		name:  "conversion panic",
		hub:   &v2.Gadget{},
		spoke: &panics{},
		want:  []string{"ConvertFrom: panic: oops", "ConvertFrom: panic: oops"},
	}, {
		name:  "ignored field may be dropped",
		opts:  conversion.Options{CmpOptions: []cmp.Option{cmpopts.IgnoreFields(v1.GadgetSpec{}, "Color")}},
		hub:   &v2.Gadget{},
		spoke: &dropsColor{},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			rec := record(t, func(tb bosuntest.TB) { tc.opts.RoundTrip(tb, tc.hub, tc.spoke) })
			if rec.fatal {
				t.Fatalf("RoundTrip failed fatally: %q", rec.errs)
			}
			if len(rec.errs) != len(tc.want) {
				t.Fatalf("RoundTrip reported %d failures, want %d:\n%s", len(rec.errs), len(tc.want), strings.Join(rec.errs, "\n"))
			}
			for i, want := range tc.want {
				if !strings.Contains(rec.errs[i], want) {
					t.Errorf("report %d = %q, want it to contain %q", i, rec.errs[i], want)
				}
				if !seedRE.MatchString(rec.errs[i]) {
					t.Errorf("report %d = %q names no seed", i, rec.errs[i])
				}
			}
		})
	}
}

// TestRoundTripDiffNamesTheField checks that a report shows what the round
// trip lost.
func TestRoundTripDiffNamesTheField(t *testing.T) {
	rec := record(t, func(tb bosuntest.TB) { conversion.RoundTrip(tb, &v2.Gadget{}, &dropsSchedule{}) })
	if len(rec.errs) != 1 {
		t.Fatalf("RoundTrip reported %d failures, want 1: %q", len(rec.errs), rec.errs)
	}
	for _, want := range []string{"(-want +got)", "Schedule", "reproduce with conversion.Options{Seed: "} {
		if !strings.Contains(rec.errs[0], want) {
			t.Errorf("report %q does not contain %q", rec.errs[0], want)
		}
	}
}

// TestRoundTripSeedReproduces checks that the seed a failure names, from a
// run seeded by the clock, makes the same failure again in one iteration.
func TestRoundTripSeedReproduces(t *testing.T) {
	for _, spoke := range []ctrlconversion.Convertible{&dropsColor{}, &dropsSchedule{}} {
		first := record(t, func(tb bosuntest.TB) { conversion.RoundTrip(tb, &v2.Gadget{}, spoke) })
		if len(first.errs) != 1 {
			t.Fatalf("RoundTrip reported %d failures, want 1: %q", len(first.errs), first.errs)
		}
		m := seedRE.FindStringSubmatch(first.errs[0])
		if m == nil {
			t.Fatalf("report %q names no seed", first.errs[0])
		}
		seed, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		again := record(t, func(tb bosuntest.TB) {
			conversion.Options{Seed: seed, Iterations: 1}.RoundTrip(tb, &v2.Gadget{}, spoke)
		})
		if diff := cmp.Diff(first.errs, again.errs); diff != "" {
			t.Errorf("seed %d: reports differ (-first +again):\n%s", seed, diff)
		}
	}
}

// TestRoundTripFuncs checks that fill functions replace the package's own:
// with every Color empty, dropping it goes unnoticed.
func TestRoundTripFuncs(t *testing.T) {
	noColor := func(s *v1.GadgetSpec, c randfill.Continue) {
		c.FillNoCustom(s)
		s.Color = ""
	}
	rec := record(t, func(tb bosuntest.TB) {
		conversion.Options{Funcs: []any{noColor}}.RoundTrip(tb, &v2.Gadget{}, &dropsColor{})
	})
	if len(rec.errs) != 0 {
		t.Errorf("RoundTrip reported %q, want nothing", rec.errs)
	}
}

// TestRoundTripRefusesBadInput checks that RoundTrip stops the test at
// once when it is not given a hub and a spoke to convert.
func TestRoundTripRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hub    ctrlconversion.Hub
		spokes []ctrlconversion.Convertible
		want   string
	}{
		{"nil hub", nil, []ctrlconversion.Convertible{&v1.Gadget{}}, "conversion.RoundTrip: hub: nil"},
		{"no spokes", &v2.Gadget{}, nil, "conversion.RoundTrip: no spokes for hub v2.Gadget"},
		{"nil spoke", &v2.Gadget{}, []ctrlconversion.Convertible{(*v1.Gadget)(nil)}, "conversion.RoundTrip: spoke 0: nil *v1.Gadget"},
		{"wrong deep copy", &v2.Gadget{}, []ctrlconversion.Convertible{&badCopy{}}, "DeepCopyObject returns a *v1.Gadget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := record(t, func(tb bosuntest.TB) { conversion.RoundTrip(tb, tc.hub, tc.spokes...) })
			if !rec.fatal || len(rec.errs) != 1 || !strings.Contains(rec.errs[0], tc.want) {
				t.Errorf("fatal %v, reports %q; want one fatal report containing %q", rec.fatal, rec.errs, tc.want)
			}
		})
	}
}

// badCopy is a spoke whose DeepCopyObject returns another type, the
// embedded one's.
type badCopy struct{ v1.Gadget }
