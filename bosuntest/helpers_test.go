package bosuntest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun/controlplane"
)

// fakeTB records what a helper reports. Its Fatalf ends the calling
// goroutine like testing.T's, so helpers must run in run.
type fakeTB struct {
	testing.TB
	ctx context.Context

	mu       sync.Mutex
	fatal    string
	errs     []string
	logs     []string
	cleanups []func()
}

func newFakeTB(ctx context.Context) *fakeTB { return &fakeTB{ctx: ctx} }

func (f *fakeTB) Helper()                  {}
func (f *fakeTB) Name() string             { return "TestFake" }
func (f *fakeTB) Context() context.Context { return f.ctx }

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.fatal = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Log(args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprint(args...))
}

func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

// run calls fn with f in a new goroutine, as the testing package runs a test,
// then runs the registered cleanups, and returns the Fatalf message, if any.
func (f *fakeTB) run(fn func(t testing.TB)) string {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fatal
}

func TestEventually(t *testing.T) {
	errNotYet := errors.New("not yet")
	tests := []struct {
		name      string
		succeedAt int // 0: never
		opts      []EventuallyOption
		wantFatal []string
		wantCalls int // 0: more than one, not counted exactly
	}{
		{name: "at once", succeedAt: 1, wantCalls: 1},
		{name: "after retries", succeedAt: 3, opts: []EventuallyOption{Interval(time.Millisecond)}, wantCalls: 3},
		{
			name:      "never",
			opts:      []EventuallyOption{Timeout(200 * time.Millisecond), Interval(10 * time.Millisecond)},
			wantFatal: []string{"condition not met after", "not yet"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			fake := newFakeTB(t.Context())
			fatal := fake.run(func(tb testing.TB) {
				Eventually(tb, func(ctx context.Context) error {
					calls++
					if _, ok := ctx.Deadline(); !ok {
						return errors.New("check context has no deadline")
					}
					if calls == tt.succeedAt {
						return nil
					}
					return errNotYet
				}, tt.opts...)
			})
			if len(tt.wantFatal) == 0 && fatal != "" {
				t.Fatalf("Eventually failed: %s", fatal)
			}
			for _, want := range tt.wantFatal {
				if !strings.Contains(fatal, want) {
					t.Errorf("failure %q does not contain %q", fatal, want)
				}
			}
			if tt.wantCalls != 0 && calls != tt.wantCalls {
				t.Errorf("check called %d times, want %d", calls, tt.wantCalls)
			}
			if tt.wantCalls == 0 && calls < 2 {
				t.Errorf("check called %d times, want retries", calls)
			}
		})
	}
}

func TestEventuallyStopsWithTheTest(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	fatal := newFakeTB(ctx).run(func(tb testing.TB) {
		Eventually(tb, func(context.Context) error { return errors.New("unreachable") })
	})
	if !strings.Contains(fatal, errNeverChecked.Error()) {
		t.Errorf("failure = %q, want it to say the condition was never checked", fatal)
	}
}

func TestNamePrefix(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{in: "TestFoo", want: "testfoo-"},
		{in: "TestFoo/sub_case#01", want: "testfoo-sub-case-01-"},
		{in: "Test__Weird//Name__", want: "test-weird-name-"},
		{in: "///", want: "test-"},
		{in: "TestÜber", want: "test-ber-"},
		{in: strings.Repeat("a", 70), want: strings.Repeat("a", maxPrefix) + "-"},
		{in: strings.Repeat("a", maxPrefix-1) + "/b", want: strings.Repeat("a", maxPrefix-1) + "-"},
	}
	for _, tt := range tests {
		if got := namePrefix(tt.in); got != tt.want {
			t.Errorf("namePrefix(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTestSinkDropsAfterClose(t *testing.T) {
	fake := newFakeTB(t.Context())
	s := &testSink{t: fake}
	s.Log("before")
	s.close()
	s.Log("after")
	if diff := cmp.Diff([]string{"before"}, fake.logs); diff != "" {
		t.Errorf("forwarded logs (-want +got):\n%s", diff)
	}
}

func TestRunManagerSetupError(t *testing.T) {
	// The manager is never started, so no API server is needed.
	cp := &controlplane.ControlPlane{
		Config: &rest.Config{Host: "https://127.0.0.1:1"},
		Scheme: controlplane.NewScheme(),
	}
	fake := newFakeTB(t.Context())
	fatal := fake.run(func(tb testing.TB) {
		RunManager(tb, cp, func(ctrl.Manager) error { return errors.New("no controllers today") })
		tb.Errorf("RunManager returned after a failed setup")
	})
	if !strings.Contains(fatal, "setting up manager: no controllers today") {
		t.Errorf("failure = %q, want the setup error", fatal)
	}
	if len(fake.errs) != 0 {
		t.Errorf("unexpected errors: %q", fake.errs)
	}
}

func TestSharedStartsOnFirstUseAndStopsAfterTheTests(t *testing.T) {
	var s Shared
	code := s.run(runnerFunc(func() int { return 0 }))
	if code != 0 || s.started {
		t.Fatalf("run without a test asking: status %d, started %v; want 0, false", code, s.started)
	}

	s = Shared{Options: func() (controlplane.Options, error) { return controlplane.Options{}, nil }}
	var cp *controlplane.ControlPlane
	code = s.run(runnerFunc(func() int {
		cp = s.ControlPlane(t)
		if again := s.ControlPlane(t); again != cp {
			t.Error("a second caller got another control plane")
		}
		if err := cp.Client.List(t.Context(), &corev1.NamespaceList{}); err != nil {
			t.Errorf("listing namespaces on the shared control plane: %v", err)
		}
		return 3
	}))
	if code != 3 {
		t.Errorf("run = %d, want the tests' status 3", code)
	}
	if err := cp.Client.List(t.Context(), &corev1.NamespaceList{}); err == nil {
		t.Error("the shared control plane still answers after the tests ended")
	}
}

func TestSharedOptionsError(t *testing.T) {
	s := Shared{Options: func() (controlplane.Options, error) { return controlplane.Options{}, errors.New("no scheme today") }}
	for range 2 {
		fake := newFakeTB(t.Context())
		fatal := fake.run(func(tb testing.TB) {
			s.ControlPlane(tb)
			tb.Errorf("ControlPlane returned after a failed start")
		})
		if !strings.Contains(fatal, "options: no scheme today") {
			t.Errorf("failure = %q, want the options error", fatal)
		}
	}
}

// runnerFunc adapts a function to runner.
type runnerFunc func() int

func (f runnerFunc) Run() int { return f() }

// TestEventuallyKeepsTheErrorOfACheckNotCutShort checks that when the
// timeout cuts a check short, the failure names the error of the check
// before it, which says why the condition was not met, rather than the
// deadline.
func TestEventuallyKeepsTheErrorOfACheckNotCutShort(t *testing.T) {
	fake := newFakeTB(t.Context())
	calls := 0
	fatal := fake.run(func(tb testing.TB) {
		Eventually(tb, func(ctx context.Context) error {
			calls++
			if calls == 1 {
				return errors.New("object still there")
			}
			<-ctx.Done()
			return fmt.Errorf("reading the object: %w", ctx.Err())
		}, Timeout(300*time.Millisecond), Interval(time.Millisecond))
	})
	if !strings.Contains(fatal, "object still there") || strings.Contains(fatal, "reading the object") {
		t.Errorf("failure %q, want the first check's error and not the one the timeout cut short", fatal)
	}
}

// ErrWatchUnsupported is the error of Watch through a client that cannot
// watch, for the external tests.
var ErrWatchUnsupported = errWatchUnsupported
