package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bosunkit/bosun/managed/changelog"
)

// RoleSpec is the desired state of a PostgreSQL role. The role's name in
// PostgreSQL is made of the object's namespace and name (see the
// operator's package documentation), unless the annotation
// bosun.dev/external-name names an existing role to adopt.
type RoleSpec struct {
	// Login lets the role log in (LOGIN); false makes it NOLOGIN.
	//
	// +optional
	Login bool `json:"login,omitempty"`
	// ConnectionLimit is the role's CONNECTION LIMIT; unset or -1 means no
	// limit.
	//
	// +optional
	// +kubebuilder:validation:Minimum=-1
	ConnectionLimit *int32 `json:"connectionLimit,omitempty"`
	// ConnectionSecretName names the Secret, in the Role's namespace, that
	// receives the role's username, password, host and port. Empty
	// publishes nothing. When the Secret lacks the password (it was
	// deleted, or an adopted role's password is unknown), the role gets a
	// new one.
	//
	// +optional
	ConnectionSecretName string `json:"connectionSecretName,omitempty"`
}

// RoleObservation is the role as PostgreSQL reports it in pg_roles.
type RoleObservation struct {
	// OID is the role's object identifier.
	OID int64 `json:"oid"`
	// Login tells whether the role may log in.
	Login bool `json:"login"`
	// ConnectionLimit is the role's connection limit, -1 for none.
	ConnectionLimit int32 `json:"connectionLimit"`
	// Superuser tells whether the role is a superuser.
	Superuser bool `json:"superuser"`
	// CreateDB tells whether the role may create databases.
	CreateDB bool `json:"createDB"`
	// CreateRole tells whether the role may create roles.
	CreateRole bool `json:"createRole"`
	// Inherit tells whether the role inherits the privileges of the roles
	// it is a member of.
	Inherit bool `json:"inherit"`
	// Replication tells whether the role may start streaming replication.
	Replication bool `json:"replication"`
	// BypassRLS tells whether the role bypasses row-level security.
	BypassRLS bool `json:"bypassRLS"`
}

// RoleStatus is the observed state of a Role.
type RoleStatus struct {
	// AtProvider is the role as the operator last observed it in
	// PostgreSQL, under every management policy; unset while there is
	// none.
	//
	// +optional
	AtProvider *RoleObservation `json:"atProvider,omitempty"`
	// Changes are the operator's last operations on the role in
	// PostgreSQL (create, update, delete, new password), oldest first.
	//
	// +optional
	Changes []changelog.Entry `json:"changes,omitempty"`
	// ObservedGeneration is the metadata.generation the status describes.
	//
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are the latest observations of the Role: Synced,
	// Available, and Ready, which summarises them.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// Role asks the postgres operator for a role in PostgreSQL.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=pgrole,categories=bosun
// +kubebuilder:printcolumn:name="Login",type=boolean,JSONPath=`.spec.login`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Role struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	//
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// Spec is the desired state.
	//
	// +optional
	Spec RoleSpec `json:"spec,omitempty"`
	// Status is the observed state, written by the operator.
	//
	// +optional
	Status RoleStatus `json:"status,omitempty"`
}

// GetConditions returns the status conditions, for the bosun engine.
func (r *Role) GetConditions() []metav1.Condition { return r.Status.Conditions }

// SetConditions replaces the status conditions, for the bosun engine.
func (r *Role) SetConditions(c []metav1.Condition) { r.Status.Conditions = c }

// GetChangeLog returns the change log, for the managed step.
func (r *Role) GetChangeLog() []changelog.Entry { return r.Status.Changes }

// SetChangeLog replaces the change log, for the managed step.
func (r *Role) SetChangeLog(l []changelog.Entry) { r.Status.Changes = l }

// RoleList is a list of Roles.
//
// +kubebuilder:object:root=true
type RoleList struct {
	metav1.TypeMeta `json:",inline"`
	// Standard list metadata.
	//
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// Items are the Roles.
	Items []Role `json:"items"`
}
