// Package rbaccheck holds what the examples' tests share to check an
// operator's least-privilege role: the ClusterRole controller-gen writes
// from the `+kubebuilder:rbac` markers (Role), its comparison with the
// rules the reconcilers derive from their steps (Compare, over Triples;
// see bosun.Reconciler.PolicyRules), and a manager run as a user that
// holds given rules and nothing else (RunAs).
//
// Each example that runs on the engine checks, in a test named
// TestRoleIsDerived, that its derived rules and its generated role grant
// the same, and, in TestRunsWithGeneratedRole, that the generated role
// grants all the controller needs through a whole lifecycle on a real API
// server; and, in its cmd package's TestRoleFlag, that the operator's
// --role prints that role byte for byte (PrintsRole):
//
//	func TestRoleIsDerived(t *testing.T) {
//		derived, err := NewReconciler().PolicyRules(scheme)
//		...
//		rbaccheck.Compare(t, rbaccheck.Role(t, rbaccheck.RoleFile).Rules, derived)
//	}
//
// Maturity: internal to bosun; it follows what the examples' tests need.
package rbaccheck
