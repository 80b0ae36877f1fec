package managed

import "github.com/bosunkit/bosun/conditions"

// The condition reasons and event reasons of the step, each named Reason
// followed by the word it holds; the table in the package documentation
// lists them. The step also gives conditions.ReasonInvalidPolicy, the
// engine's, for a management or deletion policy annotation that holds a
// value the step does not know.

// Condition reasons the step writes.
const (
	// ReasonAvailable is the reason of Available=True: the external
	// resource is ready for use.
	ReasonAvailable conditions.Reason = "Available"
	// ReasonCreating is the reason of Available=False while the external
	// resource is being created, or was created and is not ready yet.
	ReasonCreating conditions.Reason = "Creating"
	// ReasonDeleting is the reason of Available=False while the external
	// resource is being deleted.
	ReasonDeleting conditions.Reason = "Deleting"
	// ReasonUpdating is the reason of Synced=False while the step is
	// bringing the external resource in line with the spec (a spec change,
	// or drift), and has not yet observed it up to date. Available keeps
	// reporting whether the resource is usable meanwhile.
	ReasonUpdating conditions.Reason = "Updating"
	// ReasonUnavailable is the reason of Available=False when the external
	// resource exists and was ready, and is not ready now; or it is
	// missing and may not be created.
	ReasonUnavailable conditions.Reason = "Unavailable"
	// ReasonWaitingForFinalizers is the reason of Synced=False when the
	// object is being deleted, its deletion order is DeletionOrderLast, and
	// other finalizers still hold it: the step deletes the external
	// resource once they are gone.
	ReasonWaitingForFinalizers conditions.Reason = "WaitingForFinalizers"
	// ReasonReconcileSuccess is the reason of Synced=True: the last pass
	// did what was needed.
	ReasonReconcileSuccess conditions.Reason = "ReconcileSuccess"
	// ReasonCreateIncomplete is the reason of Synced=False when a create
	// was started and its outcome was never recorded, and the step cannot
	// find out what it made. A human must check the external system.
	ReasonCreateIncomplete conditions.Reason = "CreateIncomplete"
	// ReasonExternalNotFound is the reason of Synced=False (and
	// Available=False) when the external resource does not exist and the
	// management policies do not allow creating it.
	ReasonExternalNotFound conditions.Reason = "ExternalNotFound"
	// ReasonInvalidSpec is the reason of Synced=False when the spec cannot
	// be turned into an external resource. Clients report it with
	// InvalidSpec.
	ReasonInvalidSpec conditions.Reason = "InvalidSpec"
	// ReasonConnectFailed is the reason of Synced=False when the Connector
	// failed with an error that carries no reason of its own.
	ReasonConnectFailed conditions.Reason = "ConnectFailed"
	// ReasonObserveFailed is the reason of Synced=False when Observe failed
	// with an error that carries no reason of its own.
	ReasonObserveFailed conditions.Reason = "ObserveFailed"
	// ReasonCreateFailed is the reason of Synced=False when Create failed
	// with an error that carries no reason of its own.
	ReasonCreateFailed conditions.Reason = "CreateFailed"
	// ReasonUpdateFailed is the reason of Synced=False when Update failed
	// with an error that carries no reason of its own.
	ReasonUpdateFailed conditions.Reason = "UpdateFailed"
	// ReasonDeleteFailed is the reason of Synced=False when Delete failed
	// with an error that carries no reason of its own.
	ReasonDeleteFailed conditions.Reason = "DeleteFailed"
	// ReasonRecordCreateFailed is the reason of Synced=False when the
	// outcome of a Create could not be written to the object.
	ReasonRecordCreateFailed conditions.Reason = "RecordCreateFailed"
	// ReasonConnectionSecretFailed is the reason of Synced=False when the
	// connection Secret could not be written, or belongs to something
	// else.
	ReasonConnectionSecretFailed conditions.Reason = "ConnectionSecretFailed"
	// ReasonExternalResourceConflict is the reason of Synced=False when a
	// resource exists under the external name and is not this object's: it
	// carries another object's owner mark, or no mark and the step neither
	// created it nor was asked to adopt it. The step leaves it alone.
	ReasonExternalResourceConflict conditions.Reason = "ExternalResourceConflict"
	// ReasonCredentialsMissing is the reason of Available=False when the
	// connection Secret lacks credentials that only Create and
	// RepairCredentials return, so the resource is not usable yet.
	ReasonCredentialsMissing conditions.Reason = "CredentialsMissing"
	// ReasonCredentialRepairFailed is the reason of Synced=False when
	// RepairCredentials failed with an error that carries no reason of its
	// own.
	ReasonCredentialRepairFailed conditions.Reason = "CredentialRepairFailed"
	// ReasonPollOperationFailed is the reason of Synced=False when
	// OperationPoller.PollOperation failed with an error that carries no
	// reason of its own.
	ReasonPollOperationFailed conditions.Reason = "PollOperationFailed"
	// ReasonAdoptionNotGranted is the reason of Synced (and so Ready) False
	// when a resource exists under the external name that carries no owner
	// mark and that the step did not create, and adoption is not granted
	// to the object (AnnotationAdoptExternal on its Namespace, or
	// WithAdoptionGranted). The step leaves the resource alone: it neither
	// changes, deletes nor reports it, and looks again at the poll
	// interval, so a grant takes effect within one.
	ReasonAdoptionNotGranted conditions.Reason = "AdoptionNotGranted"
)

// Reasons of the events the step records, all Normal but
// ReasonLeftExternalResource.
const (
	// ReasonCreatedExternalResource is the reason of the event the step
	// records when it created the external resource.
	ReasonCreatedExternalResource conditions.Reason = "CreatedExternalResource"
	// ReasonUpdatedExternalResource is the reason of the event the step
	// records when it updated the external resource; the note holds the
	// Observation's Diff.
	ReasonUpdatedExternalResource conditions.Reason = "UpdatedExternalResource"
	// ReasonDeletingExternalResource is the reason of the event the step
	// records when it asked for the external resource's deletion.
	ReasonDeletingExternalResource conditions.Reason = "DeletingExternalResource"
	// ReasonLeftExternalResource is the reason of the Warning event the
	// step records when the object was deleted and its external name
	// names a resource that is not the object's, which the step left in
	// place.
	ReasonLeftExternalResource conditions.Reason = "LeftExternalResource"
	// ReasonRepairedCredentials is the reason of the event the step
	// records when the connection Secret lacked credentials and the step
	// had the ExternalClient set new ones.
	ReasonRepairedCredentials conditions.Reason = "RepairedCredentials"
)

// InvalidSpec marks err as caused by the object's spec: the step reports it
// in Synced (and Ready) with reason "InvalidSpec" and does not retry until
// the object changes.
func InvalidSpec(err error) error { return conditions.Terminal(ReasonInvalidSpec, err) }
