package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/managed/changelog"
)

// DatabaseSpec is the desired state of a PostgreSQL database. The
// database's name in PostgreSQL is made of the object's namespace and name
// (see the operator's package documentation), unless the annotation
// bosun.dev/external-name names an existing database to adopt.
type DatabaseSpec struct {
	// Owner names the Role, in the Database's namespace, that owns the
	// database: the database is owned by the PostgreSQL role that Role
	// stands for. The database is created once that Role is Ready.
	//
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Owner string `json:"owner"`
	// Encoding is the database's character encoding. It is fixed at
	// creation.
	//
	// +optional
	// +kubebuilder:default=UTF8
	Encoding string `json:"encoding,omitempty"`
	// Strategy is how PostgreSQL 15 and later copy the template into the
	// new database: WAL_LOG (the server's default) writes every block to
	// the write-ahead log, FILE_COPY copies the files and checkpoints,
	// which is faster for a small template on a server that does not
	// replicate. Empty leaves the choice to the server. It is fixed at
	// creation.
	//
	// +optional
	// +kubebuilder:validation:Enum=WAL_LOG;FILE_COPY
	Strategy string `json:"strategy,omitempty"`
}

// DatabaseObservation is the database as PostgreSQL reports it in
// pg_database.
type DatabaseObservation struct {
	// OID is the database's object identifier.
	OID int64 `json:"oid"`
	// Owner is the role that owns the database.
	Owner string `json:"owner"`
	// Encoding is the database's character encoding.
	Encoding string `json:"encoding"`
	// Size is the disk space the database takes, rounded down to two
	// significant digits in binary units ("7.4Mi", "12Gi") or to whole
	// units from 100 on ("512Mi"), so that it changes, and costs a write
	// of the status, only when the size changes by about one percent or
	// more, not at every poll of a database in use.
	Size string `json:"size"`
}

// DatabaseStatus is the observed state of a Database.
type DatabaseStatus struct {
	// AtProvider is the database as the operator last observed it in
	// PostgreSQL, under every management policy; unset while there is
	// none.
	//
	// +optional
	AtProvider *DatabaseObservation `json:"atProvider,omitempty"`
	// Changes are the operator's last operations on the database in
	// PostgreSQL (create, update, delete, new password), oldest first.
	//
	// +optional
	Changes []changelog.Entry `json:"changes,omitempty"`
	// ObservedGeneration is the metadata.generation the status describes.
	//
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// OwnerRole is the PostgreSQL role that owns the database: the one
	// the Role spec.owner names stands for, as last resolved.
	//
	// +optional
	OwnerRole string `json:"ownerRole,omitempty"`
	// Conditions are the latest observations of the Database: Synced,
	// Available, and Ready, which summarises them.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// Database asks the postgres operator for a database in PostgreSQL.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=pgdb,categories=bosun
// +kubebuilder:printcolumn:name="Owner",type=string,JSONPath=`.spec.owner`
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=`.status.ownerRole`,priority=1
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Database struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	//
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired state.
	Spec DatabaseSpec `json:"spec"`
	// Status is the observed state, written by the operator.
	//
	// +optional
	Status DatabaseStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions, for the bosun engine.
func (d *Database) GetConditions() []metav1.Condition { return d.Status.Conditions }

// SetConditions replaces the status conditions, for the bosun engine.
func (d *Database) SetConditions(c []metav1.Condition) { d.Status.Conditions = c }

// GetChangeLog returns the change log, for the managed step.
func (d *Database) GetChangeLog() []changelog.Entry { return d.Status.Changes }

// SetChangeLog replaces the change log, for the managed step.
func (d *Database) SetChangeLog(l []changelog.Entry) { d.Status.Changes = l }

// DatabaseList is a list of Databases.
//
// +kubebuilder:object:root=true
type DatabaseList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	//
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Databases.
	Items []Database `json:"items"`
}
