package main

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun/cmd/bosun/internal/demo"
	"github.com/bosunkit/bosun/examples/cronjob"
	"github.com/bosunkit/bosun/examples/hello"
	"github.com/bosunkit/bosun/examples/rwexternal"
	"github.com/bosunkit/bosun/examples/simple"
)

// examples lists the example operators that `bosun demo` runs.
func examples() []demo.Example {
	return []demo.Example{
		{
			Name:        "hello",
			AddToScheme: hello.AddToScheme,
			CRDs:        hello.CRDs,
			Setup: func(mgr ctrl.Manager) error {
				return (&hello.GreetingReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr)
			},
			Samples:  hello.Samples,
			Children: []schema.GroupVersionKind{corev1.SchemeGroupVersion.WithKind("ConfigMap")},
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
			Setup: func(mgr ctrl.Manager) error {
				return cronjob.SetupWithManager(mgr, cronjob.Options{})
			},
			Samples:  cronjob.Samples,
			Children: []schema.GroupVersionKind{batchv1.SchemeGroupVersion.WithKind("Job")},
		},
	}
}
