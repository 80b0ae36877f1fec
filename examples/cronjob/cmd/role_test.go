package main

import (
	"testing"

	"github.com/bosunkit/bosun/examples/internal/rbaccheck"
)

// TestRoleFlag checks that --role prints the role in ../config/rbac, which
// controller-gen writes from the markers: the rules the steps declare are
// the rules the markers grant, in the same file.
func TestRoleFlag(t *testing.T) {
	rbaccheck.PrintsRole(t, options(), "../"+rbaccheck.RoleFile)
}
