package operator_test

import (
	"flag"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/bosunkit/bosun/operator"
)

func TestFlagsParse(t *testing.T) {
	cases := map[string]struct {
		args    []string
		check   func(operator.Flags) (got, want any)
		invalid bool
	}{
		"defaults are kubebuilder's": {
			check: func(f operator.Flags) (any, any) {
				return []any{f.MetricsAddr, f.SecureMetrics, f.ProbeAddr, f.LeaderElect, f.EnableHTTP2, f.GracefulShutdownTimeout},
					[]any{"0", true, ":8081", false, false, 30 * time.Second}
			},
		},
		"leader election": {
			args: []string{"--leader-elect", "--leader-election-id=shop-lock", "--leader-election-namespace=ops", "--leader-election-lease-duration=20s"},
			check: func(f operator.Flags) (any, any) {
				o := f.ManagerOptions("shop")
				return []any{o.LeaderElection, o.LeaderElectionID, o.LeaderElectionNamespace, *o.LeaseDuration, o.LeaderElectionReleaseOnCancel},
					[]any{true, "shop-lock", "ops", 20 * time.Second, true}
			},
		},
		"default lease name": {
			args:  []string{"--leader-elect"},
			check: func(f operator.Flags) (any, any) { return f.ManagerOptions("shop").LeaderElectionID, "shop.bosun.dev" },
		},
		"metrics and probes": {
			args: []string{"--metrics-bind-address=:8443", "--health-probe-bind-address=:9090", "--graceful-shutdown-timeout=5s"},
			check: func(f operator.Flags) (any, any) {
				o := f.ManagerOptions("shop")
				return []any{o.Metrics.BindAddress, o.Metrics.SecureServing, o.Metrics.FilterProvider != nil, o.HealthProbeBindAddress, *o.GracefulShutdownTimeout},
					[]any{":8443", true, true, ":9090", 5 * time.Second}
			},
		},
		"plain metrics": {
			args: []string{"--metrics-bind-address=:8080", "--metrics-secure=false"},
			check: func(f operator.Flags) (any, any) {
				o := f.ManagerOptions("shop")
				return []any{o.Metrics.SecureServing, o.Metrics.FilterProvider == nil}, []any{false, true}
			},
		},
		"dev runs workloads by default": {
			args:  []string{"--dev"},
			check: func(f operator.Flags) (any, any) { return []any{f.Dev, f.DevWorkloads}, []any{true, true} },
		},
		"dev without workloads": {
			args:  []string{"--dev", "--dev-workloads=false"},
			check: func(f operator.Flags) (any, any) { return f.DevWorkloads, false },
		},
		"zap flags": {
			args:  []string{"--zap-devel"},
			check: func(f operator.Flags) (any, any) { return f.Zap.Development, true },
		},
		"renew deadline not below the lease": {
			args:    []string{"--leader-election-lease-duration=5s", "--leader-election-renew-deadline=5s"},
			invalid: true,
		},
		"retry period not below the renew deadline": {
			args:    []string{"--leader-election-renew-deadline=2s", "--leader-election-retry-period=2s"},
			invalid: true,
		},
		"negative shutdown timeout": {
			args:    []string{"--graceful-shutdown-timeout=-1s"},
			invalid: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := operator.DefaultFlags()
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			f.Bind(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := f.Validate()
			if tc.invalid {
				if err == nil {
					t.Fatalf("Validate() = nil; want an error")
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate() = %v", err)
			}
			got, want := tc.check(f)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
