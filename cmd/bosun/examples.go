package main

import (
	"context"
	"fmt"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bosunkit/bosun/cmd/bosun/internal/demo"
	"github.com/bosunkit/bosun/examples/cronjob"
	"github.com/bosunkit/bosun/examples/hello"
	"github.com/bosunkit/bosun/examples/memcached"
	"github.com/bosunkit/bosun/examples/postgres"
	"github.com/bosunkit/bosun/examples/postgres/pgserver"
	"github.com/bosunkit/bosun/examples/rwexternal"
	"github.com/bosunkit/bosun/examples/simple"
	"github.com/bosunkit/bosun/examples/site"
	"github.com/bosunkit/bosun/examples/trust"
	trustwebhook "github.com/bosunkit/bosun/examples/trust/config/webhook"
)

// examples lists the example operators that `bosun demo` runs.
func examples() []demo.Example {
	return []demo.Example{
		{
			Name:        "hello",
			AddToScheme: hello.AddToScheme,
			CRDs:        hello.CRDs,
			Setup:       hello.SetupWithManager,
			Samples:     hello.Samples,
			Children:    []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")},
		},
		{
			Name:        "simple",
			AddToScheme: simple.AddToScheme,
			CRDs:        simple.CRDs,
			Setup:       simple.SetupWithManager,
			Samples:     simple.Samples,
		},
		{
			Name:        "rwexternal",
			AddToScheme: rwexternal.AddToScheme,
			CRDs:        rwexternal.CRDs,
			Setup:       rwexternal.SetupWithManager,
			Prepare:     rwexternal.PrepareSamples,
			Samples:     rwexternal.Samples,
			Children:    []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("Secret")},
		},
		{
			Name:        "cronjob",
			AddToScheme: cronjob.AddToScheme,
			CRDs:        cronjob.CRDs,
			Webhooks:    cronjob.Webhooks,
			Setup: func(mgr ctrl.Manager) error {
				if err := cronjob.SetupWithManager(mgr, cronjob.Options{}); err != nil {
					return err
				}
				return cronjob.SetupWebhookWithManager(mgr)
			},
			Samples:  cronjob.Samples,
			Children: []schema.GroupVersionKind{batchv1.SchemeGroupVersion.WithKind("Job")},
		},
		{
			Name:        "site",
			AddToScheme: site.AddToScheme,
			CRDs:        site.CRDs,
			Setup:       site.SetupWithManager,
			Prepare:     site.PrepareSamples,
			Samples:     site.Samples,
			Children: []schema.GroupVersionKind{
				corev1.SchemeGroupVersion.WithKind("ConfigMap"),
				corev1.SchemeGroupVersion.WithKind("Service"),
			},
		},
		{
			Name:        "memcached",
			AddToScheme: memcached.AddToScheme,
			CRDs:        memcached.CRDs,
			Setup:       memcached.SetupWithManager,
			Samples:     memcached.Samples,
			Children: []schema.GroupVersionKind{
				appsv1.SchemeGroupVersion.WithKind("Deployment"),
				corev1.SchemeGroupVersion.WithKind("Service"),
			},
		},
		postgresExample(),
		{
			Name:        "trust",
			AddToScheme: trust.AddToScheme,
			CRDs:        trust.CRDs,
			Webhooks:    trustwebhook.Configurations,
			Setup: func(mgr ctrl.Manager) error {
				if err := trust.SetupWithManager(mgr, trust.Options{TrustNamespace: demoTrustNamespace}); err != nil {
					return err
				}
				return trust.SetupWebhookWithManager(mgr)
			},
			Prepare: func(ctx context.Context, c client.Client, _ string) error {
				return trust.PrepareSamples(ctx, c, demoTrustNamespace)
			},
			Samples:  trust.Samples,
			Children: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")},
		},
	}
}

// demoTrustNamespace is the trust namespace of the trust example in the
// demo: trust-manager's default.
const demoTrustNamespace = "cert-manager"

// postgresExample is the PostgreSQL operator, run against a throwaway
// server that the demo starts from Debian's packages and stops at the end.
func postgresExample() demo.Example {
	var srv *pgserver.Server
	return demo.Example{
		Name:        "postgres",
		AddToScheme: postgres.AddToScheme,
		CRDs:        postgres.CRDs,
		Start: func(ctx context.Context, out io.Writer) (func() error, error) {
			fmt.Fprintln(out, "starting postgresql")
			s, err := pgserver.Start(ctx, pgserver.Options{})
			if err != nil {
				return nil, err
			}
			srv = s
			fmt.Fprintf(out, "postgresql ready at %s:%d (%s)\n", s.Host, s.Port, s.Version)
			return func() error {
				fmt.Fprintln(out, "stopping postgresql")
				return s.Stop()
			}, nil
		},
		Setup: func(mgr ctrl.Manager) error {
			return postgres.SetupWithManager(mgr, postgres.Options{DSN: srv.DSN("postgres")})
		},
		Samples:  postgres.Samples,
		Children: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("Secret")},
	}
}
