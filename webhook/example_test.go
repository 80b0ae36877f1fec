package webhook_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bosunkit/bosun/internal/testapi"
	"github.com/bosunkit/bosun/webhook"
)

// The webhooks of a kind: a default and a rule that CEL cannot say as
// plainly (the old divisor matters). SetupWithManager serves them; here
// Validate is called directly to show what a refused object reports.
func ExampleKind() {
	hooks := &webhook.Kind[*testapi.Widget]{
		Default: func(_ context.Context, w *testapi.Widget) error {
			if w.Spec.Mode == "" {
				w.Spec.Mode = "fast"
			}
			return nil
		},
		Validate: func(_ context.Context, old, w *testapi.Widget) (webhook.Warnings, field.ErrorList) {
			if old != nil && old.Spec.Divisor != 0 && w.Spec.Divisor == 0 {
				return nil, field.ErrorList{field.Forbidden(field.NewPath("spec", "divisor"), "may not go back to zero once set")}
			}
			return nil, nil
		},
	}
	setup := func(mgr ctrl.Manager) error { return hooks.SetupWithManager(mgr) }
	_ = setup // in operator.Options.Setup, with the reconcilers

	old := &testapi.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w"}, Spec: testapi.WidgetSpec{Divisor: 3}}
	_, errs := hooks.Validate(context.Background(), old, &testapi.Widget{ObjectMeta: old.ObjectMeta})
	fmt.Println(errs.ToAggregate())
	// Output:
	// spec.divisor: Forbidden: may not go back to zero once set
}
