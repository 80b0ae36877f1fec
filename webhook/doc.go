// Package webhook serves the admission and conversion webhooks of a kind,
// typed on the kind, from the manager's webhook server.
//
// A Kind[T] holds what a kind's webhooks do: Default fills in what a user
// left out, Validate refuses what is wrong with field errors, and, when T
// is the hub of several versions, conversion between them is served too.
// SetupWithManager registers them at the paths controller-gen's
// +kubebuilder:webhook markers name (/mutate-<group>-<version>-<kind> and
// /validate-...), so the generated configurations find them:
//
//	err := (&webhook.Kind[*v1.CronJob]{
//		Default:  defaultCronJob,
//		Validate: validateCronJob,
//	}).SetupWithManager(mgr)
//
// What it adds to controller-runtime's webhooks:
//
//   - Validate returns a field.ErrorList; the API server answers 422
//     Invalid with a message that names each field path and rule.
//   - A panic in Default, Validate or a conversion is recovered and
//     answered with a 500 naming the kind, the object and the webhook;
//     the server keeps serving.
//   - Objects being deleted are neither defaulted nor validated, so that a
//     finalizer can always be released; the markers bosun scaffolds also
//     tell the API server not to call the webhooks for them at all, so a
//     webhook that is down cannot wedge a deletion (see docs/WEBHOOKS.md).
//   - Conversion errors name the object and both versions, and the
//     request's dry-run flag is at hand through DryRun.
//
// Where a rule fits a CRD's x-kubernetes-validations (CEL), prefer it: it
// needs no server and no certificate. A webhook is for rules CEL cannot
// say: lookups, defaults that depend on other fields, or messages CEL
// cannot compose.
package webhook
