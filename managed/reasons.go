package managed

import "github.com/bosunkit/bosun/conditions"

// The condition reasons and event reasons of the step; the table in the
// package documentation lists their values.
// Condition reasons the step writes.
const (
	// reasonAvailable: the external resource is ready for use.
	reasonAvailable = "Available"
	// reasonCreating: the external resource is being created, or was
	// created and is not ready yet.
	reasonCreating = "Creating"
	// reasonDeleting: the external resource is being deleted.
	reasonDeleting = "Deleting"
	// reasonUpdating: the step is bringing the external resource in line
	// with the spec (a spec change, or drift), and has not yet observed it
	// up to date. It is a reason of Synced (False); Available keeps
	// reporting whether the resource is usable meanwhile.
	reasonUpdating = "Updating"
	// reasonUnavailable: the external resource exists and was ready, and is
	// not ready now; or it is missing and may not be created.
	reasonUnavailable = "Unavailable"
	// reasonWaitingForFinalizers: the object is being deleted, its
	// deletion order is DeletionOrderLast, and other finalizers still hold
	// it: the step deletes the external resource once they are gone.
	reasonWaitingForFinalizers = "WaitingForFinalizers"
	// reasonReconcileSuccess: the last pass did what was needed.
	reasonReconcileSuccess = "ReconcileSuccess"
	// reasonCreateIncomplete: a create was started and its outcome was never
	// recorded, and the step cannot find out what it made. A human must
	// check the external system.
	reasonCreateIncomplete = "CreateIncomplete"
	// reasonExternalNotFound: the external resource does not exist and the
	// management policies do not allow creating it.
	reasonExternalNotFound = "ExternalNotFound"
	// reasonInvalidSpec: the spec cannot be turned into an external
	// resource. Clients report it with InvalidSpec.
	reasonInvalidSpec = "InvalidSpec"
	// reasonInvalidPolicy: a management or deletion policy annotation holds
	// a value the step does not know.
	// The value is conditions.ReasonInvalidPolicy, the engine's for the
	// reconcile policy.
	reasonInvalidPolicy = conditions.ReasonInvalidPolicy
	// reasonConnectFailed: the Connector failed with an error that carries
	// no reason of its own.
	reasonConnectFailed = "ConnectFailed"
	// reasonObserveFailed: Observe failed with an error that carries no
	// reason of its own.
	reasonObserveFailed = "ObserveFailed"
	// reasonCreateFailed: Create failed with an error that carries no
	// reason of its own.
	reasonCreateFailed = "CreateFailed"
	// reasonUpdateFailed: Update failed with an error that carries no
	// reason of its own.
	reasonUpdateFailed = "UpdateFailed"
	// reasonDeleteFailed: Delete failed with an error that carries no
	// reason of its own.
	reasonDeleteFailed = "DeleteFailed"
	// reasonRecordFailed: the outcome of a Create could not be written to
	// the object.
	reasonRecordFailed = "RecordCreateFailed"
	// reasonConnectionSecretFailed: the connection Secret could not be
	// written, or belongs to something else.
	reasonConnectionSecretFailed = "ConnectionSecretFailed"
	// reasonExternalConflict: a resource exists under the external name
	// and is not this object's: it carries another object's owner mark, or
	// no mark and the step neither created it nor was asked to adopt it.
	// The step leaves it alone.
	reasonExternalConflict = "ExternalResourceConflict"
	// reasonCredentialsMissing: the connection Secret lacks credentials
	// that only Create and RepairCredentials return, so the resource is not
	// usable yet.
	reasonCredentialsMissing = "CredentialsMissing"
	// reasonCredentialRepairFailed: RepairCredentials failed with an error
	// that carries no reason of its own.
	reasonCredentialRepairFailed = "CredentialRepairFailed"
	// reasonPollFailed: OperationPoller.PollOperation failed with an error
	// that carries no reason of its own.
	reasonPollFailed = "PollOperationFailed"
)

// ReasonAdoptionNotGranted is the reason of Synced (and so Ready) False
// when a resource exists under the external name that carries no owner
// mark and that the step did not create, and adoption is not granted to
// the object (AnnotationAdoptExternal on its Namespace, or
// WithAdoptionGranted). The step leaves the resource alone: it neither
// changes, deletes nor reports it, and looks again at the poll interval,
// so a grant takes effect within one.
const ReasonAdoptionNotGranted = "AdoptionNotGranted"

// Event reasons the step records.
const (
	// eventCreated: the step created the external resource.
	eventCreated = "CreatedExternalResource"
	// eventUpdated: the step updated the external resource; the note holds
	// the Observation's Diff.
	eventUpdated = "UpdatedExternalResource"
	// eventDeleting: the step asked for the external resource's deletion.
	eventDeleting = "DeletingExternalResource"
	// eventLeftInPlace: the object was deleted and its external name
	// names a resource that is not the object's, which the step left in
	// place.
	eventLeftInPlace = "LeftExternalResource"
	// eventCredentialsRepaired: the connection Secret lacked credentials
	// and the step had the ExternalClient set new ones.
	eventCredentialsRepaired = "RepairedCredentials"
)

// InvalidSpec marks err as caused by the object's spec: the step reports it
// in Synced (and Ready) with reason "InvalidSpec" and does not retry until
// the object changes.
func InvalidSpec(err error) error { return conditions.Terminal(reasonInvalidSpec, err) }
